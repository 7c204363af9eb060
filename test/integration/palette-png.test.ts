/**
 * Lossy PNG (wasm/lean/quant.c): format=png with quality or colors answers an indexed PNG (colour type 3, tRNS for
 * alpha), the fewest colours that reach the quality, dithered; smaller than the lossless PNG and close to the source.
 */
import { describe, expect, it } from 'vitest'
import { compress, expectProblem, okBytes } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import { colourDistance, decode, hasTransparency, pixel, pngOf, psnr, translucentPng } from '../helpers/image'

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

  it('a soft shadow keeps its levels of alpha', async () => {
    // Black from transparent to alpha 160 across, as a drop shadow's edge: each level of alpha is a colour to match.
    const source = await translucentPng(256, 32, (x) => [0, 0, 0, Math.round((x * 160) / 255)])
    const body = await okBytes(await compress(source, { format: 'png', quality: 90 }, png))
    expect(colourType(body)).toBe(3)
    const out = (await decode(body)).image
    let error = 0
    for (let i = 3; i < out.data.length; i += 4) error += Math.abs(out.data[i]! - Math.round((((i >> 2) % 256) * 160) / 255))
    expect(error / (out.data.length / 4)).toBeLessThan(2)
  })

  it('a colour few pixels have (text in a syntax colour) keeps its colour at quality 40', async () => {
    // A grainy gradient of thousands of colours (with 256 or fewer all are kept; without grain the input is smaller and
    // is answered), and six short strokes of colour, each 0.125 % of the pixels: too few to move the mean error.
    const strokes = [[220, 120, 120], [120, 200, 120], [120, 120, 230], [210, 210, 90], [90, 200, 210], [200, 100, 210]] as const
    const at = (x: number, y: number) => {
      const stroke = y % 40 === 10 || y % 40 === 11 ? strokes[Math.floor(y / 40)] : undefined
      return stroke && x >= 40 && x < 100 ? stroke : ([150 + (x >> 2), 150 + (y >> 2), 192 + (Math.imul(x * 977 + y, 2654435761) >>> 28)] as const)
    }
    const width = 400, height = 240
    const pixels = new Uint8ClampedArray(width * height * 4)
    for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) pixels.set([...at(x, y), 255], (y * width + x) * 4)
    const source = await pngOf(new ImageData(pixels, width, height))
    const body = await okBytes(await compress(source, { format: 'png', quality: 40 }, png))
    expect(colourType(body)).toBe(3)
    const out = (await decode(body)).image
    for (const [i, colour] of strokes.entries()) expect(colourDistance(pixel(out, 70, i * 40 + 10).slice(0, 3), colour)).toBeLessThan(20)
  })

  it('fully transparent pixels scattered through a nearly transparent area cost next to nothing', async () => {
    // A wallpaper's faint overlay: alpha 1, with a third of the pixels (at random) at alpha 0. Alpha 0 and 1 look the
    // same; giving each alpha-0 pixel its own entry would break every run of indices.
    const width = 256, height = 256
    const image = (scattered: boolean) => {
      const pixels = new Uint8ClampedArray(width * height * 4)
      for (let i = 0; i < width * height; i++) pixels.set([200, 100, 50, scattered && Math.imul(i, 2654435761) >>> 0 < 0x55555555 ? 0 : 1], i * 4)
      return pngOf(new ImageData(pixels, width, height))
    }
    const answer = async (source: Uint8Array) => okBytes(await compress(source, { format: 'png', quality: 80 }, png))
    const even = await answer(await image(false))
    const scattered = await answer(await image(true))
    expect(colourType(scattered)).toBe(3)
    expect(scattered.length).toBeLessThan(even.length * 2)
    const out = (await decode(scattered)).image
    for (let i = 3; i < out.data.length; i += 4) expect(out.data[i]).toBeLessThanOrEqual(1)
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
