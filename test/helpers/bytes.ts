/** Byte-level helpers for building and inspecting test inputs. */

let table: Uint32Array | undefined

/** CRC-32 (PNG chunk checksum) of bytes[start, end). */
export function crc32(bytes: Uint8Array, start = 0, end = bytes.length): number {
  if (!table) {
    table = new Uint32Array(256)
    for (let n = 0; n < 256; n++) {
      let c = n
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
      table[n] = c >>> 0
    }
  }
  let crc = 0xffffffff
  for (let i = start; i < end; i++) crc = table[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8)
  return (crc ^ 0xffffffff) >>> 0
}

/**
 * A copy of a PNG with its IHDR width/height replaced (and the IHDR CRC fixed), so the header
 * declares any size while the file stays tiny: for limit checks that must happen before decoding.
 */
export function withPngSize(png: Uint8Array, width: number, height: number): Uint8Array {
  const out = png.slice()
  const view = new DataView(out.buffer)
  view.setUint32(16, width)
  view.setUint32(20, height)
  view.setUint32(29, crc32(out, 12, 29))
  return out
}

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
