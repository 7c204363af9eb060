import type { ImageHeader, InputFormat } from '../pipeline/sniff'

export type OutputFormat = 'jpeg' | 'png' | 'webp' | 'avif'
export type FormatId = InputFormat

/** What the pipeline asks of an encoder, already validated and on the service's common scales. */
export interface EncodeSettings {
  /** 1-100; absent for lossless-only formats. */
  quality: number
  lossless: boolean
  /** 0-9, the service's one effort scale; each codec maps it onto its own speed/method/level. */
  effort: number
}

/** A documented option of a format, as published by /api/formats. */
export interface OptionInfo {
  type: 'integer' | 'boolean'
  min?: number
  max?: number
  default: number | boolean
  description: string
}

export interface Codec {
  id: FormatId
  label: string
  mime: string
  extensions: string[]
  /** Has a lossy mode (quality applies). */
  lossy: boolean
  /** Has a lossless mode (`lossless=true` applies, or is the only mode). */
  lossless: boolean
  /** Can carry an alpha channel. */
  alpha: boolean
  /** Output options this format accepts, with their defaults. */
  options: Partial<Record<keyof EncodeSettings, OptionInfo>>
  decode?: (bytes: Uint8Array, header: ImageHeader) => Promise<ImageData>
  /** The decoder applies the header's orientation itself (MozJPEG does for EXIF). */
  orientsItself?: boolean
  encode?: (image: ImageData, settings: EncodeSettings) => Promise<Uint8Array>
  /**
   * The effort actually used for an image of this many pixels: a codec whose CPU time grows steeply
   * with effort lowers it for large images so a request stays within the Workers CPU limit.
   */
  effortFor?: (requested: number, pixels: number) => number
}

/** The effort option every encoder shares; `description` says what it maps onto. */
export const effortOption = (fallback: number, description: string): OptionInfo => ({
  type: 'integer',
  min: 0,
  max: 9,
  default: fallback,
  description,
})

export const qualityOption = (fallback: number): OptionInfo => ({
  type: 'integer',
  min: 1,
  max: 100,
  default: fallback,
  description: 'Lossy quality: 1 smallest, 100 best.',
})

export const losslessOption: OptionInfo = {
  type: 'boolean',
  default: false,
  description: 'Encode without loss; quality is then ignored.',
}

/** Turn a decoder's "null" or trap into the public corrupt_image error. */
export function decodedOrThrow<T>(result: T | null | undefined, format: string): T {
  if (!result) throw new DecodeFailure(`${format} data could not be decoded`)
  return result
}

export class DecodeFailure extends Error {}
