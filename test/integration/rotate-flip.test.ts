/**
 * rotate and flip (src/pipeline/orientation.ts): composed with the EXIF turn into one orientation that the row pipeline
 * applies once. Lossless PNG in and out, so every pixel must be the source's pixel it maps to, exactly; sharp's
 * rotate(90) and flop-then-rotate (test/fixtures/transform/) pin the direction and the order (flip first, as Cloudflare).
 * A JPEG's EXIF turn comes first: exif-6.jpg rotated 90 must be its upright picture rotated 90.
 */
import { describe, expect, it } from 'vitest'
import { compress, expectProblem, okBytes } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import { decode, psnr } from '../helpers/image'

const source = () => fixture('transform/source.png')

async function answer(bytes: Uint8Array, query: Record<string, string | number | boolean>): Promise<ImageData> {
  return (await decode(await okBytes(await compress(bytes, { format: 'png', ...query })))).image
}

/** Pixel (x, y) of an output of `kind` comes from which source pixel, for a w x h source. */
const MAPS: Record<string, (x: number, y: number, w: number, h: number) => [number, number]> = {
  'rotate=90': (x, y, _w, h) => [y, h - 1 - x],
  'rotate=180': (x, y, w, h) => [w - 1 - x, h - 1 - y],
  'rotate=270': (x, y, w) => [w - 1 - y, x],
  'flip=h': (x, y, w) => [w - 1 - x, y],
  'flip=v': (x, y, _w, h) => [x, h - 1 - y],
  'flip=hv': (x, y, w, h) => [w - 1 - x, h - 1 - y],
}

describe('rotate and flip', () => {
  for (const [kind, map] of Object.entries(MAPS)) {
    it(`${kind} puts every pixel where it belongs`, async () => {
      const original = (await decode(source())).image
      const [name, value] = kind.split('=') as [string, string]
      const out = await answer(source(), { [name]: value })
      const turned = kind === 'rotate=90' || kind === 'rotate=270'
      expect([out.width, out.height]).toEqual(turned ? [original.height, original.width] : [original.width, original.height])
      let wrong = 0
      for (let y = 0; y < out.height; y++) {
        for (let x = 0; x < out.width; x++) {
          const [sx, sy] = map(x, y, original.width, original.height)
          const a = (y * out.width + x) * 4
          const b = (sy * original.width + sx) * 4
          for (let c = 0; c < 4; c++) if (out.data[a + c] !== original.data[b + c]) wrong++
        }
      }
      expect(wrong).toBe(0)
    })
  }

  it("turns clockwise, and flips before it turns, as sharp's rotate(90) and flop-then-rotate(90)", async () => {
    expect(psnr((await decode(fixture('transform/rotate-90.png'))).image, await answer(source(), { rotate: 90 }))).toBe(Number.POSITIVE_INFINITY)
    expect(psnr((await decode(fixture('transform/flip-h-rotate-90.png'))).image, await answer(source(), { rotate: 90, flip: 'h' }))).toBe(Number.POSITIVE_INFINITY)
  })

  it('turns after the EXIF orientation: exif-6.jpg with rotate=90 is its upright picture turned once', async () => {
    const upright = await answer(fixture('exif-6.jpg'), {})
    const out = await answer(fixture('exif-6.jpg'), { rotate: 90 })
    expect([out.width, out.height]).toEqual([upright.height, upright.width])
    let wrong = 0
    for (let y = 0; y < out.height; y++) {
      for (let x = 0; x < out.width; x++) {
        const [sx, sy] = MAPS['rotate=90']!(x, y, upright.width, upright.height)
        if (out.data[(y * out.width + x) * 4] !== upright.data[(sy * upright.width + sx) * 4]) wrong++
      }
    }
    expect(wrong).toBe(0)
  })

  it('sizes the turned image: width and height are those after the turn', async () => {
    const out = await answer(source(), { rotate: 90, width: 50 })
    expect([out.width, out.height]).toEqual([50, 80])
  })

  it('keeps the JPEG answer upright in any viewer (no orientation tag) and never answers with the input', async () => {
    const res = await compress(fixture('photo.jpg'), { rotate: 180 })
    expect(res.headers.get('x-original-returned')).toBeNull()
    const out = await decode(await okBytes(res))
    expect(out.header.orientation).toBe(1)
    expect([out.image.width, out.image.height]).toEqual([480, 300])
  })

  it('refuses other angles and flips with 400 invalid_option', async () => {
    for (const query of [{ rotate: 45 }, { rotate: -90 }, { flip: 'x' }] as Array<Record<string, string | number>>) await expectProblem(await compress(source(), query), 'invalid_option', 400)
  })
})

describe('dpr', () => {
  it('multiplies width and height', async () => {
    const out = await answer(source(), { width: 40, dpr: 2 })
    expect([out.width, out.height]).toEqual([80, 50])
    const both = await answer(source(), { width: 40, height: 40, fit: 'cover', dpr: 1.5 })
    expect([both.width, both.height]).toEqual([60, 60])
  })

  it('never makes the image larger than the input without enlarge', async () => {
    const out = await answer(source(), { width: 100, dpr: 3 })
    expect([out.width, out.height]).toEqual([160, 100])
    const enlarged = await answer(source(), { width: 100, dpr: 3, enlarge: true })
    expect([enlarged.width, enlarged.height]).toEqual([300, 188])
  })

  it('refuses a dpr outside 1-4 with 400 invalid_option', async () => {
    for (const dpr of [0.5, 5, 'x']) await expectProblem(await compress(source(), { width: 40, dpr }), 'invalid_option', 400)
  })
})
