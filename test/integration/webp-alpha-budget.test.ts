/**
 * A lossy WebP of an image with transparency also holds libwebp's alpha plane (MEMORY_MODEL.webpAlpha):
 * a 4 MP RGBA PNG to WebP measured 155 MiB, over the isolate's 128, while the plan said 84. Whether the
 * pixels are transparent is known only once they are decoded (an RGBA file may be opaque), so the plan is
 * checked again before encoding.
 */
import { describe, expect, it } from 'vitest'
import { CODECS } from '../../src/codecs/registry'
import { compress, expectProblem, okBytes } from '../helpers/api'
import { decode } from '../helpers/image'

/** A 2304x1728 (4 MP) RGBA PNG of flat colour, transparent on its right half unless `opaque`. */
async function rgba(opaque: boolean): Promise<Uint8Array> {
  const [width, height] = [2304, 1728]
  const pixels = new Uint8ClampedArray(width * height * 4)
  for (let i = 0; i < width * height; i++) pixels.set([40, 120, 200, opaque || i % width < width / 2 ? 255 : 0], i * 4)
  return CODECS.png.encode!(new ImageData(pixels, width, height), { quality: 100, lossless: true, effort: 0 }).then(({ bytes }) => bytes)
}

describe('WebP of an image with transparency, within the memory budget', () => {
  it('refuses a 4 MP transparent image to lossy WebP with 422 before encoding, and serves the next request', async () => {
    const body = await expectProblem(await compress(await rgba(false), { format: 'webp' }, { contentType: 'image/png' }), 'operation_too_large', 422)
    expect(body.detail).toMatch(/transparency/)
    expect(body.estimateMiB as number).toBeGreaterThan(body.limit as number)
    const next = await compress(await rgba(false), { format: 'webp', width: 1000 }, { contentType: 'image/png' })
    const out = await decode(await okBytes(next))
    expect([out.format, out.image.width, out.image.height]).toEqual(['webp', 1000, 750])
  })

  it('converts the same image when its alpha is all opaque: no alpha plane', async () => {
    const res = await compress(await rgba(true), { format: 'webp' }, { contentType: 'image/png' })
    const out = await decode(await okBytes(res))
    expect([out.format, out.image.width, out.image.height]).toEqual(['webp', 2304, 1728])
    expect(Number.parseInt(res.headers.get('x-memory-estimate') ?? '', 10)).toBeLessThanOrEqual(120)
  })
})
