/**
 * The SSIMULACRA 2 score of the lean codec (wasm/lean/score.c) against the reference tool: each expected value below was
 * computed by libjxl's ssimulacra2 (cloudinary/ssimulacra2 at 81feacf, SSIMULACRA 2.1, built natively) on the same
 * files; ours blurs with an FIR Gaussian where it uses a recursive one, so they agree to within half a point on images of
 * a few hundred pixels (on a 64x64 one the two blurs' borders differ enough to part them by 10 points).
 */
import { describe, expect, it } from 'vitest'
import { leanCodec, MemoryCap } from '../../wasm'
import { fixture } from '../helpers/fixtures'
import { decode } from '../helpers/image'

const score = async (original: string, distorted: string) =>
  leanCodec(new MemoryCap(256 * 2 ** 20)).score((await decode(fixture(original))).image, (await decode(fixture(distorted))).image, false)

describe('SSIMULACRA 2 agrees with the reference tool', () => {
  it('a JPEG at quality 30 of the 480x300 photo: 44.32', async () => {
    expect(await score('photo.png', 'score/photo-q30.jpg')).toBeCloseTo(44.32, 0)
  })

  it('a WebP at quality 60 of it: 60.47', async () => {
    expect(await score('photo.png', 'score/photo-q60.webp')).toBeCloseTo(60.47, 0)
  })

  it('an image against itself is 100', async () => {
    expect(await score('photo.png', 'photo.png')).toBe(100)
  })

  it('images of different sizes are refused', async () => {
    const lean = leanCodec(new MemoryCap(64 * 2 ** 20))
    expect(() => lean.score(new ImageData(16, 16), new ImageData(16, 8), false)).toThrow(/different sizes/)
  })
})
