import { leanCodec, type LeanPngSettings, PNG_STRATEGY } from '../../wasm'
import { joinParts } from '../lib/bytes'
import { capEffort, type EffortCaps } from './effort-caps'
import { type Codec, capped, decoderMemoryCap, effortOption, encoderMemoryCap, leanFailure } from './types'

const { none, minsum, entropy } = PNG_STRATEGY
/** Three filter strategies tried on each chunk of rows (the smallest kept): no filter, libpng's choice per row, the row of least entropy. */
const TRIALS = none | minsum | entropy

/**
 * The lean codec's PNG sink (wasm/lean/sink_png.c) for each effort 0-9: libdeflate's level (1-12; 10-12 are its
 * near-optimal parsing) and the filter strategies tried (0: the layout's usual one). Each step buys fewer bytes for
 * more time against sharp's best on held-out images; the default, effort 4, is 0.75-0.96x its bytes
 * (docs/notes/benchmarks.md items 22 and 33).
 */
export const PNG_SETTINGS: readonly LeanPngSettings[] = [
  { level: 1, strategies: 0 },
  { level: 5, strategies: 0 },
  { level: 7, strategies: TRIALS },
  { level: 9, strategies: TRIALS },
  { level: 10, strategies: TRIALS },
  { level: 11, strategies: TRIALS },
  { level: 12, strategies: TRIALS },
  { level: 12, strategies: 127 },
  { level: 12, strategies: 127 },
  { level: 12, strategies: 127 },
]

export const pngSettings = (effort: number): LeanPngSettings => PNG_SETTINGS[effort] ?? PNG_SETTINGS[4]!

/**
 * The highest effort allowed for a PNG output of a given size, so one encode stays under half of cpu_ms:
 * CPU seconds per MP of each effort, the slowest of seven held-out images (scripts/lib/png-explore.mjs:
 * 0.05, 0.08, 0.28 (at level 6, before item 33), 0.80, 1.37, 1.72, 2.8, 2.9 s), times 2.2 (the margin the AVIF
 * and oxipng caps were given for images slower than the measured ones). Six more held-out images, up to 16 MP (item 33), were slower at
 * effort 2-4: 0.40, 1.15 and 1.59 s per MP, so at these caps their slowest encode takes 6.7, 9.8 and 7.8 s, within
 * half of cpu_ms with a margin of 1.5-2.2 rather than 2.2; the caps are kept. test/unit/effort-caps.test.ts checks
 * every tier.
 */
export const PNG_EFFORT_CAPS: EffortCaps = [
  { maxPixels: 2_300_000, maxEffort: 9 },
  { maxPixels: 3_900_000, maxEffort: 5 },
  { maxPixels: 4_900_000, maxEffort: 4 },
  { maxPixels: 8_500_000, maxEffort: 3 },
  { maxPixels: 16_000_000, maxEffort: 2 },
  { maxPixels: Number.POSITIVE_INFINITY, maxEffort: 1 },
]

export const png: Codec = {
  id: 'png',
  label: 'PNG (libdeflate)',
  mime: 'image/png',
  extensions: ['png'],
  lossy: false,
  lossless: true,
  alpha: true,
  autoQuality: { target: 70, low: 20, high: 100 },
  options: {
    quality: {
      type: 'integer',
      min: 1,
      max: 100,
      default: 100,
      description: 'Given (or colors, 2-256, the most palette entries): lossy PNG, a palette of the fewest colours whose quality reaches it (100 is 50 dB on a sample, 80 44 dB, 60 38 dB; and no colour of more than 0.1 % of the sample left further than 4 + 0.2 x (100 - quality) from its entry), dithered. Not given: lossless.',
    },
    effort: effortOption(
      4,
      'libdeflate level and filter trials (0: level 1; 4: level 10, three filter strategies tried per chunk; 9: level 12, every strategy); palette, grey and alpha reduced losslessly at every effort; capped by image size (see limits.pngEffortCaps).',
    ),
  },
  effortFor: (requested, pixels) => capEffort(PNG_EFFORT_CAPS, requested, pixels),
  async decode(bytes, header) {
    // libpng in the lean codec: the pixels stay in the decoder's memory (a view, not a copy).
    const cap = decoderMemoryCap()
    return capped(cap, header, () => leanFailure('libpng', () => leanCodec(cap).decodePng(bytes, header.width, header.height)))
  },
  async encode(image, { effort, palette }) {
    const { parts, palette: made } = leanCodec(encoderMemoryCap()).encodePng(image, pngSettings(effort), palette)
    return { bytes: joinParts(parts), palette: made }
  },
}
