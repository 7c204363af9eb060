import { leanCodec, webpDecoder } from '../../wasm'
import { firstFrame, onCanvas } from './webp-frame'
import { type Codec, capped, decodedOrThrow, decoderMemoryCap, effortOption, encoderMemoryCap, losslessOption, qualityOption } from './types'

/**
 * libwebp's low_memory mode (no token buffer) from here up: docs/memory.md measured about 17 MiB less
 * peak at 12 MP (241 against 258 MiB), for about twice the encode time at method 4.
 */
export const WEBP_LOW_MEMORY_PIXELS = 4_000_000

/** libwebp's method (0-6) for the service's effort (0-9). */
export const webpMethod = (effort: number): number => Math.min(6, effort)

export const webp: Codec = {
  id: 'webp',
  label: 'WebP (libwebp)',
  mime: 'image/webp',
  extensions: ['webp'],
  lossy: true,
  lossless: true,
  alpha: true,
  options: {
    quality: qualityOption(80),
    lossless: losslessOption,
    effort: effortOption(4, 'libwebp method = min(effort, 6); lossless also sets its compression level to effort x 11.'),
  },
  async decode(bytes, header) {
    const cap = decoderMemoryCap()
    const decoder = await webpDecoder(cap)
    const frame = header.frames > 1 ? firstFrame(bytes) : undefined
    if (!frame) return capped(cap, header, () => decodedOrThrow(decoder.decode(bytes), 'WebP'))
    return onCanvas(capped(cap, header, () => decodedOrThrow(decoder.decode(frame.still), 'WebP')), frame)
  },
  async encode(image, { quality, lossless, effort }) {
    // libwebp in the lean codec (its JPEG route fills the same encoder's planes from decoded rows).
    return leanCodec(encoderMemoryCap()).encodeWebpRgba(image, {
      quality: lossless ? Math.min(100, effort * 11) : quality,
      method: webpMethod(effort),
      lossless,
      lowMemory: image.width * image.height > WEBP_LOW_MEMORY_PIXELS,
    })
  },
}
