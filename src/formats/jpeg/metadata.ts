/**
 * JPEG metadata: EXIF and XMP in APP1 segments, the ICC profile in APP2 segments of up to 64 KiB (numbered, joined in
 * order), read from the segments before the first scan; stripped (APP1, APP2, APP13 and comments go, JFIF's APP0 and
 * Adobe's APP14 stay); written after SOI and JFIF.
 */
import { joinParts } from '../../lib/bytes'
import { EXIF_PREFIX } from '../shared/exif'
import { ascii, type Metadata } from '../shared/metadata'
import { Reader } from '../shared/reader'
import { ICC_PREFIX } from './header'

const EXIF = Uint8Array.from(EXIF_PREFIX)
const XMP = ascii('http://ns.adobe.com/xap/1.0/\0')
const ICC = Uint8Array.from(ICC_PREFIX)
const APP0 = 0xe0
const APP1 = 0xe1
const APP2 = 0xe2
const APP13 = 0xed
const COM = 0xfe
const SOS = 0xda
/** A segment's payload is at most 65533 bytes; an ICC piece loses 14 of them to its header. */
const MAX_PAYLOAD = 65533

interface Segment {
  marker: number
  /** The 0xFF of the marker. */
  at: number
  payload: number
  end: number
}

/** The marker segments from SOI to the first scan (fill bytes and standalone markers skipped). */
function segments(bytes: Uint8Array): Segment[] {
  const list: Segment[] = []
  let at = 2
  while (at + 4 <= bytes.length && list.length < 65536) {
    if (bytes[at] !== 0xff) break
    const marker = bytes[at + 1]!
    if (marker === 0xff) {
      at++
      continue
    }
    if (marker === SOS || marker === 0xd9) break
    if ((marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
      at += 2
      continue
    }
    const length = (bytes[at + 2]! << 8) | bytes[at + 3]!
    const end = at + 2 + length
    if (length < 2 || end > bytes.length) break
    list.push({ marker, at, payload: at + 4, end })
    at = end
  }
  return list
}

/** @example const { exif, icc } = readJpegMetadata(bytes) */
export function readJpegMetadata(bytes: Uint8Array): Metadata {
  const found: Metadata = {}
  const pieces: Array<{ index: number; data: Uint8Array }> = []
  const r = new Reader(bytes)
  for (const { marker, payload, end } of segments(bytes)) {
    if (marker === APP1 && !found.exif && r.matches(payload, EXIF)) found.exif = bytes.slice(payload + EXIF.length, end)
    else if (marker === APP1 && !found.xmp && r.matches(payload, XMP)) found.xmp = bytes.slice(payload + XMP.length, end)
    else if (marker === APP2 && r.matches(payload, ICC) && end >= payload + ICC.length + 2) {
      pieces.push({ index: bytes[payload + ICC.length]!, data: bytes.subarray(payload + ICC.length + 2, end) })
    }
  }
  if (pieces.length) found.icc = joinParts(pieces.sort((a, b) => a.index - b.index).map((piece) => piece.data))
  return found
}

const stripped = (marker: number) => marker === APP1 || marker === APP2 || marker === APP13 || marker === COM

/**
 * The file without its EXIF, XMP, ICC, Photoshop/IPTC and comment segments, the image data untouched: as views of
 * `bytes` in order (no copy of a large file).
 */
export function stripJpegMetadata(bytes: Uint8Array): Uint8Array[] {
  const drop = segments(bytes).filter((segment) => stripped(segment.marker))
  if (!drop.length) return [bytes]
  const parts: Uint8Array[] = []
  let from = 0
  for (const { at, end } of drop) {
    parts.push(bytes.subarray(from, at))
    from = end
  }
  parts.push(bytes.subarray(from))
  return parts
}

function segment(marker: number, ...payload: Uint8Array[]): Uint8Array {
  const length = payload.reduce((sum, part) => sum + part.length, 0) + 2
  return joinParts([Uint8Array.of(0xff, marker, length >> 8, length & 0xff), ...payload])
}

/** `jpeg` (as the encoder wrote it: no metadata) with `metadata` in segments after SOI and JFIF's APP0. */
export function writeJpegMetadata(jpeg: Uint8Array, { exif, xmp, icc }: Metadata): Uint8Array {
  const added: Uint8Array[] = []
  if (exif && exif.length + EXIF.length <= MAX_PAYLOAD) added.push(segment(APP1, EXIF, exif))
  if (xmp && xmp.length + XMP.length <= MAX_PAYLOAD) added.push(segment(APP1, XMP, xmp))
  if (icc) {
    const size = MAX_PAYLOAD - ICC.length - 2
    const count = Math.ceil(icc.length / size)
    if (count <= 255) {
      for (let i = 0; i < count; i++) added.push(segment(APP2, ICC, Uint8Array.of(i + 1, count), icc.subarray(i * size, (i + 1) * size)))
    }
  }
  if (!added.length) return jpeg
  const first = segments(jpeg)[0]
  const after = first?.marker === APP0 ? first.end : 2
  return joinParts([jpeg.subarray(0, after), ...added, jpeg.subarray(after)])
}
