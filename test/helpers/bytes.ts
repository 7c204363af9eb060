/** Byte-level helpers for building and inspecting test inputs. */
import { concat } from './hostile'

/** True when a JPEG has an APP1 segment starting "Exif\0\0" (walks the marker segments up to SOS). */
export function jpegHasExif(bytes: Uint8Array): boolean {
  let pos = 2
  while (pos + 4 <= bytes.length && bytes[pos] === 0xff) {
    const marker = bytes[pos + 1]!
    if (marker === 0xda || marker === 0xd9) return false
    const length = (bytes[pos + 2]! << 8) | bytes[pos + 3]!
    const isExif =
      marker === 0xe1 && String.fromCharCode(...bytes.subarray(pos + 4, pos + 8)) === 'Exif' && bytes[pos + 8] === 0 && bytes[pos + 9] === 0
    if (isExif) return true
    pos += 2 + length
  }
  return false
}

/** Equality of two byte arrays, reported as the first differing offset (-1 when equal). */
export function firstDifference(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i
  return a.length === b.length ? -1 : n
}

/**
 * `jpeg` with a 34-byte APP1 Exif segment right after SOI holding one IFD0 entry, Orientation
 * (0x0112) = `orientation`, in a big-endian TIFF header.
 */
export function withExifOrientation(jpeg: Uint8Array, orientation: number): Uint8Array {
  const app1 = new Uint8Array([
    0xff, 0xe1, 0x00, 0x22, // APP1, length 34
    0x45, 0x78, 0x69, 0x66, 0x00, 0x00, // "Exif\0\0"
    0x4d, 0x4d, 0x00, 0x2a, 0x00, 0x00, 0x00, 0x08, // "MM", 42, IFD0 at 8
    0x00, 0x01, // one entry
    0x01, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, 0x00, orientation, 0x00, 0x00, // Orientation, SHORT, 1
    0x00, 0x00, 0x00, 0x00, // no next IFD
  ])
  const out = new Uint8Array(jpeg.length + app1.length)
  out.set(jpeg.subarray(0, 2))
  out.set(app1, 2)
  out.set(jpeg.subarray(2), 2 + app1.length)
  return out
}

/** `jpeg` with its first Huffman table's code counts claiming more than 256 codes (libjpeg: "Bogus Huffman table definition"). */
export function jpegWithBogusHuffmanTable(jpeg: Uint8Array): Uint8Array {
  const out = jpeg.slice()
  for (let pos = 2; pos + 4 <= out.length && out[pos] === 0xff; pos += 2 + ((out[pos + 2]! << 8) | out[pos + 3]!)) {
    if (out[pos + 1] === 0xc4) {
      out.fill(0xff, pos + 5, pos + 5 + 16)
      return out
    }
  }
  throw new Error('no DHT segment before the first scan')
}

/** A JPEG marker segment: 0xFF, `marker`, its length, then the payload's parts. */
export function jpegSegment(marker: number, ...payload: Uint8Array[]): Uint8Array {
  const length = payload.reduce((sum, part) => sum + part.length, 0) + 2
  return concat(Uint8Array.of(0xff, marker, length >> 8, length & 0xff), ...payload)
}

/** `jpeg` with `segments` (jpegSegment) right after SOI. */
export const withJpegSegments = (jpeg: Uint8Array, ...segments: Uint8Array[]): Uint8Array => concat(jpeg.subarray(0, 2), ...segments, jpeg.subarray(2))
