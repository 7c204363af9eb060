/**
 * brightness, contrast, gamma and saturation (wasm/lean/op_adjust.c), with Cloudflare's meaning: 1 leaves the image as it
 * is. Checked on flat colours, where each has one right answer.
 */
import { describe, expect, it } from 'vitest'
import { compress, expectProblem, okBytes } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import { decode, pixel, pngOf, psnr } from '../helpers/image'

/** A 4x1 PNG of these RGB colours. */
const swatches = (...colours: Array<[number, number, number]>) =>
  pngOf(new ImageData(new Uint8ClampedArray(colours.flatMap((c) => [...c, 255])), colours.length, 1))

async function adjusted(png: Uint8Array, query: Record<string, string | number>): Promise<number[][]> {
  const { image } = await decode(await okBytes(await compress(png, { format: 'png', ...query })))
  return Array.from({ length: image.width }, (_, x) => pixel(image, x, 0).slice(0, 3))
}

describe('colour adjustments', () => {
  it('brightness multiplies each colour', async () => {
    const png = await swatches([200, 100, 50], [20, 40, 60])
    expect(await adjusted(png, { brightness: 0.5 })).toEqual([[100, 50, 25], [10, 20, 30]])
    expect(await adjusted(png, { brightness: 2 })).toEqual([[255, 200, 100], [40, 80, 120]])
  })

  it('contrast stretches colours away from mid-grey', async () => {
    const png = await swatches([200, 100, 128])
    expect(await adjusted(png, { contrast: 2 })).toEqual([[255, 73, 129]])
    expect(await adjusted(png, { contrast: 0.5 })).toEqual([[164, 114, 128]])
  })

  it('gamma above 1 lightens, below 1 darkens, black and white stay', async () => {
    const png = await swatches([0, 64, 255])
    expect(await adjusted(png, { gamma: 2 })).toEqual([[0, 128, 255]])
    expect(await adjusted(png, { gamma: 0.5 })).toEqual([[0, 16, 255]])
  })

  it('saturation 0 makes grey, 2 doubles the distance from it', async () => {
    const png = await swatches([200, 100, 50])
    const [[r, g, b]] = (await adjusted(png, { saturation: 0 })) as [[number, number, number]]
    expect(r).toBe(g)
    expect(g).toBe(b)
    expect(r).toBe(124) // BT.601 luma of the swatch
    expect(await adjusted(png, { saturation: 2 })).toEqual([[255, 76, 0]])
  })

  it('1 for every factor leaves the pixels as they were', async () => {
    const photo = fixture('transform/source.png')
    const { image: original } = await decode(photo)
    const { image: out } = await decode(await okBytes(await compress(photo, { format: 'png', brightness: 1, contrast: 1, gamma: 1, saturation: 1 })))
    expect(psnr(original, out)).toBe(Number.POSITIVE_INFINITY)
  })

  it('refuses factors outside their range with 400 invalid_option', async () => {
    const photo = fixture('transform/source.png')
    for (const query of [{ brightness: -1 }, { contrast: 11 }, { gamma: 0 }, { saturation: 'x' }] as Array<Record<string, string | number>>) await expectProblem(await compress(photo, query), 'invalid_option', 400)
  })
})
