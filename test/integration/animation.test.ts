/**
 * Animations to animated WebP (src/pipeline/frames.ts): every frame of a GIF or an animated WebP, composited as a
 * viewer shows it, with its delay and the loop count. The answers are read as their chunks (frame count, durations,
 * loop) and decoded by libwebp's animation decoder to compare every frame with what the input shows.
 */
import { describe, expect, it } from 'vitest'
import { compress, expectProblem, okBytes } from '../helpers/api'
import { framesOf, webpAnimationChunks, webpIcc } from '../helpers/animation'
import { fixture } from '../helpers/fixtures'
import { type AnimatedGifFrame, writeAnimatedGif } from '../helpers/gif'
import { firstFrame } from '../../src/codecs/webp-frame'
import { concat, prng, riffChunk } from '../helpers/hostile'
import { decode, psnr } from '../helpers/image'
import { callWorker } from '../helpers/worker'

const gif = { contentType: 'image/gif' }
const webp = { contentType: 'image/webp' }

const RED = [220, 30, 30] as const
const GREEN = [30, 200, 60] as const
const BLUE = [40, 60, 230] as const
const PALETTE = [RED, GREEN, BLUE, [255, 255, 255] as const]
const CLEAR = 3

const filled = (width: number, height: number, index: number) => new Uint8Array(width * height).fill(index)

/**
 * Six frames on a 32x24 screen, one for each rule a viewer applies: a full red frame (delay 0: shown 100 ms, left);
 * a green square whose left half is the transparent index (50 ms, then cleared to transparent); an interlaced square
 * of blue and green rows (200 ms, then the canvas under it restored); a small green square (100 ms, left); a blue
 * square with disposal 4, which browsers take as restore (30 ms); a green square (70 ms). No looping extension: it plays once.
 */
function rulesGif(): { bytes: Uint8Array; expected: Array<Array<readonly [number, number, number] | 'clear'>> } {
  const square = filled(8, 8, 1)
  for (let y = 0; y < 8; y++) square.fill(CLEAR, y * 8, y * 8 + 4)
  const striped = Uint8Array.from({ length: 64 }, (_, i) => (Math.floor(i / 8) % 2 === 0 ? 2 : 1))
  const frames: AnimatedGifFrame[] = [
    { left: 0, top: 0, width: 32, height: 24, interlaced: false, indices: filled(32, 24, 0), delay: 0, dispose: 1 },
    { left: 4, top: 4, width: 8, height: 8, interlaced: false, indices: square, delay: 5, dispose: 2, transparent: CLEAR },
    { left: 16, top: 8, width: 8, height: 8, interlaced: true, indices: striped, delay: 20, dispose: 3 },
    { left: 0, top: 0, width: 4, height: 4, interlaced: false, indices: filled(4, 4, 1), delay: 10, dispose: 0 },
    { left: 24, top: 16, width: 8, height: 8, interlaced: false, indices: filled(8, 8, 2), delay: 3, dispose: 4 },
    { left: 0, top: 20, width: 4, height: 4, interlaced: false, indices: filled(4, 4, 1), delay: 7, dispose: 0 },
  ]
  const at = (x: number, y: number, l: number, t: number, w: number, h: number) => x >= l && x < l + w && y >= t && y < t + h
  const canvas = (frame: number) =>
    Array.from({ length: 24 * 32 }, (_, i): readonly [number, number, number] | 'clear' => {
      const [x, y] = [i % 32, Math.floor(i / 32)]
      if (frame === 0) return RED
      if (frame === 1) return at(x, y, 8, 4, 4, 8) ? GREEN : RED
      if (at(x, y, 4, 4, 8, 8)) return 'clear'
      if (frame === 2) return at(x, y, 16, 8, 8, 8) ? ((y - 8) % 2 === 0 ? BLUE : GREEN) : RED
      if (at(x, y, 0, 0, 4, 4)) return GREEN
      if (frame === 4 && at(x, y, 24, 16, 8, 8)) return BLUE
      if (frame === 5 && at(x, y, 0, 20, 4, 4)) return GREEN
      return RED
    })
  return { bytes: writeAnimatedGif({ screenWidth: 32, screenHeight: 24, palette: PALETTE, frames }), expected: [0, 1, 2, 3, 4, 5].map(canvas) }
}

/** Pixels of `image` that differ from `expected` (colour compared only where opaque). */
function differences(image: ImageData, expected: Array<readonly [number, number, number] | 'clear'>): string[] {
  const wrong: string[] = []
  expected.forEach((want, i) => {
    const got = Array.from(image.data.subarray(i * 4, i * 4 + 4))
    const ok = want === 'clear' ? got[3] === 0 : got[3] === 255 && want.every((c, k) => c === got[k])
    if (!ok && wrong.length < 5) wrong.push(`(${i % image.width},${Math.floor(i / image.width)}) ${got} want ${want}`)
  })
  return wrong
}

describe('an animated GIF to WebP keeps every frame', () => {
  it('anim.gif (10 frames): an animated WebP, every frame close to the GIF\'s, delays kept, NETSCAPE loop 2 played 3 times', async () => {
    const input = fixture('anim.gif')
    const res = await compress(input, { format: 'webp' }, gif)
    const body = await okBytes(res)
    expect(res.headers.get('content-type')).toBe('image/webp')
    expect(res.headers.get('x-frames')).toBe('10')
    expect(res.headers.get('x-frames-dropped')).toBeNull()
    const chunks = webpAnimationChunks(body)
    expect([chunks.canvasWidth, chunks.canvasHeight, chunks.loop]).toEqual([370, 285, 3])
    const shown = framesOf(body, 'webp')
    expect(shown.map((f) => f.duration)).toEqual([...Array(9).fill(3000), 15000])
    const source = framesOf(input, 'gif', 370, 285)
    expect(source).toHaveLength(10)
    shown.forEach((frame, i) => expect(psnr(frame.image, source[i]!.image, { alpha: true }), `frame ${i}`).toBeGreaterThan(29.5))
  })

  it('composites as a viewer does: transparent index, disposal to background, to previous (3 and 4), offsets, interlacing; delay 0 shows 100 ms; no loop extension plays once', async () => {
    const { bytes, expected } = rulesGif()
    const body = await okBytes(await compress(bytes, { format: 'webp', lossless: true }, gif))
    const chunks = webpAnimationChunks(body)
    expect(chunks.loop).toBe(1)
    expect(chunks.frames.every((f) => f.bitstream === 'VP8L')).toBe(true)
    const shown = framesOf(body, 'webp')
    expect(shown.map((f) => f.duration)).toEqual([100, 50, 200, 100, 30, 70])
    shown.forEach((frame, i) => expect(differences(frame.image, expected[i]!), `frame ${i}`).toEqual([]))
  })

  it('resizes every frame (width=100): the canvas and each frame at the new size', async () => {
    const res = await compress(fixture('anim.gif'), { format: 'webp', width: 100 }, gif)
    const body = await okBytes(res)
    expect([res.headers.get('x-output-width'), res.headers.get('x-output-height')]).toEqual(['100', '77'])
    const shown = framesOf(body, 'webp')
    expect(shown).toHaveLength(10)
    for (const frame of shown) expect([frame.image.width, frame.image.height]).toEqual([100, 77])
  })

  it('quality applies to every frame: quality 30 is smaller than quality 95', async () => {
    const [low, high] = await Promise.all([30, 95].map(async (quality) => (await okBytes(await compress(fixture('anim.webp'), { format: 'webp', quality }, webp))).length))
    expect(low!).toBeLessThan(high!)
  })

  it('line art (anim.gif, 0.007 bytes a pixel: flat colour), whose first frame is smaller lossless, comes back lossless: smaller than the GIF, every frame exact; with a quality given, lossy', async () => {
    const input = fixture('anim.gif')
    const body = await okBytes(await compress(input, { format: 'webp' }, gif))
    expect(webpAnimationChunks(body).frames.every((f) => f.bitstream === 'VP8L')).toBe(true)
    expect(body.length).toBeLessThan(input.length)
    const lossy = await okBytes(await compress(input, { format: 'webp', quality: 80 }, gif))
    expect(webpAnimationChunks(lossy).frames.every((f) => f.bitstream === 'VP8 ')).toBe(true)
    expect(lossy.length).toBeGreaterThan(body.length)
    const source = framesOf(input, 'gif', 370, 285)
    framesOf(body, 'webp').forEach((frame, i) => expect(psnr(frame.image, source[i]!.image, { alpha: true }), `frame ${i}`).toBe(Number.POSITIVE_INFINITY))
  })

  it('a photographic GIF (noise on a smooth palette) stays lossy', async () => {
    const random = prng(7)
    const palette = Array.from({ length: 256 }, (_, i) => [i, (i * 3) % 256, 255 - i] as const)
    const frames = Array.from({ length: 3 }, () => ({ left: 0, top: 0, width: 64, height: 64, interlaced: false, indices: Array.from({ length: 64 * 64 }, () => Math.floor(random() * 256)), delay: 10 }))
    const body = await okBytes(await compress(writeAnimatedGif({ screenWidth: 64, screenHeight: 64, palette, frames }), { format: 'webp' }, gif))
    expect(webpAnimationChunks(body).frames.map((f) => f.bitstream)).toEqual(['VP8 ', 'VP8 ', 'VP8 '])
  })

  it('caps the effort by the animation\'s pixels in all (frames x output): 10 frames of 600x462 at effort 9 are encoded at 5, one at 9', async () => {
    const effort = async (animated: boolean) =>
      (await compress(fixture('anim.gif'), { format: 'webp', effort: 9, width: 600, enlarge: true, animated }, gif)).headers.get('x-effort')
    expect(await effort(true)).toBe('5')
    expect(await effort(false)).toBe('9')
  })

  it('format=auto from a browser that takes AVIF and WebP answers an animated WebP, not a first-frame AVIF', async () => {
    const res = await compress(fixture('anim.gif'), { format: 'auto' }, { ...gif, headers: { accept: 'image/avif,image/webp,image/apng,*/*;q=0.8' } })
    const body = await okBytes(res)
    expect(res.headers.get('x-output-format')).toBe('webp')
    expect(webpAnimationChunks(body).frames).toHaveLength(10)
  })

  it('animated=false keeps the first frame only (X-Frames-Dropped), as PNG output does', async () => {
    for (const query of [{ format: 'webp', animated: false }, { format: 'png' }] as Array<Record<string, string | boolean>>) {
      const res = await compress(fixture('anim.gif'), query, gif)
      const out = await decode(await okBytes(res))
      expect(res.headers.get('x-frames-dropped')).toBe('9')
      expect(res.headers.get('x-frames')).toBeNull()
      expect(out.header.frames).toBe(1)
    }
  })

  it('the JSON answer says how many frames it has', async () => {
    const res = await compress(fixture('anim.gif'), { format: 'webp', response: 'json' }, gif)
    const json = (await res.json()) as { frames: number; framesDropped: number }
    expect([json.frames, json.framesDropped]).toEqual([10, 0])
  })
})

describe('an animated WebP stays animated', () => {
  it('anim.webp (6 frames of 100 ms, looping forever) by default: every frame close to the input\'s', async () => {
    const input = fixture('anim.webp')
    const res = await compress(input, undefined, webp)
    const body = await okBytes(res)
    expect(res.headers.get('x-frames')).toBe('6')
    const chunks = webpAnimationChunks(body)
    expect([chunks.canvasWidth, chunks.canvasHeight, chunks.loop]).toEqual([200, 200, 0])
    const shown = framesOf(body, 'webp')
    const source = framesOf(input, 'webp')
    expect(shown.map((f) => f.duration)).toEqual(source.map((f) => f.duration))
    shown.forEach((frame, i) => expect(psnr(frame.image, source[i]!.image, { alpha: true }), `frame ${i}`).toBeGreaterThan(29.5))
  })
})

/**
 * `webp` carrying `icc`: its VP8X chunk (made for a simple WebP of `width` x `height`, with the alpha flag) with the ICC
 * flag set, and an ICCP chunk after it, as the container wants.
 */
function withIcc(webp: Uint8Array, icc: Uint8Array, width = 0, height = 0): Uint8Array {
  const u24 = (n: number) => [n & 255, (n >> 8) & 255, (n >> 16) & 255]
  const extended = String.fromCharCode(...webp.subarray(12, 16)) === 'VP8X'
  const vp8x = extended ? webp.slice(12, 30) : riffChunk('VP8X', Uint8Array.from([0x10, 0, 0, 0, ...u24(width - 1), ...u24(height - 1)]))
  vp8x[8] = vp8x[8]! | 0x20
  const rest = webp.subarray(extended ? 30 : 12)
  return riffChunk('RIFF', concat(Uint8Array.from([...'WEBP'].map((c) => c.charCodeAt(0))), vp8x, riffChunk('ICCP', icc), rest))
}

describe('an animated WebP with an ICC profile', () => {
  it('has every frame converted to sRGB, as a still WebP with the same profile is: frame 0 matches the still path', async () => {
    const icc = webpIcc(fixture('colour/p3.webp'))
    // red, green and blue frames (rulesGif) as a lossless animated WebP, then given a Display P3 profile
    const animated = await okBytes(await compress(rulesGif().bytes, { format: 'webp', lossless: true }, gif))
    const body = await okBytes(await compress(withIcc(animated, icc), { format: 'webp', lossless: true }, webp))
    const shown = framesOf(body, 'webp')
    expect(shown).toHaveLength(6)
    // the first frame alone, as a still WebP with the same profile, through the row pipeline's colour stage
    const frame = firstFrame(animated)!
    const still = await decode(await okBytes(await compress(withIcc(frame.still, icc, frame.width, frame.height), { format: 'png' }, webp)))
    const raw = framesOf(animated, 'webp')[0]!.image
    expect(psnr(shown[0]!.image, still.image, { alpha: true })).toBeGreaterThan(45)
    expect(psnr(raw, still.image, { alpha: true })).toBeLessThan(35)
  })
})

describe('quality=auto and max_bytes on an animation', () => {
  it('max_bytes lowers the quality of every frame until the animation fits, still animated', async () => {
    const res = await compress(fixture('anim.webp'), { format: 'webp', max_bytes: 9000 }, webp)
    const body = await okBytes(res)
    expect(body.length).toBeLessThanOrEqual(9000)
    expect(Number(res.headers.get('x-quality'))).toBeLessThan(80)
    expect(webpAnimationChunks(body).frames).toHaveLength(6)
  })

  it('quality=auto chooses on the first frame and encodes every frame at that quality', async () => {
    const res = await compress(fixture('anim.webp'), { format: 'webp', quality: 'auto' }, webp)
    const body = await okBytes(res)
    expect(Number(res.headers.get('x-quality'))).toBeGreaterThan(0)
    expect(Number(res.headers.get('x-score'))).toBeGreaterThan(0)
    expect(res.headers.get('x-frames')).toBe('6')
  })
})

describe('animations the service refuses, from their headers where it can', () => {
  /** `count` frames of 1x1 on a `size` x `size` screen. */
  const tinyFrames = (count: number, size: number) =>
    writeAnimatedGif({ screenWidth: size, screenHeight: size, palette: PALETTE, frames: Array.from({ length: count }, () => ({ left: 0, top: 0, width: 1, height: 1, interlaced: false, indices: [0], delay: 2 })) })

  it('a GIF of 10,000 tiny frames: 422 image_too_large (MAX_ANIMATION_FRAMES), then the next request is served', async () => {
    const problem = await expectProblem(await compress(tinyFrames(10_000, 2), { format: 'webp' }, gif), 'image_too_large', 422)
    expect(problem.detail).toMatch(/10000 frames.*MAX_ANIMATION_FRAMES/)
    expect((await okBytes(await compress(fixture('anim.gif'), { format: 'webp' }, gif))).length).toBeGreaterThan(0)
  })

  it('a frame-count bomb (200 frames on a 1000x1000 screen, 2 KB of file): 422 image_too_large (MAX_ANIMATION_PIXELS)', async () => {
    const problem = await expectProblem(await compress(tinyFrames(200, 1000), { format: 'webp' }, gif), 'image_too_large', 422)
    expect(problem.detail).toMatch(/MAX_ANIMATION_PIXELS/)
  })

  it('a limit set lower applies (MAX_ANIMATION_FRAMES=5 refuses anim.gif\'s 10 frames; animated=false still converts it)', async () => {
    const post = (animated: boolean) =>
      callWorker(`/api/compress?format=webp&animated=${animated}`, { method: 'POST', body: fixture('anim.gif'), headers: { 'Content-Type': 'image/gif' } }, { MAX_ANIMATION_FRAMES: '5' })
    await expectProblem(await post(true), 'image_too_large', 422)
    expect((await decode(await okBytes(await post(false)))).format).toBe('webp')
  })

  it('a GIF frame outside its logical screen: 422 corrupt_image', async () => {
    const bytes = writeAnimatedGif({
      screenWidth: 16,
      screenHeight: 16,
      palette: PALETTE,
      frames: [
        { left: 0, top: 0, width: 16, height: 16, interlaced: false, indices: filled(16, 16, 0), delay: 10 },
        { left: 12, top: 12, width: 8, height: 8, interlaced: false, indices: filled(8, 8, 1), delay: 10 },
      ],
    })
    await expectProblem(await compress(bytes, { format: 'webp' }, gif), 'corrupt_image', 422)
  })

  it('a GIF that ends between frames, without its trailer or with bytes after it that are no block, plays the frames it has', async () => {
    const { bytes } = rulesGif()
    for (const [input, frames] of [[bytes.subarray(0, bytes.length - 1), 6], [Uint8Array.from([...bytes.subarray(0, bytes.length - 1), 0x99, 1, 2, 3]), 6]] as const) {
      const res = await compress(input, { format: 'webp', lossless: true }, gif)
      expect(webpAnimationChunks(await okBytes(res)).frames.length).toBeGreaterThan(1)
      expect(res.headers.get('x-frames')).toBe(String(frames))
    }
  })

  it('a GIF cut off inside a later frame: 422 corrupt_image, then the next request is served', async () => {
    const input = fixture('anim.gif')
    await expectProblem(await compress(input.subarray(0, Math.floor(input.length * 0.7)), { format: 'webp' }, gif), 'corrupt_image', 422)
    expect(webpAnimationChunks(await okBytes(await compress(input, { format: 'webp' }, gif))).frames).toHaveLength(10)
  })

  it('an animated WebP cut off inside a later frame: 422 corrupt_image', async () => {
    const input = fixture('anim.webp')
    await expectProblem(await compress(input.subarray(0, Math.floor(input.length * 0.8)), { format: 'webp' }, webp), 'corrupt_image', 422)
  })
})
