import { CODECS, type FormatId, type OutputFormat } from '../codecs/registry'
import { DecodeFailure, type EncodeSettings } from '../codecs/types'
import { ApiError } from '../errors'
import type { ImageHeader } from './sniff'
import { orient } from './transform'

/**
 * Step 4: decode to upright RGBA (the header's orientation applied). Any failure inside a codec, including a WebAssembly trap, is the
 * input's fault here (the codec rejected its bytes) and becomes 422 corrupt_image. Each decode runs on
 * a fresh WebAssembly instance, so a trap cannot leave state behind for the next request.
 */
export async function decodeImage(bytes: Uint8Array, header: ImageHeader): Promise<ImageData> {
  const codec = CODECS[header.format]
  if (header.truncated) {
    throw new ApiError('corrupt_image', `The ${header.format} data is truncated: it ends before the end-of-image marker.`)
  }
  try {
    const image = await codec.decode!(bytes, header)
    if (image.width <= 0 || image.height <= 0) throw new DecodeFailure('empty image')
    return codec.orientsItself ? image : orient(image, header.orientation)
  } catch (error) {
    throw new ApiError('corrupt_image', `The ${header.format} image could not be decoded: ${reason(error)}.`)
  }
}

/** Step 6: encode with the codec's mapping of the common settings. A trap here is ours: 500 codec_failed. */
export async function encodeImage(image: ImageData, format: OutputFormat, settings: EncodeSettings): Promise<Uint8Array> {
  try {
    return await CODECS[format].encode!(image, settings)
  } catch (error) {
    console.error(`encode ${format} ${image.width}x${image.height} failed: ${(error as Error)?.message}`)
    throw new ApiError('codec_failed', `The ${format} encoder failed on a ${image.width}x${image.height} image.`)
  }
}

/** A public reason: our own messages as they are; a codec's internals (traps, Rust panics) in plain words. */
function reason(error: unknown): string {
  if (error instanceof DecodeFailure) return error.message.replace(/\.$/, '')
  return 'the decoder rejected the data'
}

/** Resolve quality/lossless/effort against the format's defaults and reject options it cannot use. */
export function encodeSettings(
  format: OutputFormat,
  options: { quality?: number | undefined; lossless?: boolean | undefined; effort?: number | undefined },
  pixels: number,
  explicitFormat: boolean,
): EncodeSettings {
  const codec = CODECS[format]
  if (options.lossless && !codec.lossless) {
    throw new ApiError('invalid_option', `${format} has no lossless mode.`, { option: 'lossless' })
  }
  if (options.lossless && options.quality !== undefined) {
    throw new ApiError('invalid_option', 'quality does not apply with lossless=true.', { option: 'quality' })
  }
  // With format=auto the client cannot know whether the chosen format is lossy, so quality is a hint.
  if (options.quality !== undefined && !codec.lossy && explicitFormat) {
    throw new ApiError('invalid_option', `${format} output is lossless; quality does not apply.`, { option: 'quality' })
  }
  const effort = options.effort ?? (codec.options.effort?.default as number)
  return {
    quality: options.quality ?? (codec.options.quality?.default as number | undefined) ?? 100,
    lossless: options.lossless ?? !codec.lossy,
    effort: codec.effortFor ? codec.effortFor(effort, pixels) : effort,
  }
}

export const isOutputFormat = (format: FormatId): format is OutputFormat => Boolean(CODECS[format].encode)
