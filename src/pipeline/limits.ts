import type { FormatId, OutputFormat } from '../codecs/registry'
import type { Limits } from '../env'
import { ApiError } from '../errors'
import type { ImageHeader } from './sniff'

/**
 * The memory model: estimated peak growth of the isolate, in MiB, for one conversion, fitted to the
 * measurements in docs/memory.md (peak RSS growth of workerd; scripts/measure-memory.mjs). Every
 * term is linear in megapixels: decoding holds the decoder's linear memory and the RGBA copy handed
 * to JS; resizing copies the pixels into the resampler and back; encoding copies them into the
 * encoder, whose working memory comes on top. Dropped instances are not reliably collected before the
 * next step grows, so the terms add up.
 */
export const MEMORY_MODEL = {
  /** Per request: body buffers, JS objects, first use of a codec. */
  baseMiB: 12,
  /** MiB per input megapixel while decoding. */
  decodePerMP: { jpeg: 9.5, png: 16, webp: 12, avif: 12, gif: 8 } as Readonly<Record<FormatId, number>>,
  /** Extra MiB per input megapixel for a progressive JPEG (coefficient buffers for every scan). */
  progressiveJpegPerMP: 3,
  /** Resampling: fixed MiB plus MiB per input (after the crop) and per output megapixel. */
  resize: { baseMiB: 4, inputPerMP: 7.6, outputPerMP: 16 },
  /** Encoding: fixed MiB (instance) plus MiB per output megapixel. */
  encode: {
    jpeg: { baseMiB: 0, perMP: 16.6 },
    webp: { baseMiB: 12.5, perMP: 12.5 },
    avif: { baseMiB: 54, perMP: 19.5 },
    png: { baseMiB: 16.5, perMP: 19.5 },
  } as Readonly<Record<OutputFormat, { baseMiB: number; perMP: number }>>,
}

export interface ConversionPlan {
  header: ImageHeader
  format: OutputFormat
  /** Pixels kept from the source (after a cover crop). */
  cropPixels: number
  /** Output size. */
  width: number
  height: number
  resized: boolean
}

/** Estimated peak memory growth, in MiB, of one conversion (see MEMORY_MODEL). */
export function estimateMiB(plan: ConversionPlan): number {
  const m = MEMORY_MODEL
  const inMP = (plan.header.width * plan.header.height) / 1e6
  const outMP = (plan.width * plan.height) / 1e6
  const progressive = plan.header.format === 'jpeg' && plan.header.progressive ? m.progressiveJpegPerMP : 0
  const decode = (m.decodePerMP[plan.header.format] + progressive) * inMP
  const resize = plan.resized ? m.resize.baseMiB + m.resize.inputPerMP * (plan.cropPixels / 1e6) + m.resize.outputPerMP * outMP : 0
  const encode = m.encode[plan.format].baseMiB + m.encode[plan.format].perMP * outMP
  return m.baseMiB + decode + resize + encode
}

const mp = (pixels: number) => `${(pixels / 1e6).toFixed(1)} MP`

/**
 * The largest width or height each encoder can write: WebP stores each dimension in 14 bits, libjpeg
 * refuses more than 65500. Without this check a 16384x1 WebP or a 65501x8 JPEG output failed inside
 * the encoder, as a 500.
 */
export const MAX_OUTPUT_DIMENSION: Readonly<Partial<Record<OutputFormat, number>>> = { webp: 16383, jpeg: 65500 }

/**
 * Step 3: refuse, from header data alone, an input whose dimensions are over the configured limit.
 * Runs before any pixel is decoded.
 *
 * @example
 * checkInput(header, limits) // throws ApiError('image_too_large', ...) for a 50000x50000 header
 */
export function checkInput(header: ImageHeader, limits: Limits): void {
  const pixels = header.width * header.height
  if (pixels > limits.maxInputPixels) {
    throw new ApiError(
      'image_too_large',
      `The image is ${header.width}x${header.height} (${mp(pixels)}); the limit is ${mp(limits.maxInputPixels)}.`,
      { limit: limits.maxInputPixels, width: header.width, height: header.height },
    )
  }
}

/**
 * Step 3, for the plan: the output size against its limit, and the whole conversion against the
 * isolate's memory budget, so an operation that would not fit is refused (422) instead of killing the
 * isolate, and every request sharing it, mid-way. Returns the estimate, in MiB.
 *
 * @example
 * const estimate = checkPlan({ header, format: 'webp', cropPixels, width: 4032, height: 3024, resized: false }, limits)
 */
export function checkPlan(plan: ConversionPlan, limits: Limits): number {
  const { width, height, format } = plan
  const pixels = width * height
  if (pixels > limits.maxOutputPixels) {
    throw new ApiError(
      'image_too_large',
      `The output would be ${width}x${height} (${mp(pixels)}); the limit is ${mp(limits.maxOutputPixels)}.`,
      { limit: limits.maxOutputPixels, width, height },
    )
  }
  const maxDimension = MAX_OUTPUT_DIMENSION[format]
  if (maxDimension !== undefined && (width > maxDimension || height > maxDimension)) {
    throw new ApiError(
      'image_too_large',
      `The output would be ${width}x${height}; ${format} output can be at most ${maxDimension} pixels wide and high. A smaller width/height or another format fits.`,
      { maxDimension, width, height },
    )
  }
  const estimate = estimateMiB(plan)
  if (estimate > limits.memoryBudgetMiB) {
    const inMP = mp(plan.header.width * plan.header.height)
    throw new ApiError(
      'operation_too_large',
      `Converting this ${inMP} ${plan.header.format} to a ${width}x${height} ${format} needs an estimated ${Math.round(estimate)} MiB; ` +
        `the memory budget (MEMORY_BUDGET_MIB) is ${limits.memoryBudgetMiB} MiB. A smaller width/height, a smaller input or another format may fit.`,
      { limit: limits.memoryBudgetMiB, estimateMiB: Math.round(estimate) },
    )
  }
  return estimate
}
