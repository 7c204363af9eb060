/**
 * WebP metadata: the extended format's ICCP, EXIF and XMP chunks, flagged in VP8X. Read from the top-level chunks;
 * stripped (the chunks and their flags go); written by turning a simple file into an extended one when needed
 * (ICCP before the image, EXIF and XMP after it, as the container specification orders them).
 */
import { stripExifPrefix } from '../shared/exif'
import { joinParts } from '../../lib/bytes'
import { ascii, type Metadata } from '../shared/metadata'
import { Reader } from '../shared/reader'
import { webpHeader } from './header'

const FLAG_ICC = 0x20
const FLAG_ALPHA = 0x10
const FLAG_EXIF = 0x08
const FLAG_XMP = 0x04
const METADATA = new Set(['ICCP', 'EXIF', 'XMP '])

interface Chunk {
  type: string
  at: number
  /** The payload (without the padding byte). */
  body: Uint8Array
  end: number
}

function chunks(bytes: Uint8Array): Chunk[] {
  const list: Chunk[] = []
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  for (let at = 12; at + 8 <= bytes.length && list.length < 65536; ) {
    const size = view.getUint32(at + 4, true)
    const end = Math.min(bytes.length, at + 8 + size + (size & 1))
    list.push({ type: String.fromCharCode(...bytes.subarray(at, at + 4)), at, body: bytes.subarray(at + 8, Math.min(end, at + 8 + size)), end })
    at = end
  }
  return list
}

/** @example const { exif } = readWebpMetadata(bytes) */
export function readWebpMetadata(bytes: Uint8Array): Metadata {
  const found: Metadata = {}
  for (const chunk of chunks(bytes)) {
    if (chunk.type === 'ICCP') found.icc ??= chunk.body.slice()
    else if (chunk.type === 'EXIF') found.exif ??= stripExifPrefix(chunk.body).slice()
    else if (chunk.type === 'XMP ') found.xmp ??= chunk.body.slice()
  }
  return found
}

/** The RIFF header for `parts` (12 bytes), then the parts: views, not a copy. */
function riffParts(parts: readonly Uint8Array[]): Uint8Array[] {
  const head = joinParts([ascii('RIFF'), new Uint8Array(4), ascii('WEBP')])
  new DataView(head.buffer).setUint32(4, parts.reduce((sum, part) => sum + part.length, 4), true)
  return [head, ...parts]
}

const riff = (parts: readonly Uint8Array[]): Uint8Array => joinParts(riffParts(parts))

function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(8 + data.length + (data.length & 1))
  out.set(ascii(type))
  new DataView(out.buffer).setUint32(4, data.length, true)
  out.set(data, 8)
  return out
}

/** A VP8X chunk for a `width` x `height` canvas with `flags`. */
function vp8x(flags: number, width: number, height: number): Uint8Array {
  const data = new Uint8Array(10)
  data[0] = flags
  const view = new DataView(data.buffer)
  view.setUint16(4, (width - 1) & 0xffff, true)
  data[6] = ((width - 1) >> 16) & 0xff
  view.setUint16(7, (height - 1) & 0xffff, true)
  data[9] = ((height - 1) >> 16) & 0xff
  return chunk('VP8X', data)
}

/** The file without ICCP, EXIF and XMP chunks and their VP8X flags, the image chunks untouched (views of `bytes`). */
export function stripWebpMetadata(bytes: Uint8Array): Uint8Array[] {
  const all = chunks(bytes)
  if (!all.some((c) => METADATA.has(c.type))) return [bytes]
  const parts = all
    .filter((c) => !METADATA.has(c.type))
    .map((c) => {
      if (c.type !== 'VP8X') return bytes.subarray(c.at, c.end)
      const header = bytes.slice(c.at, c.end)
      header[8]! &= ~(FLAG_ICC | FLAG_EXIF | FLAG_XMP)
      return header
    })
  return riffParts(parts)
}

/** `webp` (as libwebp wrote it: no metadata) with `metadata`, as an extended file. */
export function writeWebpMetadata(webp: Uint8Array, { exif, xmp, icc }: Metadata): Uint8Array {
  if (!exif && !xmp && !icc) return webp
  const all = chunks(webp)
  const image = all.filter((c) => c.type !== 'VP8X').map((c) => webp.subarray(c.at, c.end))
  const existing = all.find((c) => c.type === 'VP8X')
  const { width, height, hasAlpha } = webpHeader.read(new Reader(webp))
  const flags = (existing ? webp[existing.at + 8]! : hasAlpha ? FLAG_ALPHA : 0) | (icc ? FLAG_ICC : 0) | (exif ? FLAG_EXIF : 0) | (xmp ? FLAG_XMP : 0)
  return riff([
    vp8x(flags, width, height),
    ...(icc ? [chunk('ICCP', icc)] : []),
    ...image,
    ...(exif ? [chunk('EXIF', exif)] : []),
    ...(xmp ? [chunk('XMP ', xmp)] : []),
  ])
}
