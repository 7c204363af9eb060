import { type LeanAvifSettings, leanCodec } from '../../wasm'
import { capEffort, type EffortCaps } from './effort-caps'
import { hasTransparency } from '../pipeline/transform'
import { type Codec, decodeFromRows, effortOption, type EncodeSettings, encoderMemoryCap, losslessOption, qualityOption } from './types'

/**
 * The highest effort allowed for an output of a given size, so one AVIF encode stays under half of
 * wrangler.toml's cpu_ms (30 s). libaom's CPU time grows about linearly with pixels and steeply with
 * effort: a 0.9 MP photo took 92 s at effort 9, 33 s at 6 and 4 s at 4 on the 2-core dev machine
 * (docs/results/robustness.md). test/unit/avif-effort-caps.test.ts checks every row against the measurements.
 */
export const AVIF_EFFORT_CAPS: EffortCaps = [
  { maxPixels: 100_000, maxEffort: 9 },
  { maxPixels: 250_000, maxEffort: 7 },
  { maxPixels: 500_000, maxEffort: 5 },
  { maxPixels: 3_000_000, maxEffort: 4 },
  { maxPixels: 6_000_000, maxEffort: 3 },
  { maxPixels: 12_000_000, maxEffort: 2 },
  { maxPixels: 16_000_000, maxEffort: 1 },
  { maxPixels: Number.POSITIVE_INFINITY, maxEffort: 0 },
]

export const avif: Codec = {
  id: 'avif',
  label: 'AVIF (libavif + libaom)',
  mime: 'image/avif',
  extensions: ['avif'],
  lossy: true,
  lossless: true,
  alpha: true,
  autoQuality: { target: 52, low: 15, high: 90 },
  options: {
    quality: qualityOption(50),
    lossless: losslessOption,
    effort: effortOption(4, 'libaom speed = 10 - effort, capped by image size (see limits.avifEffortCaps).'),
  },
  effortFor: (requested, pixels) => capEffort(AVIF_EFFORT_CAPS, requested, pixels),
  // libavif + dav1d in the lean codec (wasm/lean/avif_dec.c); conversions take it as a row source
  // (src/pipeline/rows.ts), and this, the whole image, is the same rows collected (not yet turned by irot/imir).
  async decode(bytes, header) {
    return decodeFromRows('libavif', header, (lean) => lean.rowsFromAvif(bytes, header.width, header.height))
  },
  async encode(image, settings) {
    // libavif + libaom in the lean codec (wasm/lean/sink_avif.c); an alpha plane only for pixels that are not all opaque.
    return { bytes: leanCodec(encoderMemoryCap()).encodeAvif(image, avifSettings(settings, hasTransparency(image))) }
  },
}

/**
 * The AVIF sink's settings (wasm/lean/sink_avif.c): libavif's quality scale (lossless ignores it), libaom's speed
 * from the effort. `alpha`: whether to encode an alpha plane; for rows, whether the source has an alpha channel,
 * decided before the first row as sharp does, from the channel and not from the pixels.
 *
 * @example
 * lean.rowsToAvif(avifSettings(settings, lean.rowsSize().alpha))
 */
export const avifSettings = ({ quality, lossless, effort }: EncodeSettings, alpha: boolean): LeanAvifSettings => ({ quality, speed: 10 - effort, lossless, alpha })
