import { canStreamInput } from '../../wasm'
import type { EncodeSettings } from '../codecs/types'
import { type ConversionPlan, mayAnswerWithInput } from './limits'
import type { CompressOptions } from './options'

/**
 * Which conversions read their PNG as it arrives (src/pipeline/body.ts) instead of holding the file: those that read
 * it once, from the first byte to the last row. PNG output reads the rows twice (png_analyse, then png_sink),
 * quality=auto samples them and checks the answer against them, max_bytes encodes again, trim=border and gravity=auto
 * read the pixels before the conversion, metadata other than `none` reads the file's chunks: those hold it.
 */

/** How much of a body is read before deciding: enough for a PNG's chunks before its image data, as phones and cameras write them. */
export const STREAM_HEAD_BYTES = 64 * 1024

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
const IDAT = 0x49444154

/**
 * From the options and the body's start alone: a PNG whose first image data starts within `head`, and options that
 * read it once, in an engine with JSPI (wasm/lean.ts).
 *
 * @example
 * if (mayStream(await body.head(STREAM_HEAD_BYTES), options)) ...
 */
export function mayStream(head: Uint8Array, options: CompressOptions): boolean {
  if (!canStreamInput() || !PNG_SIGNATURE.every((byte, i) => head[i] === byte)) return false
  if (options.format === 'png' || options.quality === 'auto' || options.max_bytes !== undefined || options.metadata !== 'none') return false
  if (options.gravity === 'auto' || (options.trim !== undefined && 'border' in options.trim)) return false
  return imageDataWithin(head)
}

/** Whether the chunk walk from the IHDR reaches the first IDAT's header within `head`. */
function imageDataWithin(head: Uint8Array): boolean {
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength)
  for (let at = 8; at + 8 <= head.length; at += 12 + view.getUint32(at)) {
    if (view.getUint32(at + 4) === IDAT) return true
  }
  return false
}

/**
 * Once planned: one pass of the row pipeline into a sink that reads its rows once (JPEG, WebP, AVIF; not our lossless
 * WebP coder, which reads them three times), a still image,
 * and an answer that is never the input itself.
 *
 * @example
 * if (!streamsOnce(plan, settings, options)) bytes = await body.all()
 */
export function streamsOnce(plan: ConversionPlan, settings: EncodeSettings, options: CompressOptions): boolean {
  return (
    plan.route === 'rows' && plan.format !== 'png' && !plan.streamedLossless && plan.header.frames === 1 && !settings.autoQuality && settings.fitTo === undefined && options.metadata === 'none' && !mayAnswerWithInput(plan)
  )
}
