/**
 * The row pipeline (wasm/lean/pipeline.c): PNG, JPEG and still WebP sources stream rows through the
 * turn, crop, resample, padding and flattening into the PNG writer, MozJPEG or libwebp. Before it, PNG
 * output held whole images (oxipng) and a 3840x2160 screenshot to PNG was refused (estimate 130 MiB);
 * these check that what comes out is the image that went in.
 */
import { describe, expect, it } from 'vitest'
import { compress, okBytes } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import { decode, pixel, psnr } from '../helpers/image'
import { screenshotSamples, withoutGamma, writePng } from '../helpers/png'

const estimate = (res: Response) => Number.parseInt(res.headers.get('x-memory-estimate') ?? '', 10)

/** A PNG's IHDR colour type (0 grey, 2 RGB, 3 palette, 4 grey + alpha, 6 RGBA). */
const colourType = (png: Uint8Array) => png[25]

describe('PNG output, row by row', () => {
  it('writes a 3840x2160 screenshot of few colours as a palette PNG with every pixel unchanged, within the budget', async () => {
    const samples = screenshotSamples(3840, 2160)
    const png = await writePng({ width: 3840, height: 2160, channels: 3, depth: 8, samples })
    const res = await compress(png, { format: 'png', effort: 0 }, { contentType: 'image/png' })
    const bytes = await okBytes(res)
    expect(estimate(res)).toBeLessThanOrEqual(120)
    expect(colourType(bytes)).toBe(3)
    const out = await decode(bytes)
    expect([out.format, out.image.width, out.image.height]).toEqual(['png', 3840, 2160])
    for (const [x, y] of [[0, 0], [1000, 30], [500, 100], [3839, 2159], [2000, 1500]] as const) {
      const i = (y * 3840 + x) * 3
      expect(pixel(out.image, x, y)).toEqual([samples[i], samples[i + 1], samples[i + 2], 255])
    }
  }, 60_000)

  it('keeps a grey PNG grey and an RGBA one RGBA, resized', async () => {
    const grey = await okBytes(await compress(fixture('basn0g16.png'), { format: 'png', width: 20, effort: 0 }, { contentType: 'image/png' }))
    expect(colourType(grey)).toBe(0)
    const rgba = await okBytes(await compress(fixture('basn6a08.png'), { format: 'png', width: 20, effort: 0 }, { contentType: 'image/png' }))
    expect(colourType(rgba)).toBe(6)
    const out = await decode(rgba)
    expect([out.image.width, out.image.height]).toEqual([20, 20])
    // basn6a08's alpha runs from transparent on the left to opaque on the right.
    expect(pixel(out.image, 0, 10)[3]!).toBeLessThan(40)
    expect(pixel(out.image, 19, 10)[3]!).toBeGreaterThan(215)
  })

  it('crops and pads a JPEG on its way to PNG as the geometry says', async () => {
    const source = (await decode(fixture('photo.jpg'))).image
    const contain = await compress(fixture('photo.jpg'), { format: 'png', width: 300, height: 300, fit: 'contain', background: '#ff0000', effort: 0 })
    const padded = (await decode(await okBytes(contain))).image
    expect([padded.width, padded.height]).toEqual([300, 300])
    // 480x300 into 300x300: 300x188 centred, red bars above and below, transparent for PNG.
    expect(pixel(padded, 150, 5)).toEqual([255, 0, 0, 0])
    expect(pixel(padded, 150, 150)[3]).toBe(255)
    const cover = await compress(fixture('photo.jpg'), { format: 'png', width: 300, height: 300, fit: 'cover', effort: 0 })
    const cropped = (await decode(await okBytes(cover))).image
    expect([cropped.width, cropped.height]).toEqual([300, 300])
    const reference = (await decode(await okBytes(await compress(fixture('photo.jpg'), { format: 'png', width: 300, height: 300, fit: 'cover', effort: 4 })))).image
    // oxipng at effort 4 gets the same pixels by the same row pipeline: lossless either way.
    expect(psnr(cropped, reference)).toBe(Number.POSITIVE_INFINITY)
    expect(source.width).toBe(480)
  })
})

describe('large answers', () => {
  it('answers a PNG of several MiB whole and intact: it is written out in parts of 1 MiB', async () => {
    const res = await compress(fixture('photo.jpg'), { format: 'png', width: 3000, enlarge: true, effort: 0 })
    const bytes = await okBytes(res)
    expect(bytes.length).toBeGreaterThan(3 * 1024 * 1024)
    expect(res.headers.get('content-length')).toBe(String(bytes.length))
    // The decoder checks every critical chunk's CRC: a part out of place or repeated would fail it.
    const out = await decode(bytes)
    expect([out.format, out.image.width, out.image.height]).toEqual(['png', 3000, 1875])
  }, 60_000)
})

describe('WebP output from rows', () => {
  it('carries alpha from a PNG into a lossy WebP, and flattens it for JPEG', async () => {
    const webp = (await decode(await okBytes(await compress(fixture('basn6a08.png'), { format: 'webp' }, { contentType: 'image/png' })))).image
    expect(pixel(webp, 0, 16)[3]!).toBeLessThan(20)
    expect(pixel(webp, 31, 16)[3]!).toBeGreaterThan(235)
    const jpeg = (await decode(await okBytes(await compress(fixture('basn6a08.png'), { format: 'jpeg', background: '#00ff00' }, { contentType: 'image/png' })))).image
    // The transparent left edge over green comes out green.
    const [r, g, b] = pixel(jpeg, 0, 16)
    expect(g!).toBeGreaterThan(200)
    expect(r! + b!).toBeLessThan(260)
  })

  it('writes a lossless WebP from PNG rows with every pixel unchanged', async () => {
    const png = withoutGamma(fixture('basn6a08.png'))
    const source = (await decode(png)).image
    const out = (await decode(await okBytes(await compress(png, { format: 'webp', lossless: true }, { contentType: 'image/png' })))).image
    // Colour under fully transparent pixels is libwebp's to choose; weighted by alpha, nothing changed.
    expect(psnr(source, out, { alpha: true })).toBe(Number.POSITIVE_INFINITY)
  })
})
