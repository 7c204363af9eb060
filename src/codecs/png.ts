import { leanCodec, oxipngRgba } from '../../wasm'
import { capEffort, type EffortCaps } from './effort-caps'
import { type Codec, capped, decoderMemoryCap, effortOption, leanFailure } from './types'

/** oxipng level for each effort step 0-9 (its own scale is 0-6; level 2 is its default). */
const OXIPNG_LEVELS = [0, 1, 1, 2, 2, 3, 4, 5, 6, 6] as const

/**
 * The highest effort allowed for a PNG output of a given size, so one oxipng encode stays under half of
 * cpu_ms: each level tries more filters and deflate settings, each a pass over the image. CPU seconds
 * per MP, the slowest of four images measured (scripts/lib/png-cpu-explore.mjs: a UI screenshot, the
 * Gulp and Float-into-MATE wallpapers, a photo; docs/benchmarks.md) times 2.2, the most a held-out
 * graphic took over them (1.9 MP: 60 s at level 6, 26 s at level 4): level 0 0.46, 1 2.2, 2 5.2,
 * 3 12.4, 4 15.9, 5 26.9, 6 32.9. test/unit/effort-caps.test.ts checks every tier.
 */
export const PNG_EFFORT_CAPS: EffortCaps = [
  { maxPixels: 400_000, maxEffort: 9 },
  { maxPixels: 500_000, maxEffort: 7 },
  { maxPixels: 900_000, maxEffort: 6 },
  { maxPixels: 1_200_000, maxEffort: 5 },
  { maxPixels: 2_800_000, maxEffort: 4 },
  { maxPixels: 6_500_000, maxEffort: 2 },
  { maxPixels: Number.POSITIVE_INFINITY, maxEffort: 0 },
]

/**
 * The lean codec's row-by-row PNG writer (libpng, wasm/lean/sink_png.c), where oxipng does not fit or at
 * effort 0: zlib's level for each effort step, every filter tried on every row (libpng keeps the one with
 * the smallest sum of absolute differences; without filters a photo's PNG came out 2.8x larger). CPU
 * seconds per MP, the slower of a 12 MP photo and an RGBA wallpaper (docs/benchmarks.md), times 1.5: level
 * 6 0.74, 7 1.2, 8 4.0, 9 7.5. Level 9 is sharp's best (compressionLevel 9, adaptiveFiltering); level 6
 * makes 6-9 % more bytes on photos, under 1 % on screenshots. PNG_EFFORT_CAPS keeps each within half of
 * cpu_ms (test/unit/effort-caps.test.ts).
 */
export const PNG_ROW_LEVELS = [6, 6, 7, 7, 8, 9, 9, 9, 9, 9] as const
export const pngRowSettings = (effort: number): { level: number; filters: number } => ({ level: PNG_ROW_LEVELS[effort] ?? 9, filters: 0xf8 })

/** oxipng's level for an effort. */
export const oxipngLevel = (effort: number): number => OXIPNG_LEVELS[effort] ?? 2

export const png: Codec = {
  id: 'png',
  label: 'PNG (oxipng)',
  mime: 'image/png',
  extensions: ['png'],
  lossy: false,
  lossless: true,
  alpha: true,
  options: {
    effort: effortOption(4, 'oxipng optimisation level 0-6 (effort 4 = level 2), capped by image size (see limits.pngEffortCaps).'),
  },
  effortFor: (requested, pixels) => capEffort(PNG_EFFORT_CAPS, requested, pixels),
  async decode(bytes, header) {
    // libpng in the lean codec: the pixels stay in the decoder's memory (a view, not a copy).
    const cap = decoderMemoryCap()
    return capped(cap, header, () => leanFailure('libpng', () => leanCodec(cap).decodePng(bytes, header.width, header.height)))
  },
  async encode(image, { effort }) {
    return oxipngRgba(image.data, image.width, image.height, oxipngLevel(effort), false, true)
  },
}
