/**
 * GIF input through the row pipeline (wasm/lean/gif_dec.c, giflib): the first frame drawn on its
 * logical screen, row by row. Before it, omggif made the whole canvas in JavaScript and a 4 MP GIF to
 * PNG was refused (estimate 145 MiB); these check the pixels and that large GIFs now fit.
 */
import { describe, expect, it } from 'vitest'
import { compress, expectProblem, okBytes } from '../helpers/api'
import { writeGif } from '../helpers/gif'
import { decode, pixel } from '../helpers/image'
import { writePng } from '../helpers/png'

const estimate = (res: Response) => Number.parseInt(res.headers.get('x-memory-estimate') ?? '', 10)
const PALETTE: Array<[number, number, number]> = Array.from({ length: 16 }, (_, i) => [i * 16, 255 - i * 12, (i * 97) % 256])

/** The colour index at (x, y) of squares of 2^`shift` pixels in 16 colours. */
const squareAt = (x: number, y: number, shift: number) => ((x >> shift) + 3 * (y >> shift)) % 16

/** A `width` x `height` frame of squares of 2^`shift` pixels in 16 colours. */
function squares(width: number, height: number, shift: number): Uint8Array {
  const indices = new Uint8Array(width * height)
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) indices[y * width + x] = squareAt(x, y, shift)
  return indices
}

describe('a GIF is its first frame on its logical screen', () => {
  const frame = { left: 8, top: 4, width: 40, height: 37, indices: squares(40, 37, 3) }
  const gif = (interlaced: boolean) => writeGif({ screenWidth: 64, screenHeight: 48, palette: PALETTE, transparent: 15, frame: { ...frame, interlaced } })

  for (const interlaced of [false, true]) {
    it(`draws ${interlaced ? 'an interlaced' : 'a'} frame where it lies, transparent outside it and at its transparent index`, async () => {
      const out = await decode(await okBytes(await compress(gif(interlaced), { format: 'png', effort: 0 }, { contentType: 'image/gif' })))
      expect([out.format, out.image.width, out.image.height]).toEqual(['png', 64, 48])
      const wrong: string[] = []
      for (let y = 0; y < 48; y++) {
        for (let x = 0; x < 64; x++) {
          const inside = x >= frame.left && x < frame.left + frame.width && y >= frame.top && y < frame.top + frame.height
          const index = inside ? frame.indices[(y - frame.top) * frame.width + (x - frame.left)]! : 15
          const want = index === 15 ? [0, 0, 0, 0] : [...PALETTE[index]!, 255]
          const got = pixel(out.image, x, y)
          // Under a transparent pixel the colour is the encoder's to choose: compare alpha only.
          if (want[3] === 0 ? got[3] !== 0 : got.join() !== want.join()) wrong.push(`${x},${y}: ${got} not ${want}`)
        }
      }
      expect(wrong.slice(0, 5)).toEqual([])
    })
  }

  it('refuses an interlaced frame cut in its second pass with 422 corrupt_image', async () => {
    const whole = gif(true)
    await expectProblem(await compress(whole.slice(0, Math.floor(whole.length * 0.6)), undefined, { contentType: 'image/gif' }), 'corrupt_image', 422)
  })
})

describe('large GIFs stream', () => {
  // 2880x1800 (5.2 MP), a screenshot's size: the whole canvas as RGBA was 20 MiB before the encoder's own memory.
  const [width, height] = [2880, 1800]
  const big = writeGif({ screenWidth: width, screenHeight: height, palette: PALETTE, frame: { left: 0, top: 0, width, height, interlaced: false, indices: squares(width, height, 6) } })
  const at = [[0, 0], [1443, 901], [2879, 1799], [100, 1700]] as const
  const colourAt = (x: number, y: number) => PALETTE[squareAt(x, y, 6)]!

  it('converts a 2880x1800 GIF to PNG with every sampled pixel unchanged, within the budget', async () => {
    const res = await compress(big, { format: 'png', effort: 0 }, { contentType: 'image/gif' })
    const out = await decode(await okBytes(res))
    expect(estimate(res)).toBeLessThanOrEqual(120)
    expect([out.format, out.image.width, out.image.height]).toEqual(['png', width, height])
    for (const [x, y] of at) expect(pixel(out.image, x, y)).toEqual([...colourAt(x, y), 255])
  }, 60_000)

  it('converts it to JPEG, and to WebP 1600 px wide, exactly as the same pixels sent as a PNG', async () => {
    // The source is the only difference: the same rows into the same encoders give the same bytes.
    const samples = new Uint8Array(width * height * 3)
    for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) samples.set(colourAt(x, y), (y * width + x) * 3)
    const png = await writePng({ width, height, channels: 3, depth: 8, samples })
    for (const [query, size] of [[{ format: 'jpeg' }, [width, height]], [{ format: 'webp', width: 1600 }, [1600, 1000]]] as const) {
      const res = await compress(big, query, { contentType: 'image/gif' })
      const bytes = await okBytes(res)
      expect(estimate(res)).toBeLessThanOrEqual(120)
      const out = await decode(bytes)
      expect([out.format, out.image.width, out.image.height]).toEqual([query.format, ...size])
      expect(bytes).toEqual(await okBytes(await compress(png, query, { contentType: 'image/png' })))
    }
  }, 60_000)
})
