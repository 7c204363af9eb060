/**
 * The transformations on an animation to animated WebP (src/pipeline/frames.ts): every frame through the same turn,
 * window and filters (rows.ts addTransforms), so the frames stay one size and in step.
 */
import { describe, expect, it } from 'vitest'
import { compress, okBytes } from '../helpers/api'
import { framesOf, webpAnimationChunks } from '../helpers/animation'
import { fixture } from '../helpers/fixtures'
import { readHeader } from '../../src/pipeline/sniff'

describe('transformations on every frame', () => {
  it('turns, trims and blurs every frame of anim.gif the same way', async () => {
    const input = fixture('anim.gif')
    const { width, height } = readHeader(input)
    const plain = framesOf(await okBytes(await compress(input, { format: 'webp', lossless: true }, { contentType: 'image/gif' })), 'webp')
    const res = await compress(input, { format: 'webp', rotate: 90, trim: '2;0;0;3', lossless: true }, { contentType: 'image/gif' })
    const bytes = await okBytes(res)
    expect(webpAnimationChunks(bytes).frames).toHaveLength(plain.length)
    const turned = framesOf(bytes, 'webp')
    for (const [i, frame] of turned.entries()) {
      expect([frame.image.width, frame.image.height]).toEqual([height - 2, width - 3])
      // output (x, y) of a quarter turn clockwise of the trimmed frame is its (y, h - 1 - x): compare a few pixels
      const source = plain[i]!.image
      for (const [x, y] of [[0, 0], [5, 7], [frame.image.width - 1, frame.image.height - 1]] as const) {
        const sx = 3 + y
        const sy = 2 + (height - 2 - 1 - x)
        expect([...frame.image.data.subarray((y * frame.image.width + x) * 4, (y * frame.image.width + x) * 4 + 4)], `frame ${i} (${x}, ${y})`).toEqual([
          ...source.data.subarray((sy * width + sx) * 4, (sy * width + sx) * 4 + 4),
        ])
      }
    }
    const blurred = framesOf(await okBytes(await compress(input, { format: 'webp', blur: 6, lossless: true }, { contentType: 'image/gif' })), 'webp')
    expect(blurred).toHaveLength(plain.length)
  })
})
