/**
 * gravity for fit=cover (src/pipeline/stages.ts, transform.ts placeCrop): the crop's window at a side, a corner or a
 * focal point, against sharp's answers for the same request (test/fixtures/transform/, made by
 * scripts/make-transform-references.mjs from its source.png). PNG output, so only the window and the resampler differ.
 *
 * Floor: the same window resampled by the two Lanczos3s scored 51.3-55.4 dB; a window 1.6 source pixels off (0.51x0.5
 * against the centre) 28.7 dB, the centre crop in place of the left one 19.8 dB.
 */
import { describe, expect, it } from 'vitest'
import { compress, expectProblem, okBytes } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import { decode, psnr } from '../helpers/image'

const FLOOR = 45

async function answer(query: Record<string, string | number>): Promise<ImageData> {
  return (await decode(await okBytes(await compress(fixture('transform/source.png'), { format: 'png', fit: 'cover', ...query })))).image
}

describe('gravity', () => {
  const cases: Array<[string, [number, number], string]> = [
    ['left', [40, 40], 'cover-40x40-left.png'],
    ['right', [40, 40], 'cover-40x40-right.png'],
    ['center', [40, 40], 'cover-40x40-center.png'],
    ['top', [80, 20], 'cover-80x20-top.png'],
    ['bottom', [80, 20], 'cover-80x20-bottom.png'],
    ['bottom-right', [80, 20], 'cover-80x20-bottom-right.png'],
    ['0.8x0.3', [50, 50], 'cover-50x50-0.8x0.3.png'],
  ]
  for (const [gravity, [width, height], reference] of cases) {
    it(`crops at ${gravity} as sharp's ${reference}`, async () => {
      const out = await answer({ width, height, gravity })
      const expected = (await decode(fixture(`transform/${reference}`))).image
      expect([out.width, out.height]).toEqual([width, height])
      const score = psnr(expected, out)
      expect(score, `PSNR ${score.toFixed(2)} dB`).toBeGreaterThan(FLOOR)
    })
  }

  it('places the window by the focal point, as far as the edges allow', async () => {
    // 0x0 and 1x1 are the corners: the same as left/top and right/bottom
    const topLeft = await answer({ width: 40, height: 40, gravity: '0x0' })
    const left = (await decode(fixture('transform/cover-40x40-left.png'))).image
    expect(psnr(left, topLeft)).toBeGreaterThan(FLOOR)
    const centre = await answer({ width: 40, height: 40, gravity: '0.5x0.5' })
    expect(psnr((await decode(fixture('transform/cover-40x40-center.png'))).image, centre)).toBeGreaterThan(FLOOR)
  })

  it('refuses a gravity it does not know, and a focal point outside the image, with 400 invalid_option', async () => {
    for (const gravity of ['north', '1.5x0.5', '0.5', 'x0.2', '-0.1x0.5']) {
      const problem = await expectProblem(await compress(fixture('transform/source.png'), { width: 40, height: 40, fit: 'cover', gravity }), 'invalid_option', 400)
      expect(problem.detail).toContain('gravity')
    }
  })
})
