import { leanCodec } from '../../wasm'
import { capEffort, type EffortCaps } from './effort-caps'
import { firstFrame, onCanvas } from './webp-frame'
import { type Codec, capped, DecodeFailure, decoderMemoryCap, type EncodeSettings, effortOption, encoderMemoryCap, leanFailure, losslessOption, qualityOption } from './types'

/**
 * libwebp's low_memory mode (no token buffer) from here up: less peak memory for about twice the encode time at
 * method 4 (docs/notes/memory.md).
 */
export const WEBP_LOW_MEMORY_PIXELS = 4_000_000

/**
 * The highest effort allowed for a WebP output of a given size, so one encode stays under half of
 * cpu_ms. CPU seconds per MP, the slowest of six images (two photos, three wallpapers, a UI screenshot;
 * lossy q80 and lossless; docs/notes/benchmarks.md item 21) times 1.5: effort 0 0.35, 1 0.81, 2 0.60, 3 1.14,
 * 4 1.08, 5 2.06, 6-9 32.7. Method 6 is the outlier: lossy, on a noisy wallpaper, 17-22 s per MP
 * (native libwebp took as long), where every other image took under 0.2.
 */
export const WEBP_EFFORT_CAPS: EffortCaps = [
  { maxPixels: 450_000, maxEffort: 9 },
  { maxPixels: 7_000_000, maxEffort: 5 },
  { maxPixels: 13_000_000, maxEffort: 4 },
  { maxPixels: 16_000_000, maxEffort: 2 },
  { maxPixels: Number.POSITIVE_INFINITY, maxEffort: 0 },
]

/**
 * The highest effort for an animated WebP (src/pipeline/frames.ts), by its pixels in all (frames x output), so the
 * whole animation's encode stays under half of cpu_ms. CPU seconds per MP of libwebp's animation encoder on a 24-frame
 * 640x400 photographic pan (every pixel changes), times 1.5: lossy method 0-2 0.14, 3-4 0.23, 5 0.27, 6 5.8 (method
 * 6's outlier again); lossless effort 0 0.22, 2 0.28, 4 0.66, 5 0.87, 9 1.03. The per-frame caps above apply too. A lossless
 * animation of MAX_ANIMATION_PIXELS (100 MP) at effort 0 may take 22 s: under cpu_ms, over half.
 */
export const WEBP_ANIMATION_EFFORT_CAPS: Readonly<Record<'lossy' | 'lossless', EffortCaps>> = {
  lossy: [
    { maxPixels: 2_500_000, maxEffort: 9 },
    { maxPixels: 55_000_000, maxEffort: 5 },
    { maxPixels: 65_000_000, maxEffort: 4 },
    { maxPixels: Number.POSITIVE_INFINITY, maxEffort: 2 },
  ],
  lossless: [
    { maxPixels: 14_000_000, maxEffort: 9 },
    { maxPixels: 22_000_000, maxEffort: 4 },
    { maxPixels: 52_000_000, maxEffort: 2 },
    { maxPixels: Number.POSITIVE_INFINITY, maxEffort: 0 },
  ],
}

/** The effort an animated WebP is encoded at: `requested`, capped by its pixels in all (frames x output; WEBP_ANIMATION_EFFORT_CAPS). */
export const animationEffort = (requested: number, lossless: boolean, pixelsInAll: number): number =>
  capEffort(WEBP_ANIMATION_EFFORT_CAPS[lossless ? 'lossless' : 'lossy'], requested, pixelsInAll)

/** libwebp's method (0-6) for the service's effort (0-9). */
export const webpMethod = (effort: number): number => Math.min(6, effort)

/**
 * libwebp's settings for the common ones, for `pixels` of output: lossless takes effort x 11 as its quality
 * (compression level), and low_memory is on from WEBP_LOW_MEMORY_PIXELS, or wherever the plan asks for it.
 */
export const libwebpSettings = ({ quality, lossless, effort }: EncodeSettings, pixels: number, lowMemory = false) => ({
  quality: lossless ? Math.min(100, effort * 11) : quality,
  method: webpMethod(effort),
  lossless,
  lowMemory: lowMemory || pixels > WEBP_LOW_MEMORY_PIXELS,
})

export const webp: Codec = {
  id: 'webp',
  label: 'WebP (libwebp)',
  mime: 'image/webp',
  extensions: ['webp'],
  lossy: true,
  lossless: true,
  alpha: true,
  autoQuality: { target: 68, low: 20, high: 95 },
  options: {
    quality: qualityOption(80),
    lossless: losslessOption,
    effort: effortOption(4, 'libwebp method = min(effort, 6); lossless also sets its compression level to effort x 11. Capped by image size (see limits.webpEffortCaps; an animated WebP also by its frames, limits.webpAnimationEffortCaps).'),
  },
  effortFor: (requested, pixels) => capEffort(WEBP_EFFORT_CAPS, requested, pixels),
  async decode(bytes, header, scaleEighths = 8) {
    // libwebp in the lean codec, shrunk while decoding when the output is smaller (a still image only:
    // a frame is placed on its canvas at full size); the pixels stay in the decoder's memory (a view).
    const cap = decoderMemoryCap()
    const frame = header.frames > 1 ? firstFrame(bytes) : undefined
    const image = capped(cap, header, () =>
      leanFailure('libwebp', () => {
        const lean = leanCodec(cap)
        const { width, height } = lean.openWebp(frame?.still ?? bytes)
        // Checked before a pixel is allocated: the limits trusted the header's (or frame's) size.
        const expected = frame ?? header
        if (width !== expected.width || height !== expected.height) {
          throw new DecodeFailure(`the ${frame ? 'first frame' : 'image'} is ${expected.width}x${expected.height} but its bitstream is ${width}x${height}`)
        }
        const scale = frame ? 8 : scaleEighths
        return lean.decodeWebp(Math.ceil((width * scale) / 8), Math.ceil((height * scale) / 8))
      }),
    )
    return frame ? onCanvas(image, frame) : image
  },
  async encode(image, settings) {
    // libwebp in the lean codec (the row pipeline fills the same encoder's planes from rows).
    return { bytes: leanCodec(encoderMemoryCap()).encodeWebpRgba(image, libwebpSettings(settings, image.width * image.height)) }
  },
}
