import { GifReader } from 'omggif'
import type { Codec } from './types'
import { DecodeFailure } from './types'

/** GIF input: the first frame, composited onto a transparent canvas of the logical screen size. */
export const gif: Codec = {
  id: 'gif',
  label: 'GIF (first frame)',
  mime: 'image/gif',
  extensions: ['gif'],
  lossy: false,
  lossless: true,
  alpha: true,
  options: {},
  async decode(bytes) {
    let reader: GifReader
    try {
      reader = new GifReader(bytes)
      const frame = reader.frameInfo(0)
      checkLzw(bytes, frame.data_offset, frame.width * frame.height)
      const pixels = new Uint8ClampedArray(reader.width * reader.height * 4)
      reader.decodeAndBlitFrameRGBA(0, pixels)
      return new ImageData(pixels, reader.width, reader.height)
    } catch (error) {
      throw new DecodeFailure(`GIF data could not be decoded: ${(error as Error).message}`)
    }
  },
}

/**
 * omggif's LZW decoder follows each code's chain of prefixes without checking that the chain ends.
 * A code that is not defined yet (greater than the next free code, or equal to it right after a
 * clear) makes a table entry that is its own prefix, and decoding never returns: a 41-byte GIF held
 * the isolate forever. This reads the first frame's codes exactly as omggif does (same bit reader,
 * code-size growth, clear and end handling, and output-length stop) and refuses such a stream
 * before omggif sees it. Every code it lets through refers only to entries made before it, so every
 * chain ends. Linear in the data; no pixels are written.
 */
function checkLzw(bytes: Uint8Array, start: number, outputLength: number): void {
  let p = start
  const minCodeSize = bytes[p++] ?? 0
  if (minCodeSize > 11) throw new Error(`LZW minimum code size ${minCodeSize} is over 11`)
  const clear = 1 << minCodeSize
  const eoi = clear + 1
  let next = eoi + 1
  let size = minCodeSize + 1
  let mask = (1 << size) - 1
  let shift = 0
  let cur = 0
  let op = 0
  // As in omggif, a size byte read past the end is undefined, which never equals 0 or 1 (NaN here).
  let subBlock = bytes[p++] ?? Number.NaN
  const lengths = new Int32Array(4096).fill(1) // output length of each code; literals are 1
  let prev: number | null = null
  for (;;) {
    while (shift < 16) {
      if (subBlock === 0) break
      cur |= (bytes[p++] ?? 0) << shift
      shift += 8
      subBlock = subBlock === 1 ? (bytes[p++] ?? Number.NaN) : subBlock - 1
    }
    if (shift < size) return
    const code = cur & mask
    cur >>= size
    shift -= size
    if (code === clear) {
      next = eoi + 1
      size = minCodeSize + 1
      mask = (1 << size) - 1
      prev = null
      continue
    }
    if (code === eoi) return
    if (code > next || (code === next && prev === null)) {
      throw new Error(`LZW code ${code} is used before it is defined`)
    }
    const length = code < next ? lengths[code]! : lengths[prev!]! + 1
    if (op + length - 1 > outputLength) return // omggif stops here: "stream longer than expected"
    op += length
    if (prev !== null && next < 4096) {
      lengths[next] = lengths[prev]! + 1
      next++
      if (next >= mask + 1 && size < 12) {
        size++
        mask = (mask << 1) | 1
      }
    }
    prev = code
  }
}
