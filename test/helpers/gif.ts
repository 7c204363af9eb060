/**
 * GIF files written byte by byte, for what the corpus has too few of: interlaced frames, frames smaller
 * than the screen and off its origin, transparent indices, and large canvases; and animations of several frames.
 */
import { joinParts } from '../../src/lib/bytes'

export interface GifFrame {
  left: number
  top: number
  width: number
  height: number
  interlaced: boolean
  /** width x height palette indices, row by row (in display order; interlacing is applied here). */
  indices: ArrayLike<number>
}

export interface GifImage {
  screenWidth: number
  screenHeight: number
  /** RGB triples, up to 256 of them (padded to a power of two). */
  palette: ReadonlyArray<readonly [number, number, number]>
  /** The index drawn as transparent, if any (in a Graphic Control Extension). */
  transparent?: number
  frame: GifFrame
}

const u16 = (n: number) => [n & 0xff, (n >> 8) & 0xff]

/** Display rows in the order an interlaced frame stores them: every 8th from 0, every 8th from 4, every 4th from 2, every 2nd from 1. */
export function interlacedOrder(height: number): number[] {
  const rows: number[] = []
  for (const [start, step] of [[0, 8], [4, 8], [2, 4], [1, 2]] as const) for (let y = start; y < height; y += step) rows.push(y)
  return rows
}

/** GIF's LZW (minimum code size 8): codes grow from 9 to 12 bits, and the table starts over when full. */
function lzw(indices: ArrayLike<number>): Uint8Array {
  const clear = 256
  const out: number[] = []
  let acc = 0
  let bits = 0
  let size = 9
  const put = (code: number) => {
    acc |= code << bits
    bits += size
    while (bits >= 8) {
      out.push(acc & 0xff)
      acc >>>= 8
      bits -= 8
    }
  }
  let table = new Map<number, number>()
  let next = 258
  put(clear)
  let prefix = indices.length ? indices[0]! : -1
  for (let i = 1; i < indices.length; i++) {
    const c = indices[i]!
    const key = prefix * 256 + c
    const found = table.get(key)
    if (found !== undefined) {
      prefix = found
      continue
    }
    put(prefix)
    if (next === 4096) {
      put(clear)
      table = new Map()
      next = 258
      size = 9
    } else {
      table.set(key, next++)
      // The decoder widens its codes once the table reaches the next power of two (it lags one code behind).
      if (next > 1 << size && size < 12) size++
    }
    prefix = c
  }
  if (prefix >= 0) put(prefix)
  put(257)
  if (bits > 0) out.push(acc & 0xff)
  return Uint8Array.from(out)
}

/** A GIF89a of one image. */
export function writeGif({ screenWidth, screenHeight, palette, transparent, frame }: GifImage): Uint8Array {
  return writeAnimatedGif({ screenWidth, screenHeight, palette, frames: [{ ...frame, transparent }] })
}

export interface AnimatedGifFrame extends GifFrame {
  /** Delay in hundredths of a second (a Graphic Control Extension is written when any of these three is given). */
  delay?: number
  /** 0-1 leave, 2 clear to the background (transparent), 3 restore what was under the frame. */
  dispose?: number
  transparent?: number | undefined
}

export interface AnimatedGif {
  screenWidth: number
  screenHeight: number
  palette: ReadonlyArray<readonly [number, number, number]>
  /** The NETSCAPE2.0 loop count (0: forever); no looping extension when undefined. */
  loop?: number
  frames: AnimatedGifFrame[]
}

/** A GIF89a of several frames, each with its own Graphic Control Extension. */
export function writeAnimatedGif({ screenWidth, screenHeight, palette, loop, frames }: AnimatedGif): Uint8Array {
  const bits = Math.max(1, Math.ceil(Math.log2(palette.length)))
  const table = new Uint8Array(3 << bits)
  palette.forEach((rgb, i) => table.set(rgb, i * 3))
  const parts: Array<ArrayLike<number>> = [
    [...Array.from('GIF89a', (c) => c.charCodeAt(0)), ...u16(screenWidth), ...u16(screenHeight), 0x80 | ((bits - 1) << 4) | (bits - 1), 0, 0],
    table,
  ]
  if (loop !== undefined) parts.push([0x21, 0xff, 11, ...Array.from('NETSCAPE2.0', (c) => c.charCodeAt(0)), 3, 1, ...u16(loop), 0])
  for (const frame of frames) parts.push(...frameBytes(frame))
  parts.push([0x3b])
  return joinParts(parts.map((part) => Uint8Array.from(part)))
}

function frameBytes(frame: AnimatedGifFrame): Array<ArrayLike<number>> {
  const { transparent, delay, dispose } = frame
  const control = transparent !== undefined || delay !== undefined || dispose !== undefined
    ? [0x21, 0xf9, 4, ((dispose ?? 0) << 2) | (transparent === undefined ? 0 : 1), ...u16(delay ?? 0), transparent ?? 0, 0]
    : []
  const order = frame.interlaced ? interlacedOrder(frame.height) : Array.from({ length: frame.height }, (_, y) => y)
  const stored = new Uint8Array(frame.width * frame.height)
  order.forEach((y, i) => {
    for (let x = 0; x < frame.width; x++) stored[i * frame.width + x] = frame.indices[y * frame.width + x]!
  })
  const data = lzw(stored)
  // The data in sub-blocks of up to 255 bytes, each after its length.
  const blocks = new Uint8Array(data.length + Math.ceil(data.length / 255) + 1)
  let at = 0
  for (let from = 0; from < data.length; from += 255) {
    const block = data.subarray(from, from + 255)
    blocks[at++] = block.length
    blocks.set(block, at)
    at += block.length
  }
  return [
    [...control, 0x2c, ...u16(frame.left), ...u16(frame.top), ...u16(frame.width), ...u16(frame.height), frame.interlaced ? 0x40 : 0, 8],
    blocks, // ends with the terminator, a zero-length block
  ]
}
