import { env } from 'cloudflare:workers'
import { type LeanCodec, leanCodec, LeanFailure, MemoryCap, type PaletteResult } from '../../wasm'
import { limitsOf } from '../env'
import type { ImageHeader, InputFormat } from '../pipeline/sniff'

export type OutputFormat = 'jpeg' | 'png' | 'webp' | 'avif'
export type FormatId = InputFormat

/** An encoder's file, and for a lossy PNG the palette it made (the answer's X-Palette headers). */
export interface EncodedImage {
  bytes: Uint8Array
  palette?: PaletteResult | undefined
}

/** What the pipeline asks of an encoder, already validated and on the service's common scales. */
export interface EncodeSettings {
  /** 1-100; absent for lossless-only formats. */
  quality: number
  lossless: boolean
  /** 0-9, the service's one effort scale; each codec maps it onto its own speed/method/level. */
  effort: number
  /**
   * JPEG only: encode with libjpeg-turbo (standard tables, no trellis quantisation) instead of
   * MozJPEG, at effort 0-2 or for a conversion MozJPEG cannot fit in the memory budget
   * (planConversion decides).
   */
  turbo?: boolean
  /** JPEG with MozJPEG: its trellis per scan, in passes over a copy of every coefficient (effort 8-9 where it fits), not in one pass. */
  trellisPasses?: boolean
  /** PNG only: a palette of at most `colours` entries, the fewest reaching `quality` (lossy PNG, `quality` or `colors` given). */
  palette?: { colours: number; quality: number } | undefined
  /** quality=auto: `quality` is where the search starts; it looks for the lowest whose sample scores `target` or more. */
  autoQuality?: AutoQualityRange | undefined
  /** max_bytes: after the first pass, lower qualities are tried until the answer is this many bytes or fewer. */
  fitTo?: number | undefined
  /** WebP only (`animated`, default true): an animation's every frame is written (an animated WebP), not the first. */
  animate?: boolean | undefined
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
  /**
   * Decode to RGBA. `scaleEighths` (1-8, default 8) asks a decoder that can scale while decoding
   * (JPEG, in the DCT; a still WebP, by libwebp's rescaler) for about scaleEighths/8 of the stored size; others ignore it.
   */
  decode?: (bytes: Uint8Array, header: ImageHeader, scaleEighths?: number) => Promise<ImageData>
  /** The decoder applies the header's orientation itself (the JPEG decoder does, for EXIF). */
  orientsItself?: boolean
  encode?: (image: ImageData, settings: EncodeSettings) => Promise<EncodedImage>
  /**
   * The effort actually used for an image of this many pixels: a codec whose CPU time grows steeply
   * with effort lowers it for large images so a request stays within the Workers CPU limit.
   */
  effortFor?: (requested: number, pixels: number) => number
  /**
   * quality=auto (src/pipeline/auto-quality.ts): the default SSIMULACRA 2 `target`, calibrated so that over a mixed
   * set of images it costs no more bytes than the default quality (docs/notes/benchmarks.md item 28), and the qualities searched.
   */
  autoQuality?: AutoQualityRange
}

/** quality=auto's default target score (0-100) and the lowest and highest quality it may choose. */
export interface AutoQualityRange {
  target: number
  low: number
  high: number
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
  description: 'Encode without loss; quality may not be given with it (400 invalid_option).',
}

/** Turn a decoder's "null" or trap into the public corrupt_image error. */
export function decodedOrThrow<T>(result: T | null | undefined, format: string): T {
  if (!result) throw new DecodeFailure(`${format} data could not be decoded`)
  return result
}

export class DecodeFailure extends Error {}

/**
 * The memory cap of one decoder instance: MEMORY_BUDGET_MIB, the most one whole conversion may use.
 * The limits before decoding trust the header's size; a bitstream much bigger than its header (an
 * AVIF whose AV1 frame is 4200x4200 behind an ispe of 16x16: +234 MiB, an animated WebP frame bigger
 * than its canvas: +149 MiB) or a file that needs far more than the memory model says (a 4 MP
 * 12-bit AVIF with alpha: +251 MiB) runs into it and fails, instead of taking the isolate's 128 MB.
 * Read from the Worker's [vars] (per-request overrides in tests do not reach it).
 */
export function decoderMemoryCap(): MemoryCap {
  return new MemoryCap(limitsOf(env).memoryBudgetMiB * 1024 * 1024)
}

/** An encoder's memory is bounded by the plan's estimate, not by its input; this cap only stops a runaway. */
export const encoderMemoryCap = (): MemoryCap => new MemoryCap(1024 * 1024 * 1024)

/** Run a capped decode; if it fails after running into the cap, say so instead of "could not be decoded". */
export function capped<T>(cap: MemoryCap, header: ImageHeader, decode: () => T): T {
  try {
    return decode()
  } catch (error) {
    throw cappedError(cap, header, error)
  }
}

/** What `capped` throws for `error`: the memory budget named when the decode ran into the cap. */
export function cappedError(cap: MemoryCap, header: ImageHeader, error: unknown): unknown {
  if (!cap.reached) return error
  const mib = Math.round(cap.maxBytes / 1024 / 1024)
  return new DecodeFailure(`decoding this ${header.width}x${header.height} image needs more than the memory budget of ${mib} MiB (MEMORY_BUDGET_MIB)`)
}

/** The lean codec's libraries' own messages ("Bogus Huffman table definition", "IDAT: CRC error") are specific and safe to show. */
export function leanFailure<T>(library: string, work: () => T): T {
  try {
    return work()
  } catch (error) {
    throw leanError(library, error)
  }
}

/** What `leanFailure` throws for `error`. */
export const leanError = (library: string, error: unknown): unknown => (error instanceof LeanFailure ? new DecodeFailure(`${library}: ${error.message}`) : error)

/**
 * A whole image from one of the lean codec's row sources (GIF, AVIF): `open` starts the source, and its rows
 * are collected as RGBA, a view of the lean memory. Capped at MEMORY_BUDGET_MIB; `library` names the failure.
 *
 * @example
 * decodeFromRows('giflib', header, (lean) => lean.rowsFromGif(bytes, header.width, header.height))
 */
export function decodeFromRows(library: string, header: ImageHeader, open: (lean: LeanCodec) => void): ImageData {
  const cap = decoderMemoryCap()
  return capped(cap, header, () =>
    leanFailure(library, () => {
      const lean = leanCodec(cap)
      open(lean)
      return lean.rowsToRgba()
    }),
  )
}
