/**
 * Format sniffing and header-only metadata for uploads.
 *
 * This is the security gate in front of the decoders: it reads dimensions and a few flags from the
 * first bytes of a file without decoding pixel data, so a 50000x50000 "header bomb" is refused in
 * microseconds (a PNG's chunk checksums are checked too, one pass over its bytes). Every read is
 * bounds-checked and every loop is bounded by the buffer length.
 */
import { ApiError } from '../errors'

export type InputFormat = 'jpeg' | 'png' | 'webp' | 'avif' | 'gif'

export interface ImageHeader {
  format: InputFormat
  /** Stored pixel dimensions as in the file header (before EXIF orientation). */
  width: number
  height: number
  /**
   * EXIF orientation 1-8 from JPEG APP1 Exif, the WebP EXIF chunk, or AVIF irot/imir mapped to the
   * equivalent EXIF value; 1 when absent or invalid (0, >8).
   */
  orientation: number
  /**
   * true/false when the header says, undefined if unknown. PNG: colour type 4/6 or tRNS before IDAT;
   * WebP: VP8X alpha flag, VP8L alpha hint or an ALPH chunk; GIF: true when the first frame's
   * graphic control extension sets transparency, else undefined; AVIF: an auxC alpha property
   * (undefined for a sequence without item metadata); JPEG: false.
   */
  hasAlpha: boolean | undefined
  /**
   * Frames when the header shows animation: GIF image descriptors, WebP ANMF chunks (VP8X
   * animation flag), PNG acTL num_frames, AVIF sequence sample count (2 when an 'avis' file's count
   * cannot be read). 1 otherwise.
   */
  frames: number
  /** PNG bit depth (1-16); AVIF pixi, else av1C; JPEG sample precision (8, 12 or 16); 8 otherwise. */
  bitDepth: number
  /**
   * JPEG only: progressive DCT frame, and the number of SOS markers seen walking the segments (the
   * walk gives up after 65536 markers); other formats: false / 1.
   */
  progressive: boolean
  scans: number
  /** JPEG only: the data ends before the end-of-image marker (decoders would grey-fill the rest). */
  truncated: boolean
  /**
   * WebP only: the image is lossless (a VP8L bitstream, whose decoder holds the whole image as ARGB
   * while it decodes); for an animation, whether a VP8L chunk was seen at the top level (frames' are
   * inside ANMF chunks, so false there). Other formats: false.
   */
  lossless: boolean
  /** The file's size in bytes, when the caller knows it: a PNG's decoder holds its file, whose size per pixel varies tenfold. */
  fileBytes?: number
}

const SUPPORTED = 'send JPEG, PNG, WebP, AVIF or GIF'

/** Formats we recognise but do not decode, with the name used in error details. */
const UNSUPPORTED_NAMES = {
  svg: 'SVG',
  bmp: 'BMP',
  tiff: 'TIFF',
  jxl: 'JPEG XL',
  qoi: 'QOI',
  ico: 'ICO',
  psd: 'PSD',
  heic: 'HEIC',
  pdf: 'PDF',
  text: 'Text',
} as const

type UnsupportedKind = keyof typeof UNSUPPORTED_NAMES

type Identified =
  | { supported: InputFormat }
  | { unsupported: UnsupportedKind }
  | { unknown: true }

/** Thrown by the reader on any out-of-bounds access; converted to `corrupt_image` at the top. */
class OutOfBounds extends Error {}

/** Bounds-checked big/little-endian reads over a byte array. */
class Reader {
  readonly bytes: Uint8Array
  readonly length: number
  private readonly view: DataView

  constructor(bytes: Uint8Array) {
    this.bytes = bytes
    this.length = bytes.length
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  }

  has(offset: number, count: number): boolean {
    return offset >= 0 && count >= 0 && offset + count <= this.length
  }

  private need(offset: number, count: number): void {
    if (!this.has(offset, count)) throw new OutOfBounds()
  }

  u8(offset: number): number {
    this.need(offset, 1)
    return this.view.getUint8(offset)
  }

  u16(offset: number, littleEndian = false): number {
    this.need(offset, 2)
    return this.view.getUint16(offset, littleEndian)
  }

  u24le(offset: number): number {
    this.need(offset, 3)
    return this.view.getUint16(offset, true) | (this.view.getUint8(offset + 2) << 16)
  }

  u32(offset: number, littleEndian = false): number {
    this.need(offset, 4)
    return this.view.getUint32(offset, littleEndian)
  }

  /** Four bytes as a Latin-1 string (box types, chunk types, brands). */
  fourcc(offset: number): string {
    this.need(offset, 4)
    return String.fromCharCode(this.u8(offset), this.u8(offset + 1), this.u8(offset + 2), this.u8(offset + 3))
  }

  /** True when the bytes at `offset` are exactly `expected` (no throw on short input). */
  matches(offset: number, expected: readonly number[]): boolean {
    if (!this.has(offset, expected.length)) return false
    for (let i = 0; i < expected.length; i++) {
      if (this.view.getUint8(offset + i) !== expected[i]) return false
    }
    return true
  }

  matchesAscii(offset: number, text: string): boolean {
    if (!this.has(offset, text.length)) return false
    for (let i = 0; i < text.length; i++) {
      if (this.view.getUint8(offset + i) !== text.charCodeAt(i)) return false
    }
    return true
  }
}

// ---------------------------------------------------------------------------------------------
// Identification
// ---------------------------------------------------------------------------------------------

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] as const
const JXL_CONTAINER = [0x00, 0x00, 0x00, 0x0c, 0x4a, 0x58, 0x4c, 0x20, 0x0d, 0x0a, 0x87, 0x0a] as const
/** Known BITMAPINFOHEADER variants; checking it keeps text that starts with "BM" from being called BMP. */
const BMP_DIB_SIZES = [12, 16, 40, 52, 56, 64, 108, 124]
const HEIF_BRANDS = new Set(['heic', 'heix', 'heim', 'heis', 'hevc', 'hevx', 'mif1', 'msf1'])

/** How far into a text body we look for an `<svg` root after an XML prolog or comments. */
const SVG_SEARCH_WINDOW = 16 * 1024
const TEXT_SAMPLE = 1024

function identify(bytes: Uint8Array): Identified {
  const r = new Reader(bytes)
  if (r.matches(0, [0xff, 0xd8, 0xff])) return { supported: 'jpeg' }
  if (r.matches(0, PNG_SIGNATURE)) return { supported: 'png' }
  if (r.matchesAscii(0, 'GIF87a') || r.matchesAscii(0, 'GIF89a')) return { supported: 'gif' }
  if (r.matchesAscii(0, 'RIFF') && r.matchesAscii(8, 'WEBP')) return { supported: 'webp' }
  if (r.matchesAscii(4, 'ftyp')) return identifyIsoBmff(r)
  const other = identifyOtherBinary(r)
  if (other) return { unsupported: other }
  return identifyText(bytes)
}

/** AVIF wins if any brand says so; HEIF-only brands are named HEIC; anything else (MP4, MOV) is unknown. */
function identifyIsoBmff(r: Reader): Identified {
  const brands = ftypBrands(r)
  if (brands.includes('avif') || brands.includes('avis')) return { supported: 'avif' }
  if (brands.some((brand) => HEIF_BRANDS.has(brand))) return { unsupported: 'heic' }
  return { unknown: true }
}

function ftypBrands(r: Reader): string[] {
  if (!r.has(0, 12)) return []
  const declared = r.u32(0)
  // A sane ftyp is small; clamp so a lying size cannot make us read far.
  const end = Math.min(declared >= 16 ? declared : 16, r.length, 4096)
  const brands = [r.fourcc(8)]
  for (let offset = 16; offset + 4 <= end; offset += 4) brands.push(r.fourcc(offset))
  return brands
}

function identifyOtherBinary(r: Reader): UnsupportedKind | undefined {
  if (r.matchesAscii(0, 'BM') && r.has(14, 4) && BMP_DIB_SIZES.includes(r.u32(14, true))) return 'bmp'
  if (r.matches(0, [0x49, 0x49, 0x2a, 0x00]) || r.matches(0, [0x4d, 0x4d, 0x00, 0x2a])) return 'tiff'
  if (r.matches(0, [0x49, 0x49, 0x2b, 0x00]) || r.matches(0, [0x4d, 0x4d, 0x00, 0x2b])) return 'tiff'
  if (r.matches(0, [0xff, 0x0a]) || r.matches(0, JXL_CONTAINER)) return 'jxl'
  if (r.matchesAscii(0, 'qoif')) return 'qoi'
  if (r.matches(0, [0x00, 0x00, 0x01, 0x00]) && r.has(0, 6) && r.u16(4, true) > 0) return 'ico'
  if (r.matchesAscii(0, '8BPS')) return 'psd'
  if (r.matchesAscii(0, '%PDF-')) return 'pdf'
  return undefined
}

/** Text bodies: SVG gets its own name so the caller can say vector input is not rasterised. */
function identifyText(bytes: Uint8Array): Identified {
  let start = 0
  if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) start = 3
  if (!looksLikeText(bytes, start)) return { unknown: true }
  while (start < bytes.length && isSpace(bytes[start]!)) start++
  if (start === bytes.length) return { unknown: true }
  const head = lowerAscii(bytes, start, Math.min(bytes.length, start + SVG_SEARCH_WINDOW))
  if (head.startsWith('<svg') || head.startsWith('<!doctype svg')) return { unsupported: 'svg' }
  if (/^<(\?xml|!--|!doctype)/.test(head) && head.includes('<svg')) return { unsupported: 'svg' }
  return { unsupported: 'text' }
}

function looksLikeText(bytes: Uint8Array, start: number): boolean {
  const end = Math.min(bytes.length, start + TEXT_SAMPLE)
  if (end <= start) return false
  for (let i = start; i < end; i++) {
    const byte = bytes[i]!
    if (byte < 0x20 && !isSpace(byte)) return false
    if (byte === 0x7f) return false
  }
  return true
}

function isSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d || byte === 0x0c
}

function lowerAscii(bytes: Uint8Array, start: number, end: number): string {
  let out = ''
  for (let i = start; i < end; i++) {
    const byte = bytes[i]!
    out += String.fromCharCode(byte >= 0x41 && byte <= 0x5a ? byte + 0x20 : byte)
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------------------------

/**
 * Identify the format from magic bytes alone (never from headers or file names).
 *
 * Returns the supported format, `'svg'` for SVG/XML-with-SVG text, `'other'` for a recognised
 * unsupported format (BMP, TIFF, JPEG XL, QOI, ICO, PSD, HEIC, PDF) or other text such as HTML,
 * and `undefined` when nothing matches.
 *
 * @example
 * detectFormat(new Uint8Array([0xff, 0xd8, 0xff, 0xe0])) // 'jpeg'
 * detectFormat(new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"/>')) // 'svg'
 */
export function detectFormat(bytes: Uint8Array): InputFormat | 'svg' | 'other' | undefined {
  const found = identify(bytes)
  if ('supported' in found) return found.supported
  if ('unsupported' in found) return found.unsupported === 'svg' ? 'svg' : 'other'
  return undefined
}

/** The size the image has once its orientation is applied: 5-8 swap width and height. */
export function uprightSize({ width, height, orientation }: ImageHeader): { width: number; height: number } {
  return orientation >= 5 ? { width: height, height: width } : { width, height }
}

/**
 * Read the header of a supported image without decoding pixels.
 *
 * Throws `ApiError('missing_image')` for an empty body, `ApiError('unsupported_format')` (with a
 * `detected` extension naming the format when known) for anything that is not JPEG, PNG, WebP,
 * AVIF or GIF, and `ApiError('corrupt_image')` for a recognised format whose header is broken.
 *
 * @example
 * const header = readHeader(new Uint8Array(await request.arrayBuffer()))
 * if (header.width * header.height > maxPixels) throw new ApiError('image_too_large', '...')
 */
export function readHeader(bytes: Uint8Array): ImageHeader {
  if (bytes.length === 0) throw new ApiError('missing_image', 'The request body is empty')
  const found = identify(bytes)
  if ('unsupported' in found) throw unsupported(found.unsupported)
  if ('unknown' in found) {
    throw new ApiError('unsupported_format', `The body is not a recognised image; ${SUPPORTED}`)
  }
  const format = found.supported
  try {
    return checkDimensions(PARSERS[format](new Reader(bytes)))
  } catch (error) {
    if (error instanceof OutOfBounds) {
      throw new ApiError('corrupt_image', `The ${FORMAT_NAMES[format]} header is truncated`)
    }
    throw error
  }
}

const FORMAT_NAMES: Record<InputFormat, string> = {
  jpeg: 'JPEG',
  png: 'PNG',
  webp: 'WebP',
  avif: 'AVIF',
  gif: 'GIF',
}

const PARSERS: Record<InputFormat, (r: Reader) => ImageHeader> = {
  jpeg: readJpeg,
  png: readPng,
  gif: readGif,
  webp: readWebp,
  avif: readAvif,
}

function unsupported(kind: UnsupportedKind): ApiError {
  const detected = { detected: kind }
  if (kind === 'svg') {
    return new ApiError(
      'unsupported_format',
      `SVG input is not supported (vector images are not rasterised); ${SUPPORTED}`,
      detected,
    )
  }
  if (kind === 'text') {
    return new ApiError('unsupported_format', `The body is text (such as HTML or JSON), not an image; ${SUPPORTED}`, detected)
  }
  return new ApiError('unsupported_format', `${UNSUPPORTED_NAMES[kind]} input is not supported; ${SUPPORTED}`, detected)
}

function corrupt(format: InputFormat, problem: string): ApiError {
  return new ApiError('corrupt_image', `The ${FORMAT_NAMES[format]} header is invalid: ${problem}`)
}

function checkDimensions(header: ImageHeader): ImageHeader {
  if (header.width <= 0 || header.height <= 0) {
    throw corrupt(header.format, `it declares a zero dimension (${header.width}x${header.height})`)
  }
  return header
}

function baseHeader(format: InputFormat, width: number, height: number): ImageHeader {
  return { format, width, height, orientation: 1, hasAlpha: undefined, frames: 1, bitDepth: 8, progressive: false, scans: 1, truncated: false, lossless: false }
}

/** EXIF orientation values outside 1-8 (0 is common) mean "no rotation". */
function validOrientation(value: number): number {
  return Number.isInteger(value) && value >= 1 && value <= 8 ? value : 1
}

// ---------------------------------------------------------------------------------------------
// EXIF (TIFF structure) — shared by JPEG APP1 and the WebP EXIF chunk
// ---------------------------------------------------------------------------------------------

const TAG_ORIENTATION = 0x0112
const TIFF_SHORT = 3
const TIFF_LONG = 4

/** Orientation from a TIFF-structured EXIF block; broken EXIF is ignored, never an error. */
function exifOrientation(tiff: Uint8Array): number {
  try {
    return validOrientation(readExifOrientation(new Reader(tiff)))
  } catch (error) {
    if (error instanceof OutOfBounds) return 1
    throw error
  }
}

function readExifOrientation(r: Reader): number {
  let littleEndian: boolean
  if (r.matchesAscii(0, 'II')) littleEndian = true
  else if (r.matchesAscii(0, 'MM')) littleEndian = false
  else return 1
  if (r.u16(2, littleEndian) !== 42) return 1
  const ifd = r.u32(4, littleEndian)
  if (ifd < 8) return 1
  const count = r.u16(ifd, littleEndian)
  for (let i = 0; i < count; i++) {
    const entry = ifd + 2 + i * 12
    if (!r.has(entry, 12)) return 1
    if (r.u16(entry, littleEndian) !== TAG_ORIENTATION) continue
    const type = r.u16(entry + 2, littleEndian)
    if (type === TIFF_SHORT) return r.u16(entry + 8, littleEndian)
    if (type === TIFF_LONG) return r.u32(entry + 8, littleEndian)
    return 1
  }
  return 1
}

/** The TIFF block inside an "Exif\0\0"-prefixed payload, or the payload itself if it has no prefix. */
function stripExifPrefix(payload: Uint8Array): Uint8Array {
  const r = new Reader(payload)
  return r.matches(0, [0x45, 0x78, 0x69, 0x66, 0x00, 0x00]) ? payload.subarray(6) : payload
}

// ---------------------------------------------------------------------------------------------
// JPEG
// ---------------------------------------------------------------------------------------------

const SOI = 0xd8
const EOI = 0xd9
const SOS = 0xda
const APP1 = 0xe1
const TEM = 0x01
/**
 * Real files have a few dozen markers outside entropy-coded data; a body made of millions of tiny
 * segments is an attack on this walk, so it stops counting there (the decoder will refuse it).
 */
const MAX_JPEG_MARKERS = 65536
/**
 * Real progressive JPEGs have about 10 scans (a few hundred at the very most). libjpeg walks every
 * block of the image once per scan, even for an empty one, so a small file of tens of thousands of
 * 10-byte scans would hold the isolate for minutes (measured: 50 000 empty scans on a 2 MP image
 * decode in 21 s). libjpeg-turbo recommends a scan limit for untrusted input; this is ours.
 */
export const MAX_JPEG_SCANS = 1000

/** SOF0-3, 5-7, 9-11, 13-15; C4 (DHT), C8 (JPG) and CC (DAC) share the range but are not frames. */
function isStartOfFrame(marker: number): boolean {
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc
}

function isProgressiveFrame(marker: number): boolean {
  return marker === 0xc2 || marker === 0xc6 || marker === 0xca || marker === 0xce
}

function isStandalone(marker: number): boolean {
  return marker === SOI || marker === TEM || (marker >= 0xd0 && marker <= 0xd7)
}

interface JpegFrame {
  width: number
  height: number
  precision: number
  progressive: boolean
  components: number
}

function readJpeg(r: Reader): ImageHeader {
  let frame: JpegFrame | undefined
  let orientation: number | undefined
  let scans = 0
  let ended = false
  let pos = 2
  let markers = 0
  for (; pos < r.length && markers < MAX_JPEG_MARKERS; markers++) {
    const markerAt = findMarker(r.bytes, pos)
    if (markerAt < 0) break
    const marker = r.bytes[markerAt + 1]!
    pos = markerAt + 2
    if (marker === EOI) {
      ended = true
      break
    }
    if (isStandalone(marker)) continue
    if (!r.has(pos, 2)) break
    const length = r.u16(pos)
    if (length < 2) throw corrupt('jpeg', `segment 0x${marker.toString(16)} has length ${length}`)
    const payload = pos + 2
    const end = pos + length
    if (isStartOfFrame(marker) && !frame) frame = readJpegFrame(r, marker, payload, length)
    if (marker === APP1 && orientation === undefined) orientation = jpegApp1Orientation(r, payload, end)
    if (marker === SOS) {
      scans++
      pos = skipEntropyCoded(r.bytes, end)
      continue
    }
    pos = end
  }
  if (!frame) throw corrupt('jpeg', 'no frame header (SOF) before the data ends')
  if (scans > MAX_JPEG_SCANS) {
    throw new ApiError('corrupt_image', `The JPEG has more than ${MAX_JPEG_SCANS} scans (real files have a few dozen at most); it is refused without decoding.`)
  }
  if (frame.components === 4) {
    throw new ApiError('unsupported_format', `CMYK JPEG input is not supported; ${SUPPORTED} in RGB or greyscale`, {
      detected: 'jpeg-cmyk',
    })
  }
  return {
    ...baseHeader('jpeg', frame.width, frame.height),
    orientation: orientation ?? 1,
    hasAlpha: false,
    bitDepth: frame.precision,
    progressive: frame.progressive,
    scans,
    // A walk that gave up on marker count cannot tell; the decoder decides then.
    truncated: !ended && markers < MAX_JPEG_MARKERS,
  }
}

/**
 * Offset of the next marker's 0xFF at or after `pos` (fill bytes skipped), or -1. Garbage between
 * segments is tolerated the way libjpeg does ("extraneous bytes before marker").
 */
function findMarker(bytes: Uint8Array, pos: number): number {
  let at = nextFF(bytes, pos)
  while (at >= 0 && at + 1 < bytes.length) {
    const next = bytes[at + 1]!
    if (next !== 0xff && next !== 0x00) return at
    at = nextFF(bytes, at + 1)
  }
  return -1
}

/**
 * Skip entropy-coded scan data: the scan ends at the first 0xFF followed by a byte that is neither
 * a stuffed zero, a restart marker (D0-D7) nor another fill 0xFF. Returns that 0xFF's offset, or
 * the buffer length when the data is cut off.
 */
function skipEntropyCoded(bytes: Uint8Array, pos: number): number {
  let at = nextFF(bytes, pos)
  while (at >= 0 && at + 1 < bytes.length) {
    const next = bytes[at + 1]!
    if (next === 0xff) {
      at++
      continue
    }
    if (next !== 0x00 && (next < 0xd0 || next > 0xd7)) return at
    at = nextFF(bytes, at + 2)
  }
  return bytes.length
}

/** Bytes checked by hand before falling back to indexOf, whose per-call cost dominates when 0xFF is dense. */
const NEAR_SCAN = 16

/** Offset of the next 0xFF at or after `from`, or -1. */
function nextFF(bytes: Uint8Array, from: number): number {
  const near = Math.min(bytes.length, from + NEAR_SCAN)
  for (let i = from; i < near; i++) {
    if (bytes[i] === 0xff) return i
  }
  return near < bytes.length ? bytes.indexOf(0xff, near) : -1
}

function readJpegFrame(r: Reader, marker: number, payload: number, length: number): JpegFrame {
  // Length field (2) + precision (1) + height (2) + width (2) + component count (1).
  if (length < 8) throw corrupt('jpeg', `the frame header is ${length} bytes long`)
  return {
    precision: r.u8(payload),
    height: r.u16(payload + 1),
    width: r.u16(payload + 3),
    progressive: isProgressiveFrame(marker),
    components: r.u8(payload + 5),
  }
}

/** Orientation from APP1 if it is an Exif segment; undefined when this APP1 is something else (XMP). */
function jpegApp1Orientation(r: Reader, payload: number, end: number): number | undefined {
  if (end < payload + 6 || !r.matches(payload, [0x45, 0x78, 0x69, 0x66, 0x00, 0x00])) return undefined
  const tiffEnd = Math.min(end, r.length)
  if (tiffEnd <= payload + 6) return 1
  return exifOrientation(r.bytes.subarray(payload + 6, tiffEnd))
}

// ---------------------------------------------------------------------------------------------
// PNG
// ---------------------------------------------------------------------------------------------

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
  if (r.u32(8) !== 13 || !r.matchesAscii(12, 'IHDR')) throw corrupt('png', 'the first chunk is not a 13-byte IHDR')
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
  }
}

function validateIhdr(r: Reader, width: number, height: number, bitDepth: number, colourType: number): void {
  if (width === 0 || height === 0) throw corrupt('png', `it declares a zero dimension (${width}x${height})`)
  if (width > PNG_MAX_DIMENSION || height > PNG_MAX_DIMENSION) throw corrupt('png', 'a dimension is over 2^31-1')
  const depths = PNG_DEPTHS[colourType]
  if (!depths) throw corrupt('png', `colour type ${colourType} does not exist`)
  if (!depths.includes(bitDepth)) throw corrupt('png', `bit depth ${bitDepth} is not allowed for colour type ${colourType}`)
  if (r.u8(26) !== 0 || r.u8(27) !== 0) throw corrupt('png', 'unknown compression or filter method')
  if (r.u8(28) > 1) throw corrupt('png', `unknown interlace method ${r.u8(28)}`)
  // The IHDR CRC is 17 bytes of work and catches headers mangled in transit.
  if (crc32(r.bytes, 12, 29) !== r.u32(29)) throw corrupt('png', 'the IHDR checksum does not match')
}

interface PngChunkInfo {
  transparency: boolean
  frames: number
}

/** Chunk types as big-endian integers, so the walk compares numbers instead of building strings. */
const CHUNK_IDAT = 0x49444154
const CHUNK_IEND = 0x49454e44
const CHUNK_TRNS = 0x74524e53
const CHUNK_ACTL = 0x6163544c

/** Real files have a handful of chunks before IDAT; past this many the walk leaves the rest to the decoder. */
const MAX_PNG_HEADER_CHUNKS = 4096

/**
 * Walk the chunks between IHDR and the first IDAT (tRNS, acTL). A chunk there that runs past the
 * end, or reaching IEND first, means there is no image data to decode.
 */
function walkPngChunks(r: Reader, start: number): PngChunkInfo {
  const info: PngChunkInfo = { transparency: false, frames: 1 }
  let pos = start
  for (let chunks = 0; r.has(pos, 8); chunks++) {
    if (chunks === MAX_PNG_HEADER_CHUNKS) return info
    const length = r.u32(pos)
    const type = r.u32(pos + 4)
    if (!isChunkType(r, pos + 4)) throw corrupt('png', 'a chunk type is not four letters')
    if (type === CHUNK_IDAT) return info
    if (type === CHUNK_IEND) break
    if (!r.has(pos + 8, length + 4)) throw corrupt('png', `the ${r.fourcc(pos + 4)} chunk runs past the end of the data`)
    if (type === CHUNK_TRNS) info.transparency = true
    if (type === CHUNK_ACTL && length >= 8) info.frames = Math.max(1, r.u32(pos + 8))
    pos += 12 + length
  }
  throw corrupt('png', 'no image data (IDAT) before the data ends')
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

function crc32(bytes: Uint8Array, start: number, end: number): number {
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

// ---------------------------------------------------------------------------------------------
// GIF
// ---------------------------------------------------------------------------------------------

const GIF_EXTENSION = 0x21
const GIF_IMAGE = 0x2c
const GIF_TRAILER = 0x3b
const GIF_GRAPHIC_CONTROL = 0xf9

interface GifBlocks {
  frames: number
  firstWidth: number
  firstHeight: number
  transparent: boolean
}

function readGif(r: Reader): ImageHeader {
  const screenWidth = r.u16(6, true)
  const screenHeight = r.u16(8, true)
  const packed = r.u8(10)
  const globalTable = packed & 0x80 ? 3 * (1 << ((packed & 7) + 1)) : 0
  const blocks = walkGifBlocks(r, 13 + globalTable)
  if (blocks.frames === 0) throw corrupt('gif', 'no image descriptor before the data ends')
  // The decoder draws on the logical screen; only a 0x0 screen falls back to the first frame.
  const useFrame = screenWidth === 0 || screenHeight === 0
  // The decoder also allocates and walks the first frame's own rectangle, which the limits below do
  // not see: a 1x1 screen with a 65535x65535 frame would take 4 GiB and minutes.
  if (!useFrame && blocks.firstWidth * blocks.firstHeight > screenWidth * screenHeight) {
    throw corrupt('gif', `the first frame (${blocks.firstWidth}x${blocks.firstHeight}) is larger than the logical screen (${screenWidth}x${screenHeight})`)
  }
  return {
    ...baseHeader('gif', useFrame ? blocks.firstWidth : screenWidth, useFrame ? blocks.firstHeight : screenHeight),
    hasAlpha: blocks.transparent ? true : undefined,
    frames: blocks.frames,
  }
}

/** Count image descriptors; stops quietly at the trailer, unknown bytes or truncation. */
function walkGifBlocks(r: Reader, start: number): GifBlocks {
  const blocks: GifBlocks = { frames: 0, firstWidth: 0, firstHeight: 0, transparent: false }
  let pos = start
  while (r.has(pos, 1)) {
    const introducer = r.u8(pos)
    if (introducer === GIF_TRAILER) break
    if (introducer === GIF_EXTENSION) {
      if (!r.has(pos, 4)) break
      const label = r.u8(pos + 1)
      if (label === GIF_GRAPHIC_CONTROL && blocks.frames === 0 && r.u8(pos + 2) >= 4) {
        blocks.transparent = (r.u8(pos + 3) & 1) === 1
      }
      pos = skipGifSubBlocks(r, pos + 2)
    } else if (introducer === GIF_IMAGE) {
      if (!r.has(pos, 10)) break
      blocks.frames++
      if (blocks.frames === 1) {
        blocks.firstWidth = r.u16(pos + 5, true)
        blocks.firstHeight = r.u16(pos + 7, true)
      }
      const packed = r.u8(pos + 9)
      const localTable = packed & 0x80 ? 3 * (1 << ((packed & 7) + 1)) : 0
      // Skip the LZW minimum code size byte, then the data sub-blocks.
      pos = skipGifSubBlocks(r, pos + 10 + localTable + 1)
    } else {
      // Garbage where a block should start: the decoder stops here too.
      break
    }
  }
  return blocks
}

/** Offset just after a sub-block chain's zero terminator, or the buffer length if it is cut off. */
function skipGifSubBlocks(r: Reader, pos: number): number {
  while (r.has(pos, 1)) {
    const size = r.u8(pos)
    if (size === 0) return pos + 1
    pos += size + 1
  }
  return r.length
}

// ---------------------------------------------------------------------------------------------
// WebP
// ---------------------------------------------------------------------------------------------

const VP8X_ALPHA = 0x10
const VP8X_ANIMATION = 0x02

function readWebp(r: Reader): ImageHeader {
  const type = r.fourcc(12)
  const data = 20
  if (type === 'VP8 ') return readVp8(r, data)
  if (type === 'VP8L') return readVp8l(r, data)
  if (type === 'VP8X') return readVp8x(r, data)
  throw corrupt('webp', `unexpected first chunk '${type}'`)
}

function readVp8(r: Reader, data: number): ImageHeader {
  const frameTag = r.u8(data)
  if (frameTag & 1) throw corrupt('webp', 'the VP8 frame is not a key frame')
  if (!r.matches(data + 3, [0x9d, 0x01, 0x2a])) throw corrupt('webp', 'the VP8 start code is missing')
  return {
    ...baseHeader('webp', r.u16(data + 6, true) & 0x3fff, r.u16(data + 8, true) & 0x3fff),
    hasAlpha: false,
  }
}

function readVp8l(r: Reader, data: number): ImageHeader {
  if (r.u8(data) !== 0x2f) throw corrupt('webp', 'the VP8L signature is missing')
  const bits = r.u32(data + 1, true)
  if (bits >>> 29 !== 0) throw corrupt('webp', 'unknown VP8L version')
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

// ---------------------------------------------------------------------------------------------
// AVIF (ISO-BMFF / HEIF)
// ---------------------------------------------------------------------------------------------

interface Box {
  type: string
  /** Offset of the payload (after size, type and any 64-bit size). */
  start: number
  end: number
}

/** Bounds memory and time on files made of millions of empty boxes; real containers hold far fewer. */
const MAX_CHILD_BOXES = 4096

/**
 * Child boxes of [start, end). A box that runs past `end` is clamped and ends the walk, so a
 * truncated file still yields what is readable; malformed sizes end the walk too.
 */
function childBoxes(r: Reader, start: number, end: number): Box[] {
  const boxes: Box[] = []
  let pos = start
  while (pos + 8 <= end && boxes.length < MAX_CHILD_BOXES) {
    let size = r.u32(pos)
    const type = r.fourcc(pos + 4)
    let header = 8
    if (size === 1) {
      if (pos + 16 > end) break
      size = r.u32(pos + 8) * 2 ** 32 + r.u32(pos + 12)
      header = 16
    } else if (size === 0) {
      size = end - pos
    }
    if (size < header) break
    const boxEnd = pos + size
    boxes.push({ type, start: pos + header, end: Math.min(boxEnd, end) })
    if (boxEnd > end) break
    pos = boxEnd
  }
  return boxes
}

type ItemProperty =
  | { type: 'ispe'; width: number; height: number }
  | { type: 'pixi'; bits: number }
  | { type: 'av1C'; bits: number }
  | { type: 'irot'; angle: number }
  | { type: 'imir'; axis: number }
  | { type: 'alpha' }
  | { type: 'other' }

const AUX_ALPHA_URNS = ['urn:mpeg:mpegB:cicp:systems:auxiliary:alpha', 'urn:mpeg:hevc:2015:auxid:1']

interface AvifMeta {
  /** Properties associated with the primary item, in association order; undefined when unknown. */
  primary: ItemProperty[] | undefined
  all: ItemProperty[]
}

interface AvifTrack {
  width: number
  height: number
  samples: number | undefined
}

function readAvif(r: Reader): ImageHeader {
  const top = childBoxes(r, 0, r.length)
  const metaBox = top.find((box) => box.type === 'meta')
  const moovBox = top.find((box) => box.type === 'moov')
  const meta = metaBox ? readAvifMeta(r, metaBox) : undefined
  const track = moovBox ? tolerant(() => readAvifTrack(r, moovBox), undefined) : undefined
  const props = meta?.primary ?? meta?.all ?? []
  const size = findSize(meta?.primary ?? [], meta?.all ?? []) ?? (track?.width ? track : undefined)
  if (!size) throw corrupt('avif', 'no image size (ispe) found')
  return {
    ...baseHeader('avif', size.width, size.height),
    orientation: meta?.primary ? orientationFromTransforms(meta.primary) : 1,
    hasAlpha: meta ? meta.all.some((p) => p.type === 'alpha') : undefined,
    frames: avifFrames(ftypBrands(r).includes('avis'), track),
    bitDepth: findBitDepth(props),
  }
}

/** A sequence whose sample count we could not read still reports more than one frame. */
function avifFrames(sequence: boolean, track: AvifTrack | undefined): number {
  if (!sequence) return 1
  if (track?.samples === undefined) return 2
  return Math.max(1, track.samples)
}

/** Run a best-effort read; a box cut short gives the fallback instead of failing the whole header. */
function tolerant<T>(read: () => T, fallback: T): T {
  try {
    return read()
  } catch (error) {
    if (error instanceof OutOfBounds) return fallback
    throw error
  }
}

/** A reader that cannot see past the end of `box`, so a short box never reads its neighbour. */
function within(r: Reader, box: Box): Reader {
  return new Reader(r.bytes.subarray(0, box.end))
}

function findSize(primary: ItemProperty[], all: ItemProperty[]): { width: number; height: number } | undefined {
  const own = primary.find((p) => p.type === 'ispe')
  if (own?.type === 'ispe') return own
  let largest: { width: number; height: number } | undefined
  for (const p of all) {
    if (p.type === 'ispe' && (!largest || p.width * p.height > largest.width * largest.height)) largest = p
  }
  return largest
}

function findBitDepth(props: ItemProperty[]): number {
  for (const p of props) if (p.type === 'pixi') return p.bits
  for (const p of props) if (p.type === 'av1C') return p.bits
  return 8
}

function readAvifMeta(r: Reader, meta: Box): AvifMeta {
  const children = childBoxes(r, meta.start + 4, meta.end)
  const pitm = children.find((box) => box.type === 'pitm')
  const iprp = children.find((box) => box.type === 'iprp')
  const iprpChildren = iprp ? childBoxes(r, iprp.start, iprp.end) : []
  const ipco = iprpChildren.find((box) => box.type === 'ipco')
  const ipma = iprpChildren.find((box) => box.type === 'ipma')
  const all = ipco ? childBoxes(r, ipco.start, ipco.end).map((box) => readProperty(r, box)) : []
  const primaryId = pitm ? tolerant(() => readPrimaryItemId(within(r, pitm), pitm), undefined) : undefined
  const indices =
    ipma && primaryId !== undefined ? tolerant(() => readAssociations(within(r, ipma), ipma, primaryId), undefined) : undefined
  // Property indices are 1-based; 0 means "no property".
  const primary = indices?.map((index) => all[index - 1]).filter((p): p is ItemProperty => p !== undefined)
  return { primary, all }
}

function readProperty(r: Reader, box: Box): ItemProperty {
  return tolerant(() => parseProperty(within(r, box), box), { type: 'other' })
}

function parseProperty(r: Reader, box: Box): ItemProperty {
  const body = box.start + 4 // ispe, pixi and auxC are full boxes; irot, imir and av1C are not
  switch (box.type) {
    case 'ispe':
      return { type: 'ispe', width: r.u32(body), height: r.u32(body + 4) }
    case 'pixi':
      return { type: 'pixi', bits: r.u8(body) > 0 ? r.u8(body + 1) : 8 }
    case 'av1C':
      return { type: 'av1C', bits: av1cBitDepth(r.u8(box.start + 2)) }
    case 'irot':
      return { type: 'irot', angle: r.u8(box.start) & 3 }
    case 'imir':
      return { type: 'imir', axis: r.u8(box.start) & 1 }
    case 'auxC':
      return isAlphaAuxType(r, body, box.end) ? { type: 'alpha' } : { type: 'other' }
    default:
      return { type: 'other' }
  }
}

/** av1C byte 2: high_bitdepth (bit 6) and twelve_bit (bit 5). */
function av1cBitDepth(flags: number): number {
  if (!(flags & 0x40)) return 8
  return flags & 0x20 ? 12 : 10
}

function isAlphaAuxType(r: Reader, start: number, end: number): boolean {
  const limit = Math.min(end, start + 64)
  let urn = ''
  for (let pos = start; pos < limit; pos++) {
    const byte = r.u8(pos)
    if (byte === 0) break
    urn += String.fromCharCode(byte)
  }
  return AUX_ALPHA_URNS.includes(urn)
}

function readPrimaryItemId(r: Reader, pitm: Box): number {
  return r.u8(pitm.start) === 0 ? r.u16(pitm.start + 4) : r.u32(pitm.start + 4)
}

/** Property indices associated with `itemId` in an ipma box, in their stored order. */
function readAssociations(r: Reader, ipma: Box, itemId: number): number[] | undefined {
  const version = r.u8(ipma.start)
  const wideIndices = (r.u8(ipma.start + 3) & 1) === 1
  const entries = r.u32(ipma.start + 4)
  let pos = ipma.start + 8
  // `pos < ipma.end` bounds the loop even when the entry count is a lie.
  for (let i = 0; i < entries && pos < ipma.end; i++) {
    const id = version < 1 ? r.u16(pos) : r.u32(pos)
    pos += version < 1 ? 2 : 4
    const count = r.u8(pos)
    pos += 1
    const indices: number[] = []
    for (let j = 0; j < count; j++) {
      indices.push(wideIndices ? r.u16(pos) & 0x7fff : r.u8(pos) & 0x7f)
      pos += wideIndices ? 2 : 1
    }
    if (id === itemId) return indices
  }
  return undefined
}

/** EXIF orientation per irot quarter turns: [no imir, imir axis 0, imir axis 1]. */
const ORIENTATION_BY_TRANSFORM: readonly (readonly [number, number, number])[] = [
  [1, 4, 2],
  [8, 5, 7],
  [3, 2, 4],
  [6, 7, 5],
]

/**
 * HEIF applies irot (anticlockwise quarter turns) and then imir (axis 0 swaps top and bottom,
 * axis 1 swaps left and right); this finds the EXIF orientation describing the same transform.
 */
function orientationFromTransforms(props: ItemProperty[]): number {
  let angle = 0
  let axis: number | undefined
  for (const p of props) {
    if (p.type === 'irot') angle = p.angle
    if (p.type === 'imir') axis = p.axis
  }
  const row = ORIENTATION_BY_TRANSFORM[angle] ?? ORIENTATION_BY_TRANSFORM[0]!
  return row[axis === undefined ? 0 : axis + 1] ?? 1
}

/** First track of an image sequence: sample count (frames) and coded size from its sample entry. */
function readAvifTrack(r: Reader, moov: Box): AvifTrack | undefined {
  const stbl = descend(r, moov, ['trak', 'mdia', 'minf', 'stbl'])
  if (!stbl) return undefined
  const stblChildren = childBoxes(r, stbl.start, stbl.end)
  const stsz = stblChildren.find((box) => box.type === 'stsz')
  const stsd = stblChildren.find((box) => box.type === 'stsd')
  const entry = stsd && childBoxes(r, stsd.start + 8, stsd.end)[0]
  // VisualSampleEntry: 8 bytes of SampleEntry, 16 reserved/pre-defined, then width and height.
  const size = entry ? tolerant(() => ({ width: r.u16(entry.start + 24), height: r.u16(entry.start + 26) }), undefined) : undefined
  return {
    samples: stsz ? tolerant(() => within(r, stsz).u32(stsz.start + 8), undefined) : undefined,
    width: size?.width ?? 0,
    height: size?.height ?? 0,
  }
}

/** Follow a fixed path of first-matching child boxes (no recursion). */
function descend(r: Reader, from: Box, path: readonly string[]): Box | undefined {
  let box: Box | undefined = from
  for (const type of path) {
    if (!box) return undefined
    const parent: Box = box
    box = childBoxes(r, parent.start, parent.end).find((child) => child.type === type)
  }
  return box
}
