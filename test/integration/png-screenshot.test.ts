/**
 * A laptop screenshot (2880x1800 PNG) converts to WebP. Before PNG input went through the lean
 * codec's libpng, the memory model charged squoosh's decoder 16 MiB per megapixel and this request
 * was refused (422 operation_too_large, estimate about 140 MiB of 120). The PNG is made here from
 * flat panels and lines of "text", so it compresses to well under the tests' 1 MiB body limit.
 */
import { describe, expect, it } from 'vitest'
import { compress, MIME, okBytes } from '../helpers/api'
import { decode, pixel } from '../helpers/image'
import { screenshotSamples, writePng } from '../helpers/png'

const WIDTH = 2880
const HEIGHT = 1800

const screenshot = (width = WIDTH, height = HEIGHT) => screenshotSamples(width, height)

describe('a 2880x1800 screenshot PNG', () => {
  it('converts to WebP at its size (it was refused for memory before)', async () => {
    const png = await writePng({ width: WIDTH, height: HEIGHT, channels: 3, depth: 8, samples: screenshot() })
    expect(png.length).toBeLessThan(1024 * 1024)
    const res = await compress(png, { format: 'webp' }, { contentType: 'image/png' })
    const out = await decode(await okBytes(res))
    expect(res.headers.get('content-type')).toBe(MIME.webp)
    expect([out.image.width, out.image.height]).toEqual([WIDTH, HEIGHT])
    expect([res.headers.get('x-output-width'), res.headers.get('x-output-height')]).toEqual([String(WIDTH), String(HEIGHT)])
    // The title bar's bluish grey and the page's white survive (lossy: within a few levels).
    const [r, , b] = pixel(out.image, 1000, 30)
    expect(b! - r!).toBeGreaterThan(8)
    expect(pixel(out.image, 2700, 1700).slice(0, 3).every((v) => v > 245)).toBe(true)
  }, 60_000)
})

describe('a 3840x2160 (4K) screenshot PNG', () => {
  // Refused until the model charged a PNG's file rather than a photo's per pixel (estimate 157 MiB; measured 72).
  for (const format of ['webp', 'jpeg'] as const) {
    it(`converts to ${format} at its size`, async () => {
      const png = await writePng({ width: 3840, height: 2160, channels: 3, depth: 8, samples: screenshot(3840, 2160) })
      expect(png.length).toBeLessThan(1024 * 1024)
      const res = await compress(png, { format }, { contentType: 'image/png' })
      const out = await decode(await okBytes(res))
      expect([out.format, out.image.width, out.image.height]).toEqual([format, 3840, 2160])
      expect(Number.parseInt(res.headers.get('x-memory-estimate') ?? '', 10)).toBeLessThanOrEqual(120)
    }, 60_000)
  }
})
