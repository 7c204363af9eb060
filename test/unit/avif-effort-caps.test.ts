/**
 * The AVIF effort caps must keep one encode well inside wrangler.toml's cpu_ms: effort 9 used to be
 * allowed up to 1 MP, and a 0.9 MP photo at effort 9 took 92 s of CPU against a 30 s limit.
 *
 * CPU seconds per output megapixel, for photos, the slowest figure measured on the 2-core dev machine:
 * efforts 9, 6 and 4 from docs/robustness.md (large.jpg, 0.9 MP: 92 s, 33 s, 4 s); efforts 1, 2, 3 and 5
 * from the effort sweep in docs/benchmarks.md (1 MP: 0.37, 0.47, 1.09, 11.4 s), scaled by 2.2, the ratio
 * between the two documents' effort-4 figures; 7 and 8 geometrically between 6 and 9. Effort 0 is taken
 * as effort 1.
 */
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import readme from '../../README.md?raw'
import wranglerToml from '../../wrangler.toml?raw'
import { AVIF_EFFORT_CAPS, avif } from '../../src/codecs/avif'

const SECONDS_PER_MP = [0.82, 0.82, 1.03, 2.4, 4.44, 25, 36.7, 54, 74, 102.2] as const

const cpuLimitSeconds = Number(/^cpu_ms\s*=\s*(\d+)/m.exec(wranglerToml)![1]) / 1000
const maxOutputPixels = Number((env as unknown as Record<string, string>).MAX_OUTPUT_PIXELS)

describe('AVIF effort caps', () => {
  it('keep every size tier under half of cpu_ms at its highest allowed effort', () => {
    expect(cpuLimitSeconds).toBe(30)
    for (const { maxPixels, maxEffort } of AVIF_EFFORT_CAPS) {
      const pixels = Math.min(maxPixels, maxOutputPixels)
      const seconds = (pixels / 1e6) * SECONDS_PER_MP[maxEffort]!
      expect(seconds, `effort ${maxEffort} up to ${pixels} px`).toBeLessThan(cpuLimitSeconds / 2)
    }
  })

  it('lower the effort as the output grows, and end with a tier for any size', () => {
    for (let i = 1; i < AVIF_EFFORT_CAPS.length; i++) {
      expect(AVIF_EFFORT_CAPS[i]!.maxPixels).toBeGreaterThan(AVIF_EFFORT_CAPS[i - 1]!.maxPixels)
      expect(AVIF_EFFORT_CAPS[i]!.maxEffort).toBeLessThan(AVIF_EFFORT_CAPS[i - 1]!.maxEffort)
    }
    expect(AVIF_EFFORT_CAPS.at(-1)!.maxPixels).toBe(Number.POSITIVE_INFINITY)
  })

  it('apply at the tier boundaries: a tier includes its maxPixels', () => {
    expect(avif.effortFor!(9, 100_000)).toBe(9)
    expect(avif.effortFor!(9, 100_001)).toBe(7)
    expect(avif.effortFor!(4, 3_000_000)).toBe(4)
    expect(avif.effortFor!(4, 3_000_001)).toBe(3)
    expect(avif.effortFor!(0, 16_000_000)).toBe(0)
  })

  it('are the ones the README states', () => {
    const tiers = AVIF_EFFORT_CAPS.map(({ maxPixels, maxEffort }) =>
      Number.isFinite(maxPixels) ? `${maxEffort} up to ${maxPixels / 1e6} MP` : `${maxEffort} above`,
    )
    const sentence = `at most ${tiers.slice(0, -1).join(', ')} and ${tiers.at(-1)}`
    expect(readme.replace(/\s+/g, ' ').includes(sentence), `README.md lacks "${sentence}"`).toBe(true)
  })
})
