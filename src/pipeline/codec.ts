import { leanCodec, type LeanCodec } from '../../wasm'
import { turboJpegSettings } from '../codecs/jpeg'
import { CODECS, type FormatId, type OutputFormat } from '../codecs/registry'
import { animationEffort, webpMethod } from '../codecs/webp'
import { capped, cappedError, DecodeFailure, decoderMemoryCap, type EncodedImage, type EncodeSettings, leanError, leanFailure } from '../codecs/types'
import { ApiError } from '../errors'
import type { Stopwatch } from '../lib/stopwatch'
import type { Route } from './limits'
import type { ImageHeader } from './sniff'
import { orient } from './transform'

/**
 * Step 4: decode to upright RGBA (the header's orientation applied). Any failure inside a codec, including a WebAssembly trap, is the
 * input's fault here (the codec rejected its bytes) and becomes 422 corrupt_image. Each decode runs on
 * a fresh WebAssembly instance, so a trap cannot leave state behind for the next request.
 */
export async function decodeImage(bytes: Uint8Array, header: ImageHeader, scaleEighths = 8): Promise<ImageData> {
  const codec = CODECS[header.format]
  refuseTruncated(header)
  try {
    const image = await codec.decode!(bytes, header, scaleEighths)
    if (image.width <= 0 || image.height <= 0) throw new DecodeFailure('empty image')
    return codec.orientsItself ? image : orient(image, header.orientation)
  } catch (error) {
    throw undecodable(header, error)
  }
}

/** The public 422 for a decoder that failed on the input (an ApiError a step raised on the way passes as it is). */
function undecodable(header: ImageHeader, error: unknown): ApiError {
  if (error instanceof ApiError) return error
  return new ApiError('corrupt_image', `The ${header.format} image could not be decoded: ${reason(error)}.`)
}

/** Decoders grey-fill what is missing from a cut-off JPEG; the sniffer saw it end early, so refuse it. */
function refuseTruncated(header: ImageHeader): void {
  if (header.truncated) {
    throw new ApiError('corrupt_image', `The ${header.format} data is truncated: it ends before the end-of-image marker.`)
  }
}

/** Step 6: encode with the codec's mapping of the common settings. A trap here is ours: 500 codec_failed. */
export async function encodeImage(image: ImageData, format: OutputFormat, settings: EncodeSettings): Promise<EncodedImage> {
  try {
    return await CODECS[format].encode!(image, settings)
  } catch (error) {
    throw encoderFailed(format, image.width, image.height, error)
  }
}

/** The public 500 for an encoder that failed (the error itself is logged, not shown). */
export function encoderFailed(format: OutputFormat, width: number, height: number, error: unknown): ApiError {
  console.error(`encode ${format} ${width}x${height} failed: ${(error as Error)?.message}`)
  return new ApiError('codec_failed', `The ${format} encoder failed on a ${width}x${height} image.`)
}

/** A public reason: our own messages as they are; a codec's internals (traps, Rust panics) in plain words. */
function reason(error: unknown): string {
  if (error instanceof DecodeFailure) return error.message.replace(/\.$/, '')
  return 'the decoder rejected the data'
}

/**
 * Resolve quality/lossless/effort against the format's defaults and reject options it cannot use. `animationFrames`: the
 * frames of an animation the `frames` route would keep (an animated GIF or WebP; 1 otherwise).
 */
export function encodeSettings(
  format: OutputFormat,
  options: { quality?: number | 'auto' | undefined; target?: number | undefined; lossless?: boolean | undefined; effort?: number | undefined; colors?: number | undefined; max_bytes?: number | undefined; animated?: boolean | undefined },
  pixels: number,
  explicitFormat: boolean,
  animationFrames = 1,
): EncodeSettings {
  const codec = CODECS[format]
  if (options.lossless && !codec.lossless) {
    throw new ApiError('invalid_option', `${format} has no lossless mode.`, { option: 'lossless' })
  }
  if (options.lossless && options.quality !== undefined) {
    throw new ApiError('invalid_option', 'quality does not apply with lossless=true.', { option: 'quality' })
  }
  if (options.target !== undefined && options.quality !== 'auto') {
    throw new ApiError('invalid_option', 'target applies with quality=auto.', { option: 'target' })
  }
  // PNG asked for with quality or colors: a palette (lossy PNG), the fewest colours reaching the quality.
  const palette = format === 'png' && explicitFormat && !options.lossless && (options.quality !== undefined || options.colors !== undefined)
  if (options.colors !== undefined && !palette) {
    throw new ApiError('invalid_option', 'colors applies to PNG output (format=png), without lossless.', { option: 'colors' })
  }
  // With format=auto the client cannot know whether the chosen format is lossy, so quality is a hint.
  if (options.quality !== undefined && !codec.lossy && explicitFormat && !palette) {
    throw new ApiError('invalid_option', `${format} output is lossless; quality does not apply.`, { option: 'quality' })
  }
  const animate = format === 'webp' && options.animated !== false && animationFrames > 1
  const requested = options.effort ?? (codec.options.effort?.default as number)
  // An animation's encode time is its frames': capped by its pixels in all too.
  const effort = animate ? animationEffort(requested, options.lossless === true, pixels * animationFrames) : requested
  const given = options.quality === 'auto' ? undefined : options.quality
  const quality = given ?? (codec.options.quality?.default as number | undefined) ?? 100
  // quality=auto applies where a quality does: a lossy format, or a palette
  const searched = options.quality === 'auto' && codec.autoQuality && (palette || (codec.lossy && !options.lossless))
  return {
    quality,
    lossless: palette ? false : options.lossless ?? !codec.lossy,
    effort: codec.effortFor ? codec.effortFor(effort, pixels) : effort,
    ...(palette ? { palette: { colours: options.colors ?? 256, quality } } : {}),
    ...(searched ? { autoQuality: { ...codec.autoQuality!, target: options.target ?? codec.autoQuality!.target } } : {}),
    ...(options.max_bytes !== undefined ? { fitTo: options.max_bytes } : {}),
    ...(animate ? { animate: true } : {}),
  }
}

/** The settings at another quality (a palette's target with it). */
export const atQuality = (settings: EncodeSettings, quality: number): EncodeSettings =>
  settings.palette ? { ...settings, quality, palette: { ...settings.palette, quality } } : { ...settings, quality }

export const isOutputFormat = (format: FormatId): format is OutputFormat => Boolean(CODECS[format].encode)

/** Libraries whose messages a failing lean pass shows, by input format. */
const LEAN_LIBRARY: Partial<Record<FormatId, string>> = { jpeg: 'libjpeg', png: 'libpng', webp: 'libwebp', gif: 'giflib', avif: 'libavif' }

/**
 * The conversion's lean codec, and `run` for each step of a pass through it: a failure anywhere in the
 * pass is the input's (422 corrupt_image with the library's message; the encoders only fail for memory,
 * which `capped` names), and an ApiError a step raises passes as it is. A truncated JPEG is refused first.
 */
export function leanPass(header: ImageHeader): { lean: LeanCodec; run: <T>(step: () => T) => T } {
  refuseTruncated(header)
  const cap = decoderMemoryCap()
  const library = LEAN_LIBRARY[header.format] ?? header.format
  const failure = (error: unknown) => undecodable(header, cappedError(cap, header, leanError(library, error)))
  // (a step that returns a promise, a sink pulling a streamed file's rows, fails the same way when it settles)
  const run = <T>(step: () => T): T => {
    try {
      const result = capped(cap, header, () => leanFailure(library, step))
      if (result instanceof Promise) return result.catch((error: unknown) => Promise.reject(failure(error))) as T
      return result
    } catch (error) {
      throw undecodable(header, error)
    }
  }
  return { lean: leanCodec(cap, header.streamed === true), run }
}

/**
 * Steps 4-6 as one pass of the lean codec, for the same-size routes planConversion chooses (src/pipeline/limits.ts) beside the row
 * pipeline (src/pipeline/rows.ts): a turned JPEG's rows written where they land in the WebP encoder's planes, a lossy WebP's own YUV
 * straight into them, or a JPEG into libjpeg-turbo's compressor: a YCbCr 4:2:0 one's planes as they are, another's rows as RGB (a
 * grey one's as grey). Returns the encoded bytes and the
 * step times (a JPEG streamed without a turn decodes while it encodes; that time is all `encode`).
 */
export async function transcode(
  bytes: Uint8Array,
  header: ImageHeader,
  route: Exclude<Route, 'pixels' | 'rows'>,
  settings: EncodeSettings,
  clock: Stopwatch,
): Promise<{ output: Uint8Array; decodeMs: number; encodeMs: number }> {
  const { lean, run } = leanPass(header)
  const timed = async (decode: () => void, encode: () => Uint8Array) => {
    run(decode)
    const decodeMs = await clock.lap()
    const output = run(encode)
    return { output, decodeMs, encodeMs: await clock.lap() }
  }
  const toWebp = () => lean.encodeWebp(settings.quality, webpMethod(settings.effort), false)
  if (route === 'webp-to-webp') {
    run(() => lean.openWebp(bytes))
    return timed(() => lean.decodeWebpToYuv(), toWebp)
  }
  run(() => lean.openJpeg(bytes))
  if (route === 'jpeg-to-webp') {
    return timed(() => {
      lean.start(8, 3)
      lean.decodeToYuv(header.orientation)
    }, toWebp)
  }
  return timed(() => {}, () => lean.transcodeJpeg(header.orientation, turboJpegSettings(settings)))
}
