/**
 * Lossy PNG (wasm/lean/quant.c): format=png with quality or colors answers an indexed PNG (colour type 3, tRNS for
 * alpha), the fewest colours that reach the quality, dithered; smaller than the lossless PNG and close to the source.
 */
import { describe, expect, it } from 'vitest'
import { compress, expectProblem, okBytes } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import { decode, hasTransparency, pixel, psnr } from '../helpers/image'

const png = { contentType: 'image/png' }
const colourType = (bytes: Uint8Array) => bytes[25]
/** Entries in the PLTE chunk. */
function paletteEntries(bytes: Uint8Array): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  for (let at = 8; at + 12 <= bytes.length; at += 12 + view.getUint32(at)) {
    if (String.fromCharCode(...bytes.subarray(at + 4, at + 8)) === 'PLTE') return view.getUint32(at) / 3
  }
  return 0
}

describe('format=png with quality: a palette', () => {
  it('an RGBA artwork: indexed with tRNS, smaller than lossless, close to the source, transparency kept', async () => {
    const source = await decode(fixture('alpha.png'))
    const lossless = await okBytes(await compress(fixture('alpha.png'), { format: 'png', effort: 2 }, png))
    const res = await compress(fixture('alpha.png'), { format: 'png', quality: 80, effort: 2 }, png)
    const body = await okBytes(res)
    expect(colourType(body)).toBe(3)
    const colours = Number(res.headers.get('x-palette-colors'))
    expect(colours).toBeGreaterThan(1)
    expect(colours).toBeLessThanOrEqual(256)
    expect(paletteEntries(body)).toBeLessThanOrEqual(colours)
    expect(Number(res.headers.get('x-palette-quality'))).toBeGreaterThanOrEqual(0)
    expect(body.length).toBeLessThan(lossless.length * 0.8)
    const out = await decode(body)
    expect(hasTransparency(out.image)).toBe(true)
    expect(psnr(source.image, out.image, { alpha: true })).toBeGreaterThan(28)
  })

  it('a photo: the fewer colours the lower the quality asked, and the quality reached is said', async () => {
    const low = await compress(fixture('photo.png'), { format: 'png', quality: 30, effort: 0 }, png)
    const high = await compress(fixture('photo.png'), { format: 'png', quality: 90, effort: 0 }, png)
    const [lowBody, highBody] = [await okBytes(low), await okBytes(high)]
    expect(Number(low.headers.get('x-palette-colors'))).toBeLessThan(Number(high.headers.get('x-palette-colors')))
    expect(Number(low.headers.get('x-palette-quality'))).toBeGreaterThanOrEqual(30)
    expect(lowBody.length).toBeLessThan(highBody.length)
    const source = await decode(fixture('photo.png'))
    expect(psnr(source.image, (await decode(highBody)).image)).toBeGreaterThan(psnr(source.image, (await decode(lowBody)).image))
  })

  it('colors caps the palette', async () => {
    const res = await compress(fixture('photo.png'), { format: 'png', colors: 16, effort: 0 }, png)
    const body = await okBytes(res)
    expect(Number(res.headers.get('x-palette-colors'))).toBeLessThanOrEqual(16)
    expect(paletteEntries(body)).toBeLessThanOrEqual(16)
    // 16 colours fit in 4 bits per pixel.
    expect(body[24]).toBeLessThanOrEqual(4)
    const out = await decode(body)
    expect([out.image.width, out.image.height]).toEqual([480, 300])
  })

  it('a flat image needs few colours: its greys stay exact', async () => {
    const res = await compress(fixture('colour/broken-icc.png'), { format: 'png', quality: 95 }, png)
    const out = await decode(await okBytes(res))
    expect(Number(res.headers.get('x-palette-colors'))).toBeLessThanOrEqual(4)
    expect(pixel(out.image, 56, 8).slice(0, 3)).toEqual([128, 128, 128])
  })

  it('an animated WebP (its first frame, decoded whole): indexed, its palette said as for a still', async () => {
    const res = await compress(fixture('anim.webp'), { format: 'png', quality: 80 }, { contentType: 'image/webp' })
    const body = await okBytes(res)
    expect(colourType(body)).toBe(3)
    expect(Number(res.headers.get('x-frames-dropped'))).toBe(5)
    const colours = Number(res.headers.get('x-palette-colors'))
    expect(colours).toBeGreaterThan(1)
    expect(paletteEntries(body)).toBeLessThanOrEqual(colours)
    expect(res.headers.has('x-palette-quality')).toBe(true)
  })

  it('max_bytes on PNG lowers the palette until the answer fits', async () => {
    const lossless = await okBytes(await compress(fixture('photo.png'), { format: 'png', effort: 0 }, png))
    const limit = Math.floor(lossless.length / 3)
    const res = await compress(fixture('photo.png'), { format: 'png', effort: 0, max_bytes: limit }, png)
    const body = await okBytes(res)
    expect(body.length).toBeLessThanOrEqual(limit)
    expect(colourType(body)).toBe(3)
    expect(Number(res.headers.get('x-quality'))).toBeGreaterThan(0)
  })
})

describe('options that do not make sense are 400', () => {
  it('colors with WebP', async () => {
    await expectProblem(await compress(fixture('photo.png'), { format: 'webp', colors: 16 }, png), 'invalid_option', 400)
  })
  it('quality with lossless PNG', async () => {
    await expectProblem(await compress(fixture('photo.png'), { format: 'png', quality: 50, lossless: true }, png), 'invalid_option', 400)
  })
  it('colors outside 2-256', async () => {
    await expectProblem(await compress(fixture('photo.png'), { format: 'png', colors: 300 }, png), 'invalid_option', 400)
  })
})
