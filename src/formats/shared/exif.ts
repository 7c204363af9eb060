/**
 * EXIF orientation (the TIFF structure inside a JPEG's APP1 segment or a WebP's EXIF chunk). Only
 * the orientation tag is read; broken EXIF is ignored, never an error.
 */
import { OutOfBounds, Reader } from './reader'

/** EXIF orientation values outside 1-8 (0 is common) mean "no rotation". */
function validOrientation(value: number): number {
  return Number.isInteger(value) && value >= 1 && value <= 8 ? value : 1
}

const TAG_ORIENTATION = 0x0112
const TIFF_SHORT = 3
const TIFF_LONG = 4

/** Orientation from a TIFF-structured EXIF block; broken EXIF is ignored, never an error. */
export function exifOrientation(tiff: Uint8Array): number {
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

/** "Exif\0\0", which starts a JPEG APP1 Exif segment and may start a WebP EXIF chunk. */
export const EXIF_PREFIX = [0x45, 0x78, 0x69, 0x66, 0x00, 0x00] as const

/** The TIFF block inside an "Exif\0\0"-prefixed payload, or the payload itself if it has no prefix. */
export function stripExifPrefix(payload: Uint8Array): Uint8Array {
  const r = new Reader(payload)
  return r.matches(0, EXIF_PREFIX) ? payload.subarray(6) : payload
}
