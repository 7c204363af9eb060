/**
 * The effort caps must keep one encode well inside wrangler.toml's cpu_ms: AVIF at effort 9 used to be
 * allowed up to 1 MP (a 0.9 MP photo took 92 s of CPU against a 30 s limit), and PNG at effort 9 had no
 * cap (a 1.9 MP graphic took 60 s).
 *
 * AVIF, CPU seconds per output megapixel for photos, the slowest figure measured on the 2-core dev
 * machine: efforts 9, 6 and 4 from docs/results/robustness.md (large.jpg, 0.9 MP: 92 s, 33 s, 4 s); efforts 1,
 * 2, 3 and 5 from the effort sweep in docs/results/benchmarks.md (1 MP: 0.37, 0.47, 1.09, 11.4 s), scaled by
 * 2.2, the ratio between the two documents' effort-4 figures; 7 and 8 geometrically between 6 and 9.
 * Effort 0: measured on a 24 MP (5712x4284) photo JPEG at full size, where effort 1 took 5.1 s and effort 0 4.6 s
 * (0.19 s per MP), times 2.2; at 1 MP the fixed costs make effort 1 dearer per MP than at 24 MP.
 *
 * PNG (the lean codec's writer, libdeflate), per effort: the slowest of seven held-out screenshots, wallpapers and
 * photos (scripts/lib/png-explore.mjs, docs/results/benchmarks.md; efforts 0-7: 0.05, 0.08, 0.28, 0.80, 1.37, 1.72, 2.8,
 * 2.9 s per MP, 8 and 9 as 7) times 2.2, the margin oxipng's caps had for a held-out graphic slower than the rest.
 *
 * WebP (libwebp, lossy q80 or lossless), per effort: the slowest of six images at 1 MP (docs/results/benchmarks.md
 * item 21; effort 6-9 is method 6, lossy, on a noisy wallpaper) times 1.5.
 */
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import limitsGuide from '../../docs/guide/limits-errors.md?raw'
import wranglerToml from '../../wrangler.toml?raw'
import { AVIF_EFFORT_CAPS, avif } from '../../src/codecs/avif'
import type { EffortCaps } from '../../src/codecs/effort-caps'
import { PNG_EFFORT_CAPS, png } from '../../src/codecs/png'
import { WEBP_ANIMATION_EFFORT_CAPS, WEBP_EFFORT_CAPS, webp } from '../../src/codecs/webp'
import type { Codec } from '../../src/codecs/types'

const PNG_SECONDS = [0.05, 0.08, 0.28, 0.8, 1.37, 1.72, 2.8, 2.9, 2.9, 2.9].map((s) => s * 2.2)


const CODECS: Array<{ name: string; codec: Codec; caps: EffortCaps; secondsPerMP: readonly number[] }> = [
  { name: 'AVIF', codec: avif, caps: AVIF_EFFORT_CAPS, secondsPerMP: [0.42, 0.82, 1.03, 2.4, 4.44, 25, 36.7, 54, 74, 102.2] },
  { name: 'PNG', codec: png, caps: PNG_EFFORT_CAPS, secondsPerMP: PNG_SECONDS },
  { name: 'WebP', codec: webp, caps: WEBP_EFFORT_CAPS, secondsPerMP: [0.23, 0.54, 0.4, 0.76, 0.72, 1.37, 21.82, 21.82, 21.82, 21.82].map((s) => s * 1.5) },
]

const cpuLimitSeconds = Number(/^cpu_ms\s*=\s*(\d+)/m.exec(wranglerToml)![1]) / 1000
const maxOutputPixels = Number((env as unknown as Record<string, string>).MAX_OUTPUT_PIXELS)

for (const { name, codec, caps, secondsPerMP } of CODECS) {
  describe(`${name} effort caps`, () => {
    it('keep every size tier under half of cpu_ms at its highest allowed effort', () => {
      expect(cpuLimitSeconds).toBe(30)
      for (const { maxPixels, maxEffort } of caps) {
        const pixels = Math.min(maxPixels, maxOutputPixels)
        const seconds = (pixels / 1e6) * secondsPerMP[maxEffort]!
        expect(seconds, `effort ${maxEffort} up to ${pixels} px`).toBeLessThan(cpuLimitSeconds / 2)
      }
    })

    it('lower the effort as the output grows, and end with a tier for any size', () => {
      for (let i = 1; i < caps.length; i++) {
        expect(caps[i]!.maxPixels).toBeGreaterThan(caps[i - 1]!.maxPixels)
        expect(caps[i]!.maxEffort).toBeLessThan(caps[i - 1]!.maxEffort)
      }
      expect(caps.at(-1)!.maxPixels).toBe(Number.POSITIVE_INFINITY)
    })

    it('apply at the tier boundaries: a tier includes its maxPixels', () => {
      for (const [i, { maxPixels, maxEffort }] of caps.entries()) {
        if (!Number.isFinite(maxPixels)) continue
        expect(codec.effortFor!(9, maxPixels)).toBe(maxEffort)
        expect(codec.effortFor!(9, maxPixels + 1)).toBe(caps[i + 1]!.maxEffort)
      }
      expect(codec.effortFor!(0, 16_000_000)).toBe(0)
    })

    it('are the ones the limits guide states', () => {
      const tiers = caps.map(({ maxPixels, maxEffort }) =>
        Number.isFinite(maxPixels) ? `${maxEffort} up to ${maxPixels / 1e6} MP` : `${maxEffort} above`,
      )
      const sentence = `at most ${tiers.slice(0, -1).join(', ')} and ${tiers.at(-1)}`
      expect(limitsGuide.replace(/\s+/g, ' ').includes(sentence), `docs/guide/limits-errors.md lacks "${sentence}"`).toBe(true)
    })
  })
}

describe('animated WebP effort caps (by frames x output pixels)', () => {
  // CPU seconds per MP of libwebp's animation encoder on a 24-frame 640x400 photographic pan, times 1.5 (src/codecs/webp.ts).
  const SECONDS = {
    lossy: [0.135, 0.135, 0.135, 0.23, 0.23, 0.27, 5.8, 5.8, 5.8, 5.8],
    lossless: [0.22, 0.25, 0.28, 0.66, 0.66, 0.87, 1.03, 1.03, 1.03, 1.03],
  }
  const maxAnimationPixels = Number((env as unknown as Record<string, string>).MAX_ANIMATION_PIXELS)

  for (const kind of ['lossy', 'lossless'] as const) {
    it(`${kind}: every tier under half of cpu_ms at its highest effort, the last (up to MAX_ANIMATION_PIXELS) under cpu_ms`, () => {
      const caps = WEBP_ANIMATION_EFFORT_CAPS[kind]
      for (const [i, { maxPixels, maxEffort }] of caps.entries()) {
        const seconds = (Math.min(maxPixels, maxAnimationPixels) / 1e6) * SECONDS[kind][maxEffort]!
        const limit = i === caps.length - 1 && kind === 'lossless' ? cpuLimitSeconds : cpuLimitSeconds / 2
        expect(seconds, `effort ${maxEffort} up to ${maxPixels} px`).toBeLessThan(limit)
      }
      expect(caps.at(-1)!.maxPixels).toBe(Number.POSITIVE_INFINITY)
    })

    it(`${kind}: are the ones the limits guide states`, () => {
      const caps = WEBP_ANIMATION_EFFORT_CAPS[kind]
      const tiers = caps.map(({ maxPixels, maxEffort }) => (Number.isFinite(maxPixels) ? `${maxEffort} up to ${maxPixels / 1e6} MP` : `${maxEffort} above`))
      const sentence = `${kind} at most ${tiers.slice(0, -1).join(', ')} and ${tiers.at(-1)}`
      expect(limitsGuide.replace(/\s+/g, ' ').includes(sentence), `docs/guide/limits-errors.md lacks "${sentence}"`).toBe(true)
    })
  }
})
