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

const TAG_ARTIST = 0x013b
const TAG_COPYRIGHT = 0x8298
const TIFF_ASCII = 2

/**
 * The EXIF an output keeps: `keep`, all of it with the orientation set to 1 (the pixels are upright now);
 * `copyright`, a new TIFF block of IFD0's Artist and Copyright only (undefined when it has neither). Broken EXIF is
 * dropped (undefined), never an error.
 *
 * @example
 * const exif = exifForOutput(tiff, 'copyright') // Artist and Copyright, nothing else
 */
export function exifForOutput(tiff: Uint8Array, mode: 'copyright' | 'keep'): Uint8Array | undefined {
  try {
    return mode === 'keep' ? withOrientation1(tiff) : copyrightOnly(new Reader(tiff))
  } catch (error) {
    if (error instanceof OutOfBounds) return undefined
    throw error
  }
}

function byteOrder(r: Reader): boolean | undefined {
  if (r.matchesAscii(0, 'II')) return true
  if (r.matchesAscii(0, 'MM')) return false
  return undefined
}

function withOrientation1(tiff: Uint8Array): Uint8Array | undefined {
  const out = tiff.slice()
  const r = new Reader(out)
  const le = byteOrder(r)
  if (le === undefined || r.u16(2, le) !== 42) return undefined
  const ifd = r.u32(4, le)
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength)
  for (let i = 0; i < r.u16(ifd, le); i++) {
    const entry = ifd + 2 + i * 12
    if (r.u16(entry, le) !== TAG_ORIENTATION || !r.has(entry, 12)) continue
    if (r.u16(entry + 2, le) === TIFF_SHORT) view.setUint16(entry + 8, 1, le)
    else if (r.u16(entry + 2, le) === TIFF_LONG) view.setUint32(entry + 8, 1, le)
  }
  return out
}

function copyrightOnly(r: Reader): Uint8Array | undefined {
  const le = byteOrder(r)
  if (le === undefined || r.u16(2, le) !== 42) return undefined
  const ifd = r.u32(4, le)
  const kept: Array<{ tag: number; text: Uint8Array }> = []
  for (let i = 0; i < r.u16(ifd, le); i++) {
    const entry = ifd + 2 + i * 12
    const tag = r.u16(entry, le)
    if ((tag !== TAG_ARTIST && tag !== TAG_COPYRIGHT) || r.u16(entry + 2, le) !== TIFF_ASCII) continue
    const count = r.u32(entry + 4, le)
    const at = count <= 4 ? entry + 8 : r.u32(entry + 8, le)
    if (!r.has(at, count)) continue
    kept.push({ tag, text: r.bytes.slice(at, at + count) })
  }
  if (!kept.length) return undefined
  // Little-endian TIFF: header (8), IFD0 (2 + 12 per entry + 4), then the strings that do not fit in an entry.
  const size = 8 + 2 + 12 * kept.length + 4 + kept.reduce((sum, { text }) => sum + (text.length > 4 ? text.length + (text.length & 1) : 0), 0)
  const out = new Uint8Array(size)
  const view = new DataView(out.buffer)
  out.set([0x49, 0x49, 42, 0, 8, 0, 0, 0])
  view.setUint16(8, kept.length, true)
  let data = 8 + 2 + 12 * kept.length + 4
  kept.forEach(({ tag, text }, i) => {
    const entry = 10 + i * 12
    view.setUint16(entry, tag, true)
    view.setUint16(entry + 2, TIFF_ASCII, true)
    view.setUint32(entry + 4, text.length, true)
    if (text.length <= 4) out.set(text, entry + 8)
    else {
      view.setUint32(entry + 8, data, true)
      out.set(text, data)
      data += text.length + (text.length & 1)
    }
  })
  return out
}
