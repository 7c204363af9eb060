/**
 * Lossless WebP by our own streaming VP8L coder (wasm/lean/sink_webpll.c), which the plan takes where libwebp's
 * lossless encoder (25-30 B a pixel) does not fit the memory budget. Small images are sent with MEMORY_BUDGET_MIB at
 * 40, under libwebp's estimate for any image (51 MiB and up) and over ours, so that every one takes our coder; the
 * answer, decoded, must be the source's pixels exactly (colour under a fully transparent pixel aside, as libwebp).
 * A 5120x2880 screenshot converts at the default budget, where libwebp's was refused.
 */
import { describe, expect, it } from 'vitest'
import { MIME, okBytes } from '../helpers/api'
import { decode } from '../helpers/image'
import { screenshotSamples, writePng } from '../helpers/png'
import { callWorker } from '../helpers/worker'

const post = (body: Uint8Array, vars: Record<string, string>, query = 'format=webp&lossless=true') =>
  callWorker(`/api/compress?${query}`, { method: 'POST', headers: { 'Content-Type': 'image/png' }, body }, vars)

/** Budget under libwebp's lossless estimate for any image, over ours for these. */
const OURS_ONLY = { MEMORY_BUDGET_MIB: '40' }

/** A small deterministic generator, so the images are the same on every run. */
function random(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0
    return s >>> 24
  }
}

type Kind = 'photo' | 'palette'

/** RGBA samples: `photo` many colours (gradients and noise), `palette` `colours` distinct ones in runs; `alpha` some translucency. */
function samples(width: number, height: number, kind: Kind, alpha: boolean, colours = 0): Uint8Array {
  const next = random(width * 31 + height * 7 + colours)
  const table = Array.from({ length: Math.max(colours, 1) }, () => [next(), next(), next(), alpha ? next() : 255])
  const out = new Uint8Array(width * height * 4)
  let entry = table[0]!
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4
      if (kind === 'photo') {
        out.set([(x * 3 + y + (next() & 7)) & 255, (y * 2 + (next() & 3)) & 255, (x ^ y) & 255, alpha ? (x * 5 + next()) & 255 : 255], i)
      } else {
        if (next() < 40) entry = table[next() % table.length]!
        out.set(entry, i)
      }
    }
  }
  return out
}

/** Whether `got` has the source's pixels: every alpha, and every colour where alpha is above 0. */
function sameVisiblePixels(got: ImageData, want: Uint8Array): boolean {
  for (let i = 0; i < want.length; i += 4) {
    if (got.data[i + 3] !== want[i + 3]) return false
    if (want[i + 3] === 0) continue
    if (got.data[i] !== want[i] || got.data[i + 1] !== want[i + 1] || got.data[i + 2] !== want[i + 2]) return false
  }
  return true
}

const CASES: { name: string; width: number; height: number; kind: Kind; alpha: boolean; colours?: number }[] = [
  { name: 'an opaque photo-like image', width: 301, height: 203, kind: 'photo', alpha: false },
  { name: 'a photo-like image with alpha', width: 257, height: 131, kind: 'photo', alpha: true },
  { name: 'two colours (8 pixels bundled)', width: 203, height: 77, kind: 'palette', alpha: false, colours: 2 },
  { name: 'four colours with alpha (4 bundled)', width: 129, height: 65, kind: 'palette', alpha: true, colours: 4 },
  { name: '16 colours (2 bundled), odd width', width: 333, height: 99, kind: 'palette', alpha: false, colours: 16 },
  { name: '200 colours with alpha (a palette, not bundled)', width: 250, height: 170, kind: 'palette', alpha: true, colours: 200 },
  { name: '256 colours (the most a palette takes)', width: 640, height: 64, kind: 'palette', alpha: false, colours: 256 },
  { name: 'a 1x1 image', width: 1, height: 1, kind: 'photo', alpha: true },
  { name: 'a one-pixel-high row', width: 517, height: 1, kind: 'photo', alpha: false },
  { name: 'a one-pixel-wide column', width: 1, height: 413, kind: 'palette', alpha: false, colours: 3 },
  { name: 'a large band of rows (a window that slides)', width: 2048, height: 700, kind: 'photo', alpha: false },
]

describe('lossless WebP by the streaming coder', () => {
  for (const { name, width, height, kind, alpha, colours } of CASES) {
    it(`keeps every pixel of ${name}`, async () => {
      const rgba = samples(width, height, kind, alpha, colours)
      const png = await writePng({ width, height, channels: 4, depth: 8, samples: rgba })
      const res = await post(png, { ...OURS_ONLY, MAX_INPUT_BYTES: String(16 * 1024 * 1024) })
      const out = await decode(await okBytes(res))
      expect(res.headers.get('content-type')).toBe(MIME.webp)
      expect([out.format, out.image.width, out.image.height]).toEqual(['webp', width, height])
      expect(Number.parseInt(res.headers.get('x-memory-estimate') ?? '', 10)).toBeLessThanOrEqual(40)
      expect(sameVisiblePixels(out.image, rgba)).toBe(true)
    })
  }

})

describe('a 5120x2880 (5K) screenshot PNG', () => {
  it('converts to lossless WebP at its size, every pixel kept', async () => {
    const [width, height] = [5120, 2880]
    const rgb = screenshotSamples(width, height)
    const png = await writePng({ width, height, channels: 3, depth: 8, samples: rgb })
    const res = await post(png, { MAX_INPUT_BYTES: String(16 * 1024 * 1024), MAX_INPUT_PIXELS: '50000000', MAX_OUTPUT_PIXELS: '50000000' })
    const out = await decode(await okBytes(res))
    expect([out.format, out.image.width, out.image.height]).toEqual(['webp', width, height])
    expect(Number.parseInt(res.headers.get('x-memory-estimate') ?? '', 10)).toBeLessThanOrEqual(120)
    let same = true
    for (let i = 0, j = 0; i < rgb.length && same; i += 3, j += 4) {
      same = out.image.data[j] === rgb[i] && out.image.data[j + 1] === rgb[i + 1] && out.image.data[j + 2] === rgb[i + 2] && out.image.data[j + 3] === 255
    }
    expect(same).toBe(true)
  }, 120_000)
})
