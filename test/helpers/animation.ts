/**
 * Animated WebP answers, read two ways: their chunks as the file stores them (ANIM's loop count, each ANMF frame's
 * rectangle, duration and bitstream), parsed here byte by byte; and their frames as a viewer shows them, composited by
 * libwebp's own animation decoder (WebPAnimDecoder in the lean codec), for comparing pixels.
 */
import { leanCodec, MemoryCap } from '../../wasm'

export interface WebpFrameChunk {
  x: number
  y: number
  width: number
  height: number
  duration: number
  /** The bitstream inside the frame: lossy (`VP8 `) or lossless (`VP8L`). */
  bitstream: string
}

export interface WebpAnimationChunks {
  canvasWidth: number
  canvasHeight: number
  loop: number
  frames: WebpFrameChunk[]
}

const u16 = (b: Uint8Array, at: number) => b[at]! | (b[at + 1]! << 8)
const u24 = (b: Uint8Array, at: number) => b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16)
const u32 = (b: Uint8Array, at: number) => (u24(b, at) | (b[at + 3]! << 24)) >>> 0
const fourcc = (b: Uint8Array, at: number) => String.fromCharCode(...b.subarray(at, at + 4))

function* chunks(bytes: Uint8Array, start: number, end: number): Generator<{ id: string; at: number; size: number }> {
  for (let at = start; at + 8 <= end; ) {
    const size = u32(bytes, at + 4)
    yield { id: fourcc(bytes, at), at: at + 8, size }
    at += 8 + size + (size & 1)
  }
}

/** The animation chunks of an animated WebP (throws if it is not one). */
export function webpAnimationChunks(bytes: Uint8Array): WebpAnimationChunks {
  if (fourcc(bytes, 0) !== 'RIFF' || fourcc(bytes, 8) !== 'WEBP') throw new Error('not a WebP')
  const out: WebpAnimationChunks = { canvasWidth: 0, canvasHeight: 0, loop: -1, frames: [] }
  for (const c of chunks(bytes, 12, 8 + u32(bytes, 4))) {
    if (c.id === 'VP8X') {
      if (!(bytes[c.at]! & 2)) throw new Error('a WebP without the animation flag')
      out.canvasWidth = u24(bytes, c.at + 4) + 1
      out.canvasHeight = u24(bytes, c.at + 7) + 1
    } else if (c.id === 'ANIM') {
      out.loop = u16(bytes, c.at + 4)
    } else if (c.id === 'ANMF') {
      const inner = [...chunks(bytes, c.at + 16, c.at + c.size)].map((i) => i.id).find((id) => id === 'VP8 ' || id === 'VP8L') ?? '?'
      out.frames.push({ x: u24(bytes, c.at) * 2, y: u24(bytes, c.at + 3) * 2, width: u24(bytes, c.at + 6) + 1, height: u24(bytes, c.at + 9) + 1, duration: u24(bytes, c.at + 12), bitstream: inner })
    }
  }
  if (out.loop < 0) throw new Error('an animated WebP without an ANIM chunk')
  return out
}

export interface ShownFrame {
  image: ImageData
  /** How long it shows, in ms. */
  duration: number
}

/** The ICC profile of a WebP (its ICCP chunk's payload). */
export function webpIcc(bytes: Uint8Array): Uint8Array {
  for (const c of chunks(bytes, 12, 8 + u32(bytes, 4))) if (c.id === 'ICCP') return bytes.slice(c.at, c.at + c.size)
  throw new Error('no ICCP chunk')
}

/** Every frame of an animated WebP or GIF as a viewer shows it (the whole canvas), with its duration. */
export function framesOf(bytes: Uint8Array, format: 'webp' | 'gif', width = 0, height = 0): ShownFrame[] {
  const lean = leanCodec(new MemoryCap(256 * 2 ** 20))
  lean.openFrames(bytes, format, width, height)
  const frames: ShownFrame[] = []
  for (let duration = lean.nextFrame(); duration >= 0; duration = lean.nextFrame()) frames.push({ image: lean.frameRgba(), duration })
  return frames
}
