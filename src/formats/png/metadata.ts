/**
 * PNG metadata: the ICC profile in iCCP (zlib-compressed), EXIF in eXIf, XMP in an iTXt chunk keyed
 * "XML:com.adobe.xmp"; stripped (those and tEXt, zTXt, tIME go); written after IHDR.
 */
import { joinParts } from '../../lib/bytes'
import { ascii, deflate, inflate, type Metadata } from '../shared/metadata'
import { Reader } from '../shared/reader'
import { crc32 } from './header'

const XMP_KEY = ascii('XML:com.adobe.xmp\0')
const STRIPPED = new Set(['iCCP', 'eXIf', 'tEXt', 'zTXt', 'iTXt', 'tIME'])

interface Chunk {
  type: string
  at: number
  data: number
  end: number
}

function chunks(bytes: Uint8Array): Chunk[] {
  const list: Chunk[] = []
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  for (let at = 8; at + 12 <= bytes.length && list.length < 65536; ) {
    const length = view.getUint32(at)
    const end = at + 12 + length
    if (end > bytes.length) break
    const type = String.fromCharCode(...bytes.subarray(at + 4, at + 8))
    list.push({ type, at, data: at + 8, end })
    if (type === 'IEND') break
    at = end
  }
  return list
}

/** @example const { icc } = await readPngMetadata(bytes) */
export async function readPngMetadata(bytes: Uint8Array): Promise<Metadata> {
  const found: Metadata = {}
  for (const { type, data, end } of chunks(bytes)) {
    const body = bytes.subarray(data, end - 4)
    if (type === 'eXIf' && !found.exif) found.exif = body.slice()
    else if (type === 'iTXt' && !found.xmp && new Reader(body).matches(0, XMP_KEY) && body[XMP_KEY.length] === 0) {
      // keyword, compression flag 0, method, language tag and translated keyword (each ending in 0), then the text
      let at = XMP_KEY.length + 2
      for (let zeros = 0; at < body.length && zeros < 2; at++) if (body[at] === 0) zeros++
      found.xmp = body.slice(at)
    } else if (type === 'iCCP' && !found.icc) {
      const name = body.indexOf(0)
      if (name > 0 && body[name + 1] === 0) found.icc = await inflate(body.subarray(name + 2))
    }
  }
  return found
}

/** The file without iCCP, eXIf and text chunks, the image data untouched: as views of `bytes` in order. */
export function stripPngMetadata(bytes: Uint8Array): Uint8Array[] {
  const all = chunks(bytes)
  if (!all.some((chunk) => STRIPPED.has(chunk.type))) return [bytes]
  const kept = all.filter((chunk) => !STRIPPED.has(chunk.type)).map((chunk) => bytes.subarray(chunk.at, chunk.end))
  const last = all.at(-1)
  return [bytes.subarray(0, 8), ...kept, bytes.subarray(last ? last.end : 8)]
}

function chunk(type: string, ...data: Uint8Array[]): Uint8Array {
  const body = joinParts([ascii(type), ...data])
  const out = new Uint8Array(body.length + 8)
  const view = new DataView(out.buffer)
  view.setUint32(0, body.length - 4)
  out.set(body, 4)
  view.setUint32(body.length + 4, crc32(body, 0, body.length))
  return out
}

/** `png` (as the writer made it: no metadata) with `metadata` in chunks after IHDR. */
export async function writePngMetadata(png: Uint8Array, { exif, xmp, icc }: Metadata): Promise<Uint8Array> {
  const added: Uint8Array[] = []
  if (icc) added.push(chunk('iCCP', ascii('ICC profile\0\0'), await deflate(icc)))
  if (exif) added.push(chunk('eXIf', exif))
  if (xmp) added.push(chunk('iTXt', XMP_KEY, Uint8Array.of(0, 0, 0, 0), xmp))
  if (!added.length) return png
  return joinParts([png.subarray(0, 33), ...added, png.subarray(33)])
}
