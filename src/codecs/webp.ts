import { defaultOptions } from '@jsquash/webp/meta.js'
import { webpDecoder, webpEncoder } from '../../wasm'
import { firstFrame, onCanvas } from './webp-frame'
import { type Codec, capped, decodedOrThrow, decoderMemoryCap, effortOption, losslessOption, qualityOption } from './types'

/**
 * libwebp's low_memory mode from here up: docs/memory.md measured about 17 MiB less peak at 12 MP
 * (241 against 258 MiB) for a little more encode time.
 */
export const WEBP_LOW_MEMORY_PIXELS = 4_000_000

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
    const encoder = await webpEncoder()
    const out = encoder.encode(image.data, image.width, image.height, {
      ...defaultOptions,
      quality: lossless ? Math.min(100, effort * 11) : quality,
      method: Math.min(6, effort),
      lossless: lossless ? 1 : 0,
      low_memory: image.width * image.height > WEBP_LOW_MEMORY_PIXELS ? 1 : 0,
    })
    if (!out) throw new Error('WebP encoding failed')
    return new Uint8Array(out.buffer, out.byteOffset, out.byteLength)
  },
}
