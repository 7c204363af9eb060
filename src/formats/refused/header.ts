/**
 * Formats we recognise but do not decode (BMP, TIFF, JPEG XL, QOI, ICO, PSD, HEIC, PDF, SVG and other
 * text), from their magic bytes alone, so the 415 can name what was sent. The dispatcher asks here
 * only after every supported format has said no.
 */
import { ApiError } from '../../errors'
import { SUPPORTED } from '../shared/header'
import { ftypBrands, hasFtyp } from '../shared/isobmff'
import type { Reader } from '../shared/reader'

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

export type UnsupportedKind = keyof typeof UNSUPPORTED_NAMES

const JXL_CONTAINER = [0x00, 0x00, 0x00, 0x0c, 0x4a, 0x58, 0x4c, 0x20, 0x0d, 0x0a, 0x87, 0x0a] as const
/** Known BITMAPINFOHEADER variants; checking it keeps text that starts with "BM" from being called BMP. */
const BMP_DIB_SIZES = [12, 16, 40, 52, 56, 64, 108, 124]
const HEIF_BRANDS = new Set(['heic', 'heix', 'heim', 'heis', 'hevc', 'hevx', 'mif1', 'msf1'])

/** How far into a text body we look for an `<svg` root after an XML prolog or comments. */
const SVG_SEARCH_WINDOW = 16 * 1024
const TEXT_SAMPLE = 1024

/**
 * What a body that no supported format claimed is, or undefined when we cannot tell. An ISO-BMFF
 * file reaches here only when it is not AVIF (AVIF wins if any brand says so): HEIF brands are named
 * HEIC; anything else (MP4, MOV) is unknown.
 */
export function identifyUnsupported(r: Reader): UnsupportedKind | undefined {
  if (hasFtyp(r)) return ftypBrands(r).some((brand) => HEIF_BRANDS.has(brand)) ? 'heic' : undefined
  return identifyOtherBinary(r) ?? identifyText(r.bytes)
}

/** The `415 unsupported_format` for a recognised kind, with `detected` naming it. */
export function unsupportedError(kind: UnsupportedKind): ApiError {
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
function identifyText(bytes: Uint8Array): 'svg' | 'text' | undefined {
  let start = 0
  if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) start = 3
  if (!looksLikeText(bytes, start)) return undefined
  while (start < bytes.length && isSpace(bytes[start]!)) start++
  if (start === bytes.length) return undefined
  const head = lowerAscii(bytes, start, Math.min(bytes.length, start + SVG_SEARCH_WINDOW))
  if (head.startsWith('<svg') || head.startsWith('<!doctype svg')) return 'svg'
  if (/^<(\?xml|!--|!doctype)/.test(head) && head.includes('<svg')) return 'svg'
  return 'text'
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

