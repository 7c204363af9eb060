/**
 * The memory model must not under-estimate what was measured (docs/memory.md, peak RSS growth of
 * workerd in a fresh `wrangler dev`): an under-estimate is a conversion the API lets through that
 * could kill a 128 MB isolate. Figures are the measured MiB at commit d8feddf.
 */
import { describe, expect, it } from 'vitest'
import type { OutputFormat } from '../../src/codecs/registry'
import { estimateMiB } from '../../src/pipeline/limits'
import type { ImageHeader } from '../../src/pipeline/sniff'

const jpegHeader = (width: number, height: number, progressive = false): ImageHeader => ({
  format: 'jpeg', width, height, orientation: 1, hasAlpha: false, frames: 1, bitDepth: 8, progressive, scans: progressive ? 10 : 1, truncated: false,
})

const SIZES = { 1: [1152, 864], 4: [2304, 1728], 12: [4032, 3024] } as const

const MEASURED: Array<[OutputFormat, keyof typeof SIZES, number, boolean?]> = [
  ['jpeg', 1, 35.1],
  ['webp', 1, 45.0],
  ['avif', 1, 91.6],
  ['png', 1, 50.1],
  ['jpeg', 4, 114.6],
  ['webp', 4, 100.6],
  ['avif', 4, 177.9],
  ['png', 4, 142.8],
  ['jpeg', 12, 310.7],
  ['webp', 12, 241.4],
  ['avif', 12, 367.9],
  ['png', 12, 323.4],
  ['webp', 12, 275.9, true],
]

describe('memory model', () => {
  for (const [format, mp, measured, progressive] of MEASURED) {
    it(`estimates at least the measured ${measured} MiB for ${progressive ? 'progressive ' : ''}JPEG ${mp} MP to ${format}`, () => {
      const [width, height] = SIZES[mp]
      const header = jpegHeader(width, height, progressive)
      const estimate = estimateMiB({ header, format, cropPixels: width * height, width, height, resized: false })
      expect(estimate).toBeGreaterThanOrEqual(measured)
    })
  }

  it('charges a resize on top of decoding and encoding', () => {
    const header = jpegHeader(2304, 1728)
    const plan = { header, format: 'webp' as const, cropPixels: 2304 * 1728, width: 1200, height: 900 }
    expect(estimateMiB({ ...plan, resized: true })).toBeGreaterThan(estimateMiB({ ...plan, resized: false }))
  })
})

describe('memory model with a resize', () => {
  // Measured before box pre-shrinking (commit 33179f8): the model must cover these too.
  const RESIZED: Array<[OutputFormat, keyof typeof SIZES, number, number, number]> = [
    ['webp', 1, 800, 600, 79.4],
    ['jpeg', 1, 800, 600, 68.8],
    ['jpeg', 4, 1200, 900, 195.7],
    ['webp', 4, 1200, 900, 204.0],
    ['webp', 4, 2048, 1536, 293.5],
  ]
  for (const [format, mp, width, height, measured] of RESIZED) {
    it(`estimates at least the measured ${measured} MiB for JPEG ${mp} MP to ${width}x${height} ${format}`, () => {
      const [w, h] = SIZES[mp]
      const estimate = estimateMiB({ header: jpegHeader(w, h), format, cropPixels: w * h, width, height, resized: true })
      expect(estimate).toBeGreaterThanOrEqual(measured)
    })
  }
})
