import { defaultOptions } from '@jsquash/avif/meta.js'
import { avifDecoder, avifEncoder } from '../../wasm'
import { type Codec, capped, decodedOrThrow, decoderMemoryCap, effortOption, losslessOption, qualityOption } from './types'

/**
 * The highest effort allowed for an image of a given size, so one AVIF encode stays well inside the
 * CPU limit in wrangler.toml. AVIF (libaom) CPU time grows roughly linearly with pixels and steeply
 * with effort; measured figures are in docs/benchmarks.md.
 */
export const AVIF_EFFORT_CAPS: ReadonlyArray<{ maxPixels: number; maxEffort: number }> = [
  { maxPixels: 1_000_000, maxEffort: 9 },
  { maxPixels: 4_000_000, maxEffort: 5 },
  { maxPixels: Number.POSITIVE_INFINITY, maxEffort: 2 },
]

export const avif: Codec = {
  id: 'avif',
  label: 'AVIF (libavif + libaom)',
  mime: 'image/avif',
  extensions: ['avif'],
  lossy: true,
  lossless: true,
  alpha: true,
  options: {
    quality: qualityOption(50),
    lossless: losslessOption,
    effort: effortOption(4, 'libaom speed = 10 - effort, capped by image size (see limits.avifEffortCaps).'),
  },
  effortFor(requested, pixels) {
    const cap = AVIF_EFFORT_CAPS.find((c) => pixels <= c.maxPixels)!.maxEffort
    return Math.min(requested, cap)
  },
  async decode(bytes, header) {
    const cap = decoderMemoryCap()
    const decoder = await avifDecoder(cap)
    return capped(cap, header, () => decodedOrThrow(decoder.decode(bytes, 8), 'AVIF'))
  },
  async encode(image, { quality, lossless, effort }) {
    const encoder = await avifEncoder()
    const out = encoder.encode(image.data, image.width, image.height, {
      ...defaultOptions,
      quality: lossless ? 100 : quality,
      qualityAlpha: -1,
      subsample: lossless ? 3 : 1,
      speed: 10 - effort,
      bitDepth: 8,
      ...(lossless ? { lossless: true } : {}),
    })
    if (!out) throw new Error('AVIF encoding failed')
    return new Uint8Array(out.buffer, out.byteOffset, out.byteLength)
  },
}
