import type { FormatId, OutputFormat } from '../codecs/registry'
import type { Limits } from '../env'
import { ApiError } from '../errors'
import type { ImageHeader } from './sniff'

/**
 * Per-operation pixel caps that keep one conversion inside the isolate's 128 MB, from the peak-memory
 * measurements in docs/memory.md (scripts/measure-memory.mjs). Decoding holds the compressed input,
 * the decoder's working memory and the RGBA result; encoding holds the RGBA input, a copy inside the
 * encoder and its working memory. Past these sizes the API answers 422 operation_too_large rather
 * than risk the isolate being killed mid-request.
 */
export const MEMORY_CAPS: {
  decode: Readonly<Record<FormatId, number>>
  encode: Readonly<Record<OutputFormat, number>>
} = {
  decode: { jpeg: 16_000_000, png: 12_000_000, webp: 16_000_000, avif: 12_000_000, gif: 12_000_000 },
  encode: { jpeg: 16_000_000, png: 8_000_000, webp: 16_000_000, avif: 8_000_000 },
}

const mp = (pixels: number) => `${(pixels / 1e6).toFixed(1)} MP`

/**
 * Step 3: refuse, from header data alone, an input whose dimensions are over the configured limit or
 * over what its decoder can do within the memory budget. Runs before any pixel is decoded.
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
  const cap = MEMORY_CAPS.decode[header.format]
  if (pixels > cap) {
    throw new ApiError(
      'operation_too_large',
      `Decoding a ${header.format} of ${mp(pixels)} would exceed the worker's memory budget; the cap for ${header.format} input is ${mp(cap)}.`,
      { limit: cap, operation: `decode:${header.format}` },
    )
  }
}

/** Step 3, for the output: the planned output size against the limit and the encoder's memory cap. */
export function checkOutput(format: OutputFormat, width: number, height: number, limits: Limits): void {
  const pixels = width * height
  if (pixels > limits.maxOutputPixels) {
    throw new ApiError(
      'image_too_large',
      `The output would be ${width}x${height} (${mp(pixels)}); the limit is ${mp(limits.maxOutputPixels)}.`,
      { limit: limits.maxOutputPixels, width, height },
    )
  }
  const cap = MEMORY_CAPS.encode[format]
  if (pixels > cap) {
    throw new ApiError(
      'operation_too_large',
      `Encoding ${mp(pixels)} as ${format} would exceed the worker's memory budget; the cap for ${format} output is ${mp(cap)}. Request a smaller width/height or another format.`,
      { limit: cap, operation: `encode:${format}` },
    )
  }
}
