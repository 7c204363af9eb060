/**
 * What every format's header reader shares: the ImageHeader it fills in, the defaults it starts
 * from, the `corrupt_image` error it throws, and the shape of a format's entry in the dispatcher
 * (src/pipeline/sniff.ts). Format folders import this module; it imports none of them.
 */
import { ApiError } from '../../errors'
import type { Reader } from './reader'

export type InputFormat = 'jpeg' | 'png' | 'webp' | 'avif' | 'gif'

/** How a YUV image stores chroma: subsampled both ways, horizontally only, not at all, or no chroma (grey). */
export type Chroma = '420' | '422' | '444' | 'mono'

export interface ImageHeader {
  format: InputFormat
  /** Stored pixel dimensions as in the file header (before EXIF orientation). */
  width: number
  height: number
  /**
   * EXIF orientation 1-8 from JPEG APP1 Exif, the WebP EXIF chunk, or AVIF irot/imir mapped to the
   * equivalent EXIF value; 1 when absent or invalid (0, >8).
   */
  orientation: number
  /**
   * true/false when the header says, undefined if unknown. PNG: colour type 4/6 or tRNS before IDAT;
   * WebP: VP8X alpha flag, VP8L alpha hint or an ALPH chunk; GIF: true when the first frame's
   * graphic control extension sets transparency or the frame does not cover the logical screen; AVIF: an auxC alpha property
   * (undefined for a sequence without item metadata); JPEG: false.
   */
  hasAlpha: boolean | undefined
  /**
   * Frames when the header shows animation: GIF image descriptors, WebP ANMF chunks (VP8X
   * animation flag), PNG acTL num_frames, AVIF sequence sample count (2 when an 'avis' file's count
   * cannot be read). 1 otherwise.
   */
  frames: number
  /**
   * GIF: the NETSCAPE2.0 (or ANIMEXTS1.0) loop count, more repeats after the first play (0: forever); undefined when
   * the file has none (it plays once). Other formats: undefined (an animated WebP's is read with its frames).
   */
  loop?: number
  /** GIF: a frame after the first lies partly or wholly outside the logical screen (refused when every frame is converted). */
  frameOutside?: boolean
  /** PNG bit depth (1-16); AVIF pixi, else av1C; JPEG sample precision (8, 12 or 16); 8 otherwise. */
  bitDepth: number
  /** AVIF: the av1C's chroma subsampling (of the primary item, or of a grid's first cell); undefined otherwise or when unknown. */
  chroma?: Chroma
  /**
   * JPEG: a progressive DCT frame, and the number of SOS markers seen walking the segments (the walk
   * gives up after 65536 markers). PNG: Adam7 interlaced (its rows are complete only after the last
   * pass, so it is decoded whole), 1 scan. GIF: the first frame is interlaced (its indices are decoded
   * whole, 1 B per pixel). Other formats: false / 1.
   */
  progressive: boolean
  scans: number
  /** JPEG only: the data ends before the end-of-image marker (decoders would grey-fill the rest). */
  truncated: boolean
  /**
   * WebP only: the image is lossless (a VP8L bitstream, whose decoder holds the whole image as ARGB
   * while it decodes); for an animation, whether a VP8L chunk was seen at the top level (frames' are
   * inside ANMF chunks, so false there). Other formats: false.
   */
  lossless: boolean
  /**
   * What the header says about the colours: `srgb` when it says nothing else (or sRGB itself: a PNG sRGB chunk,
   * AVIF nclx with sRGB's primaries); `profile` for an ICC profile (JPEG APP2, PNG iCCP, the WebP VP8X ICC flag,
   * AVIF colr prof/rICC), PNG gAMA or cHRM, AVIF nclx with other primaries; `cmyk` for a four-component JPEG. The
   * lean codec converts `profile` and `cmyk` to sRGB in the row pipeline (and finds an sRGB profile to be one).
   */
  colour: 'srgb' | 'profile' | 'cmyk'
  /** The file's size in bytes, when the caller knows it: a PNG's decoder holds its file, whose size per pixel varies tenfold. */
  fileBytes?: number
  /** The file is read as the decoder asks for it (a PNG body's stream, src/pipeline/body.ts), never held whole. */
  streamed?: boolean
}

/** The end of every `unsupported_format` detail: what we do take. */
export const SUPPORTED = 'send JPEG, PNG, WebP, AVIF or GIF'

/**
 * One supported format's header reader, as the dispatcher calls it: `matches` looks at the magic
 * bytes only (never throws); `read` throws `corrupt_image` for a broken header, and lets the reader's
 * `OutOfBounds` through for one cut short, which the dispatcher names as truncated.
 */
export interface HeaderFormat {
  format: InputFormat
  /** The name used in error details ("The WebP header is invalid: ..."). */
  name: string
  matches(r: Reader): boolean
  read(r: Reader): ImageHeader
}

/** `corrupt_image` for a header that breaks its format's rules; `name` as in HeaderFormat. */
export function corrupt(name: string, problem: string): ApiError {
  return new ApiError('corrupt_image', `The ${name} header is invalid: ${problem}`)
}

/** A still, 8-bit, upright header of this size: each reader overrides what its file says. */
export function baseHeader(format: InputFormat, width: number, height: number): ImageHeader {
  return { format, width, height, orientation: 1, hasAlpha: undefined, frames: 1, bitDepth: 8, progressive: false, scans: 1, truncated: false, lossless: false, colour: 'srgb' }
}

/** The size the image has once its orientation is applied: 5-8 swap width and height. */
export function uprightSize({ width, height, orientation }: ImageHeader): { width: number; height: number } {
  return orientation >= 5 ? { width: height, height: width } : { width, height }
}
