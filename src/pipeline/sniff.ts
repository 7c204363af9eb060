/**
 * Format sniffing and header-only metadata for uploads: the dispatcher over the header readers in
 * src/formats/<format>/header.ts.
 *
 * This is the security gate in front of the decoders: it reads dimensions and a few flags from the
 * first bytes of a file without decoding pixel data, so a 50000x50000 "header bomb" is refused in
 * microseconds (a PNG's chunk checksums are checked too, one pass over its bytes). Every read is
 * bounds-checked and every loop is bounded by the buffer length.
 *
 * The format folders import only src/formats/shared (and the errors); nothing there imports this file.
 */
import { ApiError } from '../errors'
import { avifHeader } from '../formats/avif/header'
import { gifHeader } from '../formats/gif/header'
import { jpegHeader } from '../formats/jpeg/header'
import { pngHeader } from '../formats/png/header'
import { identifyUnsupported, unsupportedError, type UnsupportedKind } from '../formats/refused/header'
import { corrupt, type HeaderFormat, type ImageHeader, type InputFormat, SUPPORTED } from '../formats/shared/header'
import { OutOfBounds, Reader } from '../formats/shared/reader'
import { webpHeader } from '../formats/webp/header'

export type { ImageHeader, InputFormat } from '../formats/shared/header'
export { uprightSize } from '../formats/shared/header'
export { MAX_JPEG_SCANS } from '../formats/jpeg/header'

/** The supported formats, in the order their magic bytes are tried (none of them overlap). */
const FORMATS: readonly HeaderFormat[] = [jpegHeader, pngHeader, gifHeader, webpHeader, avifHeader]

type Identified =
  | { supported: HeaderFormat }
  | { unsupported: UnsupportedKind }
  | { unknown: true }

function identify(r: Reader): Identified {
  const supported = FORMATS.find((format) => format.matches(r))
  if (supported) return { supported }
  const kind = identifyUnsupported(r)
  return kind ? { unsupported: kind } : { unknown: true }
}

/**
 * Identify the format from magic bytes alone (never from headers or file names).
 *
 * Returns the supported format, `'svg'` for SVG/XML-with-SVG text, `'other'` for a recognised
 * unsupported format (BMP, TIFF, JPEG XL, QOI, ICO, PSD, HEIC, PDF) or other text such as HTML,
 * and `undefined` when nothing matches.
 *
 * @example
 * detectFormat(new Uint8Array([0xff, 0xd8, 0xff, 0xe0])) // 'jpeg'
 * detectFormat(new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"/>')) // 'svg'
 */
export function detectFormat(bytes: Uint8Array): InputFormat | 'svg' | 'other' | undefined {
  const found = identify(new Reader(bytes))
  if ('supported' in found) return found.supported.format
  if ('unsupported' in found) return found.unsupported === 'svg' ? 'svg' : 'other'
  return undefined
}

/**
 * Read the header of a supported image without decoding pixels.
 *
 * Throws `ApiError('missing_image')` for an empty body, `ApiError('unsupported_format')` (with a
 * `detected` extension naming the format when known) for anything that is not JPEG, PNG, WebP,
 * AVIF or GIF, and `ApiError('corrupt_image')` for a recognised format whose header is broken.
 *
 * @example
 * const header = readHeader(new Uint8Array(await request.arrayBuffer()))
 * if (header.width * header.height > maxPixels) throw new ApiError('image_too_large', '...')
 */
export function readHeader(bytes: Uint8Array): ImageHeader {
  if (bytes.length === 0) throw new ApiError('missing_image', 'The request body is empty')
  const r = new Reader(bytes)
  const found = identify(r)
  if ('unsupported' in found) throw unsupportedError(found.unsupported)
  if ('unknown' in found) {
    throw new ApiError('unsupported_format', `The body is not a recognised image; ${SUPPORTED}`)
  }
  const format = found.supported
  try {
    return checkDimensions(format, format.read(r))
  } catch (error) {
    if (error instanceof OutOfBounds) {
      throw new ApiError('corrupt_image', `The ${format.name} header is truncated`)
    }
    throw error
  }
}

function checkDimensions(format: HeaderFormat, header: ImageHeader): ImageHeader {
  if (header.width <= 0 || header.height <= 0) {
    throw corrupt(format.name, `it declares a zero dimension (${header.width}x${header.height})`)
  }
  return header
}
