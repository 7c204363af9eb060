/**
 * Camera-size photos: a 24 MP phone JPEG (an iPhone's default 5712x4284) converts to a display size, since MAX_INPUT_PIXELS
 * is a 50 MP safety net and the memory model decides what fits; a conversion that does not fit is refused with what
 * would (a width, another format, lossy), and asking again so converts. Until this, every input over 16 MP was refused
 * from its header.
 */
import { describe, expect, it } from 'vitest'
import { decode, pixel } from '../helpers/image'
import { jpegWithSize } from '../helpers/hostile'
import { expectProblem, okBytes } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import { mozjpeg } from '../helpers/mozjpeg'
import { callWorker } from '../helpers/worker'
import { readHeader } from '../../src/pipeline/sniff'

/** The limits wrangler.toml ships (README "Limits"), and a body limit that takes the test's JPEG. */
const LIMITS = { MAX_INPUT_PIXELS: '50000000', MAX_OUTPUT_PIXELS: '50000000', MAX_INPUT_BYTES: String(8 * 1024 * 1024) }

const [WIDTH, HEIGHT] = [5712, 4284]
/** Four quadrants of known colour, each a gentle gradient, so a scaled answer is checked by its colours. */
const QUADRANTS = [[200, 40, 40], [40, 160, 60], [50, 70, 200], [230, 210, 60]] as const

/** A 24 MP JPEG (jSquash's MozJPEG, quality 60, 4:2:0; baseline unless asked) of the quadrants: about 1 MB. */
async function phoneJpeg(progressive = false): Promise<Uint8Array> {
  const data = new Uint8ClampedArray(WIDTH * HEIGHT * 4)
  for (let y = 0; y < HEIGHT; y++) {
    for (let x = 0; x < WIDTH; x++) {
      const colour = QUADRANTS[(y < HEIGHT / 2 ? 0 : 2) + (x < WIDTH / 2 ? 0 : 1)]!
      const shade = ((x + y) % 512) / 64 - 4
      const i = (y * WIDTH + x) * 4
      data[i] = colour[0] + shade
      data[i + 1] = colour[1] + shade
      data[i + 2] = colour[2] + shade
      data[i + 3] = 255
    }
  }
  return mozjpeg(new ImageData(data, WIDTH, HEIGHT), { quality: 60, baseline: !progressive, progressive, optimize_coding: true })
}

/** Each quadrant's centre of a 1600x1200 answer keeps its colour (the gradient moves it by at most 4). */
function expectQuadrants(image: ImageData, what: string): void {
  for (const [i, [x, y]] of [[400, 300], [1200, 300], [400, 900], [1200, 900]].entries()) {
    const [r, g, b] = pixel(image, x!, y!)
    const want = QUADRANTS[i]!
    expect(Math.max(Math.abs(r - want[0]), Math.abs(g - want[1]), Math.abs(b - want[2])), `${what} quadrant ${i}`).toBeLessThan(12)
  }
}

const post = (query: string, body: Uint8Array) =>
  callWorker(`/api/compress?${query}`, { method: 'POST', headers: { 'Content-Type': 'image/jpeg' }, body }, LIMITS)

describe('a 24 MP phone photo', () => {
  it('converts to a 1600 px WebP and JPEG with its colours in place', async () => {
    const jpeg = await phoneJpeg()
    expect(jpeg.length).toBeLessThan(8 * 1024 * 1024)
    for (const format of ['webp', 'jpeg'] as const) {
      const res = await post(`format=${format}&width=1600`, jpeg)
      const out = await decode(await okBytes(res))
      expect(out.format).toBe(format)
      expect([out.image.width, out.image.height]).toEqual([1600, 1200])
      expect(Number.parseInt(res.headers.get('x-memory-estimate') ?? '', 10)).toBeLessThanOrEqual(120)
      expectQuadrants(out.image, format)
    }
  })

  it('converts to a lossless WebP at full size, by the streaming coder (where libwebp does not fit)', async () => {
    const jpeg = await phoneJpeg()
    const res = await post('format=webp&lossless=true', jpeg)
    const answer = await okBytes(res)
    // (decoding a 24 MP lossless WebP here would take more than the test's own budget: the header says what it is;
    // test/integration/webp-lossless-stream.test.ts checks the coder's pixels)
    expect(readHeader(answer)).toMatchObject({ format: 'webp', width: WIDTH, height: HEIGHT, lossless: true })
    expect(Number.parseInt(res.headers.get('x-memory-estimate') ?? '', 10)).toBeLessThanOrEqual(120)
  }, 120_000)
})

describe('a 24 MP progressive JPEG', () => {
  it('converts to a 1600 px AVIF with its colours in place', { timeout: 120_000 }, async () => {
    // Its coefficients wait for the last scan (70 MiB as libjpeg keeps them at 24 MP, 4:2:0) in the decoder's store of
    // compressed rows, which the AVIF sink gives back before libaom allocates its frame.
    const res = await post('format=avif&width=1600', await phoneJpeg(true))
    const out = await decode(await okBytes(res))
    expect(out.format).toBe('avif')
    expect([out.image.width, out.image.height]).toEqual([1600, 1200])
    expect(Number.parseInt(res.headers.get('x-memory-estimate') ?? '', 10)).toBeLessThanOrEqual(120)
    expectQuadrants(out.image, 'avif')
  })

  it('whose coefficients do not fit is refused from its header with what fits: the same image as baseline JPEG', async () => {
    // A 50 MP header over a 7.9 MiB file: the store is charged by the file, whose coefficients could take 4.5 times its size.
    const header = jpegWithSize(fixture('progressive.jpg'), 8160, 6120)
    const padded = new Uint8Array(Math.round(7.9 * 2 ** 20))
    padded.set(header)
    const problem = await expectProblem(await post('format=webp&width=1600', padded), 'operation_too_large', 422)
    expect(problem.fits).toMatchObject({ asBaselineJpeg: true })
    expect(problem.detail).toContain('as baseline JPEG')
  })
})

describe('an image over MAX_INPUT_PIXELS', () => {
  it('is refused from its header with the largest size that would be taken', async () => {
    // A 60 MP header over a small JPEG's data: refused before a pixel is decoded.
    const problem = await expectProblem(await post('width=1600', jpegWithSize(fixture('photo.jpg'), 10_000, 6000)), 'image_too_large', 422)
    const fits = problem.fits as { width: number; height: number }
    expect(fits.width * fits.height).toBeLessThanOrEqual(50_000_000)
    expect(fits.width * fits.height).toBeGreaterThan(49_900_000)
    expect(Math.abs(fits.width / fits.height - 10_000 / 6000)).toBeLessThan(0.001)
    expect(problem.detail).toContain(`at most ${fits.width}x${fits.height}`)
  })
})
