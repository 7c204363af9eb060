/**
 * JPEG header: the frame (size, precision, progressive, components), the EXIF orientation and whether an ICC profile is there, from a
 * walk over the marker segments that also counts scans and sees whether the end-of-image marker
 * arrives. Entropy-coded data is skipped, never decoded.
 */
import { ApiError } from '../../errors'
import { EXIF_PREFIX, exifOrientation } from '../shared/exif'
import { baseHeader, corrupt, type HeaderFormat, type ImageHeader } from '../shared/header'
import type { Reader } from '../shared/reader'

const NAME = 'JPEG'

/** The file starts with SOI and the start of the next marker. */
export const jpegHeader: HeaderFormat = {
  format: 'jpeg',
  name: NAME,
  matches: (r) => r.matches(0, [0xff, 0xd8, 0xff]),
  read: readJpeg,
}

const SOI = 0xd8
const EOI = 0xd9
const SOS = 0xda
const APP1 = 0xe1
const APP2 = 0xe2
/** An APP2 segment holding (a piece of) an ICC profile starts with this. */
export const ICC_PREFIX = [...'ICC_PROFILE'].map((c) => c.charCodeAt(0)).concat(0)
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
  let icc = false
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
    if (length < 2) throw corrupt(NAME, `segment 0x${marker.toString(16)} has length ${length}`)
    const payload = pos + 2
    const end = pos + length
    if (isStartOfFrame(marker) && !frame) frame = readJpegFrame(r, marker, payload, length)
    if (marker === APP1 && orientation === undefined) orientation = jpegApp1Orientation(r, payload, end)
    if (marker === APP2 && end >= payload + ICC_PREFIX.length && r.matches(payload, ICC_PREFIX)) icc = true
    if (marker === SOS) {
      scans++
      pos = skipEntropyCoded(r.bytes, end)
      continue
    }
    pos = end
  }
  if (!frame) throw corrupt(NAME, 'no frame header (SOF) before the data ends')
  if (scans > MAX_JPEG_SCANS) {
    throw new ApiError('corrupt_image', `The JPEG has more than ${MAX_JPEG_SCANS} scans (real files have a few dozen at most); it is refused without decoding.`)
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
    colour: frame.components === 4 ? 'cmyk' : icc ? 'profile' : 'srgb',
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
  if (length < 8) throw corrupt(NAME, `the frame header is ${length} bytes long`)
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
  if (end < payload + 6 || !r.matches(payload, EXIF_PREFIX)) return undefined
  const tiffEnd = Math.min(end, r.length)
  if (tiffEnd <= payload + 6) return 1
  return exifOrientation(r.bytes.subarray(payload + 6, tiffEnd))
}

