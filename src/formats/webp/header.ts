/**
 * WebP header: the size and alpha of a simple lossy (VP8) or lossless (VP8L) file, and for an extended
 * one (VP8X) the flags, the EXIF orientation and a count of animation frames from the top-level chunks.
 */
import { exifOrientation, stripExifPrefix } from '../shared/exif'
import { baseHeader, corrupt, type HeaderFormat, type ImageHeader } from '../shared/header'
import type { Reader } from '../shared/reader'

const NAME = 'WebP'

/** A RIFF container whose form type is "WEBP". */
export const webpHeader: HeaderFormat = {
  format: 'webp',
  name: NAME,
  matches: (r) => r.matchesAscii(0, 'RIFF') && r.matchesAscii(8, 'WEBP'),
  read: readWebp,
}

const VP8X_ALPHA = 0x10
const VP8X_ANIMATION = 0x02
const VP8X_ICC = 0x20

function readWebp(r: Reader): ImageHeader {
  const type = r.fourcc(12)
  const data = 20
  if (type === 'VP8 ') return readVp8(r, data)
  if (type === 'VP8L') return readVp8l(r, data)
  if (type === 'VP8X') return readVp8x(r, data)
  throw corrupt(NAME, `unexpected first chunk '${type}'`)
}

function readVp8(r: Reader, data: number): ImageHeader {
  const frameTag = r.u8(data)
  if (frameTag & 1) throw corrupt(NAME, 'the VP8 frame is not a key frame')
  if (!r.matches(data + 3, [0x9d, 0x01, 0x2a])) throw corrupt(NAME, 'the VP8 start code is missing')
  return {
    ...baseHeader('webp', r.u16(data + 6, true) & 0x3fff, r.u16(data + 8, true) & 0x3fff),
    hasAlpha: false,
  }
}

function readVp8l(r: Reader, data: number): ImageHeader {
  if (r.u8(data) !== 0x2f) throw corrupt(NAME, 'the VP8L signature is missing')
  const bits = r.u32(data + 1, true)
  if (bits >>> 29 !== 0) throw corrupt(NAME, 'unknown VP8L version')
  return {
    ...baseHeader('webp', (bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1),
    hasAlpha: ((bits >>> 28) & 1) === 1,
    lossless: true,
  }
}

function readVp8x(r: Reader, data: number): ImageHeader {
  const flags = r.u8(data)
  const width = r.u24le(data + 4) + 1
  const height = r.u24le(data + 7) + 1
  const chunks = walkWebpChunks(r, 12)
  const animated = (flags & VP8X_ANIMATION) !== 0
  return {
    ...baseHeader('webp', width, height),
    orientation: chunks.orientation,
    hasAlpha: (flags & VP8X_ALPHA) !== 0 || chunks.alph || chunks.vp8lAlpha,
    frames: animated ? Math.max(1, chunks.anmf) : 1,
    lossless: chunks.vp8l,
    colour: (flags & VP8X_ICC) !== 0 ? 'profile' : 'srgb',
  }
}

interface WebpChunks {
  anmf: number
  alph: boolean
  vp8l: boolean
  vp8lAlpha: boolean
  orientation: number
}

/** Chunk FourCCs as big-endian integers: animated files can hold thousands of chunks. */
const RIFF_ANMF = 0x414e4d46
const RIFF_ALPH = 0x414c5048
const RIFF_VP8L = 0x5650384c
const RIFF_EXIF = 0x45584946

/** Walk top-level RIFF chunks; stops quietly at the first chunk that overruns the buffer. */
function walkWebpChunks(r: Reader, start: number): WebpChunks {
  const chunks: WebpChunks = { anmf: 0, alph: false, vp8l: false, vp8lAlpha: false, orientation: 1 }
  let pos = start
  while (r.has(pos, 8)) {
    const type = r.u32(pos)
    const size = r.u32(pos + 4, true)
    const data = pos + 8
    if (type === RIFF_ANMF) chunks.anmf++
    else if (type === RIFF_ALPH) chunks.alph = true
    else if (type === RIFF_VP8L) {
      chunks.vp8l = true
      if (r.has(data, 5)) chunks.vp8lAlpha = ((r.u32(data + 1, true) >>> 28) & 1) === 1
    }
    else if (type === RIFF_EXIF && r.has(data, size)) {
      chunks.orientation = exifOrientation(stripExifPrefix(r.bytes.subarray(data, data + size)))
    }
    pos = data + size + (size & 1)
  }
  return chunks
}
