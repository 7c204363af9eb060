/**
 * Large AVIF output through our own encoder (wasm/lean/sink_avif.c): an image larger than one 768x768 cell is
 * written as an AVIF grid whose cells libaom encodes one after another, so its memory is one cell's.
 * The answers are decoded by the API's own AVIF decoder (libavif + dav1d, which reads grids) and
 * compared with the same resize written as PNG (lossless), so only the AVIF coding differs.
 */
import { describe, expect, it } from 'vitest'
import { compress, okBytes } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import { decode, psnr } from '../helpers/image'

const ascii = (bytes: Uint8Array, at: number) => String.fromCharCode(...bytes.subarray(at, at + 4))

/** The item types of an AVIF's iinf box (infe version 2/3: item_type after ID and protection index). */
function itemTypes(bytes: Uint8Array): string[] {
  const types: string[] = []
  for (let i = 4; i + 16 <= bytes.length; i++) {
    if (ascii(bytes, i) === 'infe' && (bytes[i + 4] === 2 || bytes[i + 4] === 3)) types.push(ascii(bytes, i + 12))
  }
  return types
}

/** av1C's seq_profile and chroma subsampling (see avif.test.ts). */
function av1Config(bytes: Uint8Array): { profile: number; subsamplingX: number; subsamplingY: number } {
  for (let i = 4; i + 8 <= bytes.length; i++) {
    if (ascii(bytes, i) === 'av1C') {
      const flags = bytes[i + 6]!
      return { profile: bytes[i + 5]! >> 5, subsamplingX: (flags >> 3) & 1, subsamplingY: (flags >> 2) & 1 }
    }
  }
  throw new Error('no av1C box')
}

describe('large AVIF output (grid of cells)', () => {
  it('answers a 2048-wide AVIF from a large JPEG: a 4:2:0 grid, the right size, close to the source', async () => {
    // large.jpg is 1200x750; a larger JPEG to 2048 px is decoded whole, and its lean decode and resize
    // (not the AVIF encoder) take it over the default budget (see docs/results/memory.md).
    const jpeg = fixture('large.jpg')
    const res = await compress(jpeg, { format: 'avif', width: 2048, enlarge: true })
    const body = await okBytes(res)
    expect(res.headers.get('content-type')).toBe('image/avif')
    expect([res.headers.get('x-output-width'), res.headers.get('x-output-height')]).toEqual(['2048', '1280'])
    // 3 x 2 cells of 684x640 under one grid item.
    const types = itemTypes(body)
    expect(types.filter((t) => t === 'grid')).toHaveLength(1)
    expect(types.filter((t) => t === 'av01')).toHaveLength(6)
    expect(av1Config(body)).toEqual({ profile: 0, subsamplingX: 1, subsamplingY: 1 })
    const out = await decode(body)
    expect(out.format).toBe('avif')
    expect([out.image.width, out.image.height]).toEqual([2048, 1280])
    const reference = await decode(await okBytes(await compress(jpeg, { format: 'png', width: 2048, enlarge: true })))
    // Quality 50 on this photo measured 35 dB; the floor sits under it.
    expect(psnr(reference.image, out.image)).toBeGreaterThan(32)
  })

  it('writes an odd-sized grid as 4:4:4 (a 4:2:0 grid must be even-sized) and keeps transparency', async () => {
    const res = await compress(fixture('alpha.png'), { format: 'avif', width: 2001, enlarge: true })
    const body = await okBytes(res)
    expect([res.headers.get('x-output-width'), res.headers.get('x-output-height')]).toEqual(['2001', '1251'])
    expect(av1Config(body)).toEqual({ profile: 1, subsamplingX: 0, subsamplingY: 0 })
    // A colour grid and an alpha grid, each of 3 x 2 cells.
    expect(itemTypes(body).filter((t) => t === 'grid')).toHaveLength(2)
    const out = await decode(body)
    expect([out.image.width, out.image.height]).toEqual([2001, 1251])
    const reference = await decode(await okBytes(await compress(fixture('alpha.png'), { format: 'png', width: 2001, enlarge: true })))
    expect(psnr(reference.image, out.image, { alpha: true })).toBeGreaterThan(30)
  })

  it('writes an odd-sized image of up to 2.1 MP whole, 4:2:0, with no grid', async () => {
    const res = await compress(fixture('alpha.png'), { format: 'avif', width: 1601, enlarge: true })
    const body = await okBytes(res)
    expect([res.headers.get('x-output-width'), res.headers.get('x-output-height')]).toEqual(['1601', '1001'])
    expect(av1Config(body)).toEqual({ profile: 0, subsamplingX: 1, subsamplingY: 1 })
    expect(itemTypes(body).filter((t) => t === 'grid')).toHaveLength(0)
    const out = await decode(body)
    const reference = await decode(await okBytes(await compress(fixture('alpha.png'), { format: 'png', width: 1601, enlarge: true })))
    expect(psnr(reference.image, out.image, { alpha: true })).toBeGreaterThan(30)
  })
})
