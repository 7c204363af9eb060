/**
 * An Adam7-interlaced 16-bit RGBA PNG decodes to the right 8-bit RGBA: each sample's high byte, the
 * reduction the API applies to every 16-bit PNG (as its previous decoder did). The file is written
 * here from known samples, and the expectation is checked against squoosh's PNG decoder, a different
 * decoder, reading the same file at 16 bits. PNG output is lossless, so the answer's pixels must be
 * exactly those bytes.
 */
import { describe, expect, it } from 'vitest'
import { compress, okBytes } from '../helpers/api'
import { decode } from '../helpers/image'
import { writePng } from '../helpers/png'
import { referencePng16 } from '../helpers/reference'

/** Odd sizes, so every Adam7 pass has a partial last block. */
const WIDTH = 37
const HEIGHT = 23
/** Samples spread over 0-65535, alpha included (a multiplicative hash of the index). */
const samples = Array.from({ length: WIDTH * HEIGHT * 4 }, (_, i) => Math.imul(i + 1, 2654435761) >>> 16)

describe('interlaced 16-bit RGBA PNG', () => {
  it('is what a different decoder reads from the file', async () => {
    const png = await writePng({ width: WIDTH, height: HEIGHT, channels: 4, depth: 16, samples }, { interlaced: true })
    const reference = await referencePng16(png)
    expect(Array.from(reference.data)).toEqual(samples)
  })

  it('converts to PNG with every sample reduced to its high byte', async () => {
    const png = await writePng({ width: WIDTH, height: HEIGHT, channels: 4, depth: 16, samples }, { interlaced: true })
    const out = await decode(await okBytes(await compress(png, { format: 'png' }, { contentType: 'image/png' })))
    expect([out.image.width, out.image.height]).toEqual([WIDTH, HEIGHT])
    const expected = samples.map((sample) => sample >> 8)
    const transparent = (i: number) => expected[i - (i % 4) + 3] === 0
    // Colour under a fully transparent pixel is the encoder's to change (oxipng's alpha optimisation).
    const differing = expected.filter((sample, i) => !transparent(i) && out.image.data[i] !== sample).length
    expect(differing).toBe(0)
    expect(expected.some((_, i) => i % 4 === 3 && expected[i]! > 0 && expected[i]! < 255)).toBe(true)
  })
})
