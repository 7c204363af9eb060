import { joinParts } from '../lib/bytes'

/**
 * libwebp's simple decoder refuses animated files, so for an animated WebP we cut out the first frame
 * (an ANMF chunk) and wrap it as a still WebP the decoder accepts. Returns the still and where the
 * frame sits on the animation's canvas.
 */
export interface FirstFrame {
  still: Uint8Array
  /** The frame's size as its ANMF chunk gives it, which its bitstream must have. */
  width: number
  height: number
  x: number
  y: number
  canvasWidth: number
  canvasHeight: number
}

const fourcc = (bytes: Uint8Array, at: number) => String.fromCharCode(...bytes.subarray(at, at + 4))
const u24 = (b: Uint8Array, at: number) => b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16)
const u32 = (b: Uint8Array, at: number) => (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0

/** RIFF chunks in `bytes[start, end)`: fourcc, payload start and payload size. */
function* chunks(bytes: Uint8Array, start: number, end: number): Generator<{ id: string; at: number; size: number }> {
  let at = start
  while (at + 8 <= end) {
    const size = u32(bytes, at + 4)
    if (at + 8 + size > end) return
    yield { id: fourcc(bytes, at), at: at + 8, size }
    at += 8 + size + (size & 1)
  }
}

function chunk(id: string, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(8 + payload.length + (payload.length & 1))
  out.set(new TextEncoder().encode(id), 0)
  new DataView(out.buffer).setUint32(4, payload.length, true)
  out.set(payload, 8)
  return out
}

/** The first frame of an animated WebP as a still WebP, or undefined if the file has no ANMF frame. */
export function firstFrame(bytes: Uint8Array): FirstFrame | undefined {
  let canvasWidth = 0
  let canvasHeight = 0
  for (const c of chunks(bytes, 12, Math.min(bytes.length, 8 + u32(bytes, 4)))) {
    if (c.id === 'VP8X' && c.size >= 10) {
      canvasWidth = u24(bytes, c.at + 4) + 1
      canvasHeight = u24(bytes, c.at + 7) + 1
    }
    if (c.id !== 'ANMF' || c.size < 16) continue
    const x = u24(bytes, c.at) * 2
    const y = u24(bytes, c.at + 3) * 2
    const width = u24(bytes, c.at + 6) + 1
    const height = u24(bytes, c.at + 9) + 1
    const parts: Uint8Array[] = []
    let alpha = false
    for (const inner of chunks(bytes, c.at + 16, c.at + c.size)) {
      if (inner.id === 'ALPH') alpha = true
      if (inner.id === 'ALPH' || inner.id === 'VP8 ' || inner.id === 'VP8L') {
        parts.push(chunk(inner.id, bytes.subarray(inner.at, inner.at + inner.size)))
      }
    }
    if (alpha) {
      const vp8x = new Uint8Array(10)
      vp8x[0] = 0x10
      vp8x.set([(width - 1) & 255, ((width - 1) >> 8) & 255, (width - 1) >> 16], 4)
      vp8x.set([(height - 1) & 255, ((height - 1) >> 8) & 255, (height - 1) >> 16], 7)
      parts.unshift(chunk('VP8X', vp8x))
    }
    const body = joinParts([new TextEncoder().encode('WEBP'), ...parts])
    return { still: chunk('RIFF', body), width, height, x, y, canvasWidth: canvasWidth || width, canvasHeight: canvasHeight || height }
  }
  return undefined
}

/** Place `frame` at (x, y) on a transparent canvas. */
export function onCanvas(frame: ImageData, { x, y, canvasWidth, canvasHeight }: FirstFrame): ImageData {
  if (x === 0 && y === 0 && frame.width === canvasWidth && frame.height === canvasHeight) return frame
  const out = new Uint8ClampedArray(canvasWidth * canvasHeight * 4)
  const width = Math.min(frame.width, canvasWidth - x)
  for (let row = 0; row < frame.height && y + row < canvasHeight; row++) {
    out.set(frame.data.subarray(row * frame.width * 4, (row * frame.width + width) * 4), ((y + row) * canvasWidth + x) * 4)
  }
  return new ImageData(out, canvasWidth, canvasHeight)
}
