/**
 * AVIF input through the row pipeline (wasm/lean/avif_dec.c): libavif + dav1d decode the YUV planes,
 * and RGBA rows are made from them a band of 64 rows at a time. Before it, jSquash's whole-image decoder
 * took 19 MiB per MP plus 24, and no AVIF of 4 MP or more converted. These check the pixels (band edges
 * included) and that a large AVIF now fits.
 */
import { describe, expect, it } from 'vitest'
import { CODECS } from '../../src/codecs/registry'
import { readHeader } from '../../src/pipeline/sniff'
import { compress, okBytes } from '../helpers/api'
import { decode, psnr } from '../helpers/image'

const estimate = (res: Response) => Number.parseInt(res.headers.get('x-memory-estimate') ?? '', 10)

/** RGBA gradients, with hard edges every 32 px unless `smooth`, `width` x `height`, opaque unless `alpha`. */
function scene(width: number, height: number, alpha = false, smooth = false): ImageData {
  const data = new Uint8ClampedArray(width * height * 4)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const edge = !smooth && ((x >> 5) + (y >> 5)) % 7 === 0 ? 60 : 0
      data.set([(x * 255) / width, (y * 255) / height, edge + ((x + y) % 97), alpha ? 255 - ((x * 200) / width | 0) : 255], (y * width + x) * 4)
    }
  }
  return new ImageData(data, width, height)
}

/** PSNR of each row of `a` against `b`, in dB. */
function rowPsnr(a: ImageData, b: ImageData): number[] {
  const rows: number[] = []
  for (let y = 0; y < a.height; y++) {
    let sum = 0
    for (let i = y * a.width * 4; i < (y + 1) * a.width * 4; i++) if (i % 4 !== 3) sum += (a.data[i]! - b.data[i]!) ** 2
    const mse = sum / (a.width * 3)
    rows.push(mse === 0 ? Number.POSITIVE_INFINITY : 10 * Math.log10((255 * 255) / mse))
  }
  return rows
}

describe('AVIF input, band by band', () => {
  it('gives back every pixel of a lossless AVIF (4:4:4, with alpha) over several bands', async () => {
    const source = scene(300, 211, true)
    const avif = await CODECS.avif.encode!(source, { quality: 100, lossless: true, effort: 0 }).then(({ bytes }) => bytes)
    expect(readHeader(avif).chroma).toBe('444')
    const out = await decode(await okBytes(await compress(avif, { format: 'png', effort: 0 }, { contentType: 'image/avif' })))
    expect([out.image.width, out.image.height]).toEqual([300, 211])
    expect(psnr(out.image, source, { alpha: true })).toBe(Number.POSITIVE_INFINITY)
  })

  it('makes rows of a lossy 4:2:0 AVIF with no seam where one band of rows meets the next', async () => {
    // Smooth, so that every row is as hard to code as the next and a seam would stand out.
    const source = scene(320, 300, false, true)
    const avif = await CODECS.avif.encode!(source, { quality: 80, lossless: false, effort: 4 }).then(({ bytes }) => bytes)
    expect(readHeader(avif).chroma).toBe('420')
    const out = await decode(await okBytes(await compress(avif, { format: 'png', effort: 0 }, { contentType: 'image/avif' })))
    const rows = rowPsnr(out.image, source)
    const sorted = [...rows].sort((a, b) => a - b)
    const median = sorted[rows.length >> 1]!
    expect(median).toBeGreaterThan(32)
    // The rows either side of each band edge (64, 128, ...) are as close to the source as the rest.
    for (const y of [62, 63, 64, 65, 126, 127, 128, 129, 190, 191, 192, 193, 254, 255, 256, 257]) expect(rows[y]!, `row ${y}`).toBeGreaterThan(median - 4)
  })
})

describe('large AVIFs stream', () => {
  // 2880x1800 (5.2 MP): jSquash's decoder was estimated at 123 MiB for it alone.
  const source = scene(2880, 1800)
  const avif = CODECS.avif.encode!(source, { quality: 60, lossless: false, effort: 0 }).then(({ bytes }) => bytes)

  for (const [query, size] of [
    [{ format: 'jpeg' }, [2880, 1800]],
    [{ format: 'webp', width: 1600 }, [1600, 1000]],
    [{ format: 'png', effort: 0 }, [2880, 1800]],
  ] as const) {
    it(`converts a 2880x1800 AVIF to ${query.format}${'width' in query ? ` ${query.width} px wide` : ''} within the budget, close to the source`, async () => {
      const res = await compress(await avif, query, { contentType: 'image/avif' })
      const out = await decode(await okBytes(res))
      expect(estimate(res)).toBeLessThanOrEqual(120)
      expect([out.format, out.image.width, out.image.height]).toEqual([query.format, ...size])
      if (size[0] === 2880) expect(psnr(out.image, source)).toBeGreaterThan(30)
    }, 60_000)
  }
})
