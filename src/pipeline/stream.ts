import { canStreamInput } from '../../wasm'
import type { EncodeSettings } from '../codecs/types'
import type { Limits } from '../env'
import { pngImageDataWithin } from '../formats/png/header'
import { type ConversionPlan, mayAnswerWithInput } from './limits'
import { isFound } from './found-gravity'
import type { CompressOptions } from './options'

/**
 * Which conversions read their PNG as it arrives (src/pipeline/body.ts) instead of holding the file: those that read
 * it once, from the first byte to the last row. PNG output reads the rows twice (png_analyse, then png_sink),
 * quality=auto samples them and checks the answer against them, max_bytes encodes again, trim=border and gravity=auto
 * read the pixels before the conversion, metadata other than `none` reads the file's chunks: those hold it.
 */

/** How much of a body is read before deciding: enough for a PNG's chunks before its image data, as phones and cameras write them. */
export const STREAM_HEAD_BYTES = 64 * 1024

/**
 * From the options and the body's start alone: options that read the file once, in an engine with JSPI (wasm/lean.ts),
 * and a PNG whose first image data starts within `head`.
 *
 * @example
 * if (mayStream(await body.head(STREAM_HEAD_BYTES), options)) ...
 */
export function mayStream(head: Uint8Array, options: CompressOptions): boolean {
  if (!canStreamInput()) return false
  if (options.format === 'png' || options.quality === 'auto' || options.max_bytes !== undefined || options.metadata !== 'none') return false
  if (isFound(options.gravity) || (options.trim !== undefined && 'border' in options.trim)) return false
  return pngImageDataWithin(head)
}

/**
 * The most bytes a body may have before it is read: MAX_STREAMED_INPUT_BYTES where a PNG can be read as it arrives
 * (the engine has JSPI), else MAX_INPUT_BYTES. What it turns out to need holding is held to MAX_INPUT_BYTES.
 *
 * @example
 * await checkRequestHead(c, limits.maxInputBytes, streamedInputCap(limits))
 */
export const streamedInputCap = (limits: Limits): number => (canStreamInput() ? limits.maxStreamedInputBytes : limits.maxInputBytes)

/**
 * Once planned: one pass of the row pipeline into a sink that reads its rows once (JPEG, WebP, AVIF; not our lossless
 * WebP coder, which reads them three times), a still image, and an answer that is never the input itself.
 *
 * @example
 * if (!streamsOnce(plan, settings, options)) bytes = await body.all()
 */
export function streamsOnce(plan: ConversionPlan, settings: EncodeSettings, options: CompressOptions): boolean {
  return (
    plan.route === 'rows' && plan.format !== 'png' && !plan.streamedLossless && plan.header.frames === 1 && !settings.autoQuality && settings.fitTo === undefined && options.metadata === 'none' && !mayAnswerWithInput(plan)
  )
}
