/** Byte-level helpers for building and inspecting test inputs. */

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
