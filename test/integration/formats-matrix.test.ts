/**
 * Every input fixture to every output format, through the real worker: status, type, sniffed format,
 * dimensions, and pixels close to the decoded input.
 *
 * Reference pixels: the input decoded by the project's own decoder (what the API itself starts from).
 * For an input with transparency the comparison is premultiplied RGB + alpha (see `psnr`), except for
 * JPEG output, which has no alpha: there the reference is the input composited over the default
 * background (white).
 *
 * PSNR floors (dB) for lossy outputs at their default quality (JPEG 80, WebP 80, AVIF 50 with
 * effort=0). Measured with the pinned codecs: worst photo input JPEG 31.2, WebP 31.1, AVIF 29.2
 * (all from photo.png; re-encoding a lossy input scores higher); the synthetic 32x32 PngSuite images
 * score 28.1 / 28.4 / 27.3 on basn3p08 (palette test pattern with hard colour edges, the worst case
 * for block transforms) and 30-45 otherwise. The floors sit 1.5-3 dB under the worst measured value
 * of their class, so a codec update does not break them, while real faults (wrong channel order,
 * rows shifted, quality ignored and set to minimum, alpha lost) drop far below 20 dB.
 *
 * PNG output is lossless, and the reference is the same decoder's 8-bit RGBA (16-bit inputs are
 * reduced to 8 bits by the decoder before the API sees them), so every visible pixel must be
 * identical: PSNR = Infinity. Colour under fully transparent pixels is not compared (oxipng's alpha
 * optimisation is allowed to change it).
 */
import { describe, expect, it } from 'vitest'
import type { OutputFormat } from '../../src/codecs/registry'
import { MIME, compress, contentTypeFor, okBytes } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import { type Decoded, decode, flattenOver, hasTransparency, psnr } from '../helpers/image'
import { withoutGamma } from '../helpers/png'

/** The input as sent: PngSuite's gamma 1.0 left out, so its decoded pixels are the expected ones (helpers/png.ts). */
const input = (name: string) => (name.endsWith('.png') ? withoutGamma(fixture(name)) : fixture(name))

/** Input fixtures with their stored size (test/fixtures/README.md). */
const INPUTS: Record<string, { width: number; height: number; synthetic?: boolean }> = {
  'photo.jpg': { width: 480, height: 300 },
  'progressive.jpg': { width: 480, height: 300 },
  'photo.png': { width: 480, height: 300 },
  'photo.webp': { width: 480, height: 300 },
  'photo.avif': { width: 480, height: 300 },
  'alpha.png': { width: 320, height: 200 },
  'alpha.gif': { width: 256, height: 256 },
  'anim.gif': { width: 370, height: 285 },
  'basn0g16.png': { width: 32, height: 32, synthetic: true },
  'basn3p08.png': { width: 32, height: 32, synthetic: true },
  'basi6a08.png': { width: 32, height: 32, synthetic: true },
  'basn6a16.png': { width: 32, height: 32, synthetic: true },
}

const OUTPUTS: OutputFormat[] = ['jpeg', 'png', 'webp', 'avif']

const FLOOR: Record<OutputFormat, { photo: number; synthetic: number }> = {
  jpeg: { photo: 29, synthetic: 26 },
  webp: { photo: 29, synthetic: 26 },
  avif: { photo: 27, synthetic: 25 },
  png: { photo: Number.POSITIVE_INFINITY, synthetic: Number.POSITIVE_INFINITY },
}

const WHITE = [255, 255, 255] as const

const sources = new Map<string, Promise<Decoded>>()
const source = (name: string): Promise<Decoded> => {
  if (!sources.has(name)) sources.set(name, decode(input(name)))
  return sources.get(name)!
}

describe('formats matrix', () => {
  for (const [name, size] of Object.entries(INPUTS)) {
    it(`decodes the ${name} fixture at its documented size`, async () => {
      const { image } = await source(name)
      expect([image.width, image.height]).toEqual([size.width, size.height])
    })

    for (const format of OUTPUTS) {
      it(`converts ${name} to ${format} at the same size and close to the input`, async () => {
        const res = await compress(input(name), { format, ...(format === 'avif' ? { effort: 0 } : {}) }, {
          contentType: contentTypeFor(name),
        })
        const body = await okBytes(res)
        expect(res.headers.get('content-type')).toBe(MIME[format])

        const out = await decode(body)
        expect(out.format).toBe(format)
        expect([out.image.width, out.image.height]).toEqual([size.width, size.height])

        const src = (await source(name)).image
        const transparent = hasTransparency(src)
        const score =
          format === 'jpeg'
            ? psnr(transparent ? flattenOver(src, WHITE) : src, out.image)
            : psnr(src, out.image, { alpha: transparent })
        const floor = FLOOR[format][size.synthetic ? 'synthetic' : 'photo']
        if (floor === Number.POSITIVE_INFINITY) expect(score, 'lossless output differs from the input').toBe(floor)
        else expect(score, `PSNR ${score.toFixed(2)} dB under the ${floor} dB floor`).toBeGreaterThan(floor)
        // An output format with alpha keeps transparency; JPEG output is always opaque.
        expect(hasTransparency(out.image)).toBe(format === 'jpeg' ? false : transparent)
      })
    }
  }
})
