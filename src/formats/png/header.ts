/**
 * PNG header: IHDR (size, bit depth, colour type, checked against the spec and its CRC), the chunks
 * before the first IDAT (tRNS, acTL), and the CRC-32 of every critical chunk to the end of the file.
 */
import { ApiError } from '../../errors'
import { baseHeader, corrupt, type HeaderFormat, type ImageHeader } from '../shared/header'
import { Reader } from '../shared/reader'

const NAME = 'PNG'

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] as const

/** The file starts with the eight-byte PNG signature. */
export const pngHeader: HeaderFormat = {
  format: 'png',
  name: NAME,
  matches: (r) => r.matches(0, PNG_SIGNATURE),
  read: readPng,
}

/**
 * Whether `bytes` are a PNG's start that reaches the header of its first image data (IDAT) chunk: what a decoder reads
 * before its pixels.
 *
 * @example
 * pngImageDataWithin(await body.head(64 * 1024)) // true for a PNG whose chunks before IDAT are in its first 64 KiB
 */
export function pngImageDataWithin(bytes: Uint8Array): boolean {
  const r = new Reader(bytes)
  if (!r.matches(0, PNG_SIGNATURE)) return false
  for (let at = 8; r.has(at, 8); at += 12 + r.u32(at)) if (r.u32(at + 4) === CHUNK_IDAT) return true
  return false
}

const PNG_MAX_DIMENSION = 0x7fffffff
/** Allowed bit depths per colour type (PNG spec, table 11.1). */
const PNG_DEPTHS: Record<number, readonly number[]> = {
  0: [1, 2, 4, 8, 16],
  2: [8, 16],
  3: [1, 2, 4, 8],
  4: [8, 16],
  6: [8, 16],
}

function readPng(r: Reader): ImageHeader {
  if (r.u32(8) !== 13 || !r.matchesAscii(12, 'IHDR')) throw corrupt(NAME, 'the first chunk is not a 13-byte IHDR')
  const width = r.u32(16)
  const height = r.u32(20)
  const bitDepth = r.u8(24)
  const colourType = r.u8(25)
  validateIhdr(r, width, height, bitDepth, colourType)
  const chunks = walkPngChunks(r, 33)
  checkPngChecksums(r, 33)
  return {
    ...baseHeader('png', width, height),
    hasAlpha: colourType === 4 || colourType === 6 || chunks.transparency,
    frames: chunks.frames,
    bitDepth,
    progressive: r.u8(28) === 1,
    colour: chunks.colour,
  }
}

function validateIhdr(r: Reader, width: number, height: number, bitDepth: number, colourType: number): void {
  if (width === 0 || height === 0) throw corrupt(NAME, `it declares a zero dimension (${width}x${height})`)
  if (width > PNG_MAX_DIMENSION || height > PNG_MAX_DIMENSION) throw corrupt(NAME, 'a dimension is over 2^31-1')
  const depths = PNG_DEPTHS[colourType]
  if (!depths) throw corrupt(NAME, `colour type ${colourType} does not exist`)
  if (!depths.includes(bitDepth)) throw corrupt(NAME, `bit depth ${bitDepth} is not allowed for colour type ${colourType}`)
  if (r.u8(26) !== 0 || r.u8(27) !== 0) throw corrupt(NAME, 'unknown compression or filter method')
  if (r.u8(28) > 1) throw corrupt(NAME, `unknown interlace method ${r.u8(28)}`)
  // The IHDR CRC is 17 bytes of work and catches headers mangled in transit.
  if (crc32(r.bytes, 12, 29) !== r.u32(29)) throw corrupt(NAME, 'the IHDR checksum does not match')
}

interface PngChunkInfo {
  transparency: boolean
  frames: number
  /** iCCP, or gAMA/cHRM without sRGB: colours the decoder may have to convert. */
  colour: 'srgb' | 'profile'
}

/** Chunk types as big-endian integers, so the walk compares numbers instead of building strings. */
const CHUNK_IDAT = 0x49444154
const CHUNK_IEND = 0x49454e44
const CHUNK_TRNS = 0x74524e53
const CHUNK_ACTL = 0x6163544c
const CHUNK_ICCP = 0x69434350
const CHUNK_GAMA = 0x67414d41
const CHUNK_CHRM = 0x6348524d
const CHUNK_SRGB = 0x73524742

/** Real files have a handful of chunks before IDAT; past this many the walk leaves the rest to the decoder. */
const MAX_PNG_HEADER_CHUNKS = 4096

/**
 * Walk the chunks between IHDR and the first IDAT (tRNS, acTL). A chunk there that runs past the
 * end, or reaching IEND first, means there is no image data to decode.
 */
function walkPngChunks(r: Reader, start: number): PngChunkInfo {
  const info: PngChunkInfo = { transparency: false, frames: 1, colour: 'srgb' }
  let described = false
  let srgb = false
  let pos = start
  for (let chunks = 0; r.has(pos, 8); chunks++) {
    if (chunks === MAX_PNG_HEADER_CHUNKS) return info
    const length = r.u32(pos)
    const type = r.u32(pos + 4)
    if (!isChunkType(r, pos + 4)) throw corrupt(NAME, 'a chunk type is not four letters')
    if (type === CHUNK_IDAT) return { ...info, colour: described && !srgb ? 'profile' : 'srgb' }
    if (type === CHUNK_IEND) break
    if (!r.has(pos + 8, length + 4)) throw corrupt(NAME, `the ${r.fourcc(pos + 4)} chunk runs past the end of the data`)
    if (type === CHUNK_TRNS) info.transparency = true
    if (type === CHUNK_ACTL && length >= 8) info.frames = Math.max(1, r.u32(pos + 8))
    if (type === CHUNK_ICCP || type === CHUNK_GAMA || type === CHUNK_CHRM) described = true
    if (type === CHUNK_SRGB) srgb = true
    pos += 12 + length
  }
  throw corrupt(NAME, 'no image data (IDAT) before the data ends')
}

/**
 * Check the CRC-32 of every critical chunk after IHDR up to IEND (PLTE, IDAT, IEND). The PNG decoder
 * verifies none of them (PngSuite's xcsn0g01, a wrong IDAT CRC, decodes without error), and a wrong
 * checksum there means the pixels were damaged, so the image is refused instead of decoded from
 * them. Ancillary chunks (lower-case first letter: iCCP, tEXt, eXIf...) are skipped, as libpng does
 * by default and browsers show such files: we strip that metadata anyway. One pass over the file:
 * about 3 ms per MB. A chunk cut off by the end of the data has no checksum to check; the decoder
 * refuses what it cannot inflate.
 */
function checkPngChecksums(r: Reader, start: number): void {
  let pos = start
  while (r.has(pos, 12)) {
    const length = r.u32(pos)
    const end = pos + 8 + length
    if (!r.has(end, 4)) return
    const ancillary = (r.u8(pos + 4) & 0x20) !== 0
    if (!ancillary && crc32(r.bytes, pos + 4, end) !== r.u32(end)) {
      throw new ApiError('corrupt_image', `The PNG ${chunkName(r, pos + 4)} chunk at byte ${pos} is damaged: its CRC-32 checksum does not match.`)
    }
    if (r.u32(pos + 4) === CHUNK_IEND) return
    pos = end + 4
  }
}

/** A chunk type for an error detail: its four letters, or its bytes in hex when they are not letters. */
function chunkName(r: Reader, offset: number): string {
  if (isChunkType(r, offset)) return r.fourcc(offset)
  return `0x${r.u32(offset).toString(16).padStart(8, '0')}`
}

function isChunkType(r: Reader, offset: number): boolean {
  for (let i = 0; i < 4; i++) {
    const letter = r.u8(offset + i) | 0x20
    if (letter < 0x61 || letter > 0x7a) return false
  }
  return true
}

let crcTable: Uint32Array | undefined

export function crc32(bytes: Uint8Array, start: number, end: number): number {
  crcTable ??= makeCrcTable()
  let crc = 0xffffffff
  for (let i = start; i < end; i++) crc = crcTable[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8)
  return (crc ^ 0xffffffff) >>> 0
}

function makeCrcTable(): Uint32Array {
  const table = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    table[n] = c >>> 0
  }
  return table
}
