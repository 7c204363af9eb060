/**
 * WebP input through the lean codec (libwebp's own decoder, wasm/lean/webp_dec.c): a 12 MP WebP
 * converts within the memory budget at its size and downscaled (jSquash's decoder, before, held it
 * twice: 422), broken and lying files are refused as corrupt_image, and pixels come out as an
 * independent decoder (jSquash's libwebp build, test/helpers/reference.ts) reads them.
 *
 * The 4000x3000 source is drawn here (gradients and hard-edged blocks: it compresses to well under the
 * tests' 1 MiB body limit, and a wrong row or plane shows in the PSNR) and encoded at quality 90.
 */
import { describe, expect, it } from 'vitest'
import { CODECS } from '../../src/codecs/registry'
import { readHeader } from '../../src/pipeline/sniff'
import { compress, expectProblem, okBytes } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import { firstDifference } from '../helpers/bytes'
import * as H from '../helpers/hostile'
import { decode, psnr } from '../helpers/image'
import { referenceResize, referenceWebpDecode } from '../helpers/reference'

const WIDTH = 4000
const HEIGHT = 3000

function drawing(width: number, height: number): ImageData {
  const image = new ImageData(width, height)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const block = ((x >> 8) + (y >> 8)) & 1
      image.data.set([(x * 255) / width, (y * 255) / height, block ? 200 : 40, 255], (y * width + x) * 4)
    }
  }
  return image
}

let large: Promise<{ source: ImageData; webp: Uint8Array }> | undefined
const largeWebp = () =>
  (large ??= (async () => {
    const source = drawing(WIDTH, HEIGHT)
    const webp = await CODECS.webp.encode!(source, { quality: 90, lossless: false, effort: 4 }).then(({ bytes }) => bytes)
    return { source, webp }
  })())

async function expectStillServing(): Promise<void> {
  const res = await compress(fixture('photo.webp'), { format: 'png' }, { contentType: 'image/webp' })
  expect(res.status, 'the next valid request').toBe(200)
  await res.arrayBuffer()
}

describe('a 12 MP WebP', () => {
  for (const format of ['webp', 'jpeg'] as const) {
    it(`converts a 4000x3000 WebP to ${format} at its size within the memory budget`, async () => {
      const { source, webp } = await largeWebp()
      expect(webp.length).toBeLessThan(1024 * 1024)
      const res = await compress(webp, { format }, { contentType: 'image/webp' })
      const bytes = await okBytes(res)
      expect(Number.parseInt(res.headers.get('x-memory-estimate') ?? '', 10)).toBeLessThanOrEqual(120)
      const out = format === 'webp' ? await referenceWebpDecode(bytes) : (await decode(bytes)).image
      expect([out.width, out.height]).toEqual([WIDTH, HEIGHT])
      const score = psnr(source, out)
      expect(score, `PSNR ${score.toFixed(2)} dB`).toBeGreaterThan(32)
    })
  }
})

describe('a 12 MP WebP downscaled', () => {
  for (const format of ['webp', 'jpeg'] as const) {
    it(`converts a 4000x3000 WebP to a 1600 px ${format} within the memory budget, shrunk while decoding`, async () => {
      const { source, webp } = await largeWebp()
      const res = await compress(webp, { format, width: 1600 }, { contentType: 'image/webp' })
      const bytes = await okBytes(res)
      expect(Number.parseInt(res.headers.get('x-memory-estimate') ?? '', 10)).toBeLessThanOrEqual(120)
      const out = format === 'webp' ? await referenceWebpDecode(bytes) : (await decode(bytes)).image
      expect([out.width, out.height]).toEqual([1600, 1200])
      const score = psnr(await referenceResize(source, 1600, 1200), out)
      expect(score, `PSNR ${score.toFixed(2)} dB against a Lanczos3 of the source`).toBeGreaterThan(30)
    })
  }
})

describe('broken and lying WebPs', () => {
  for (const format of ['webp', 'png'] as const) {
    it(`refuses a truncated WebP converted to ${format}, 422 corrupt_image, even one byte short`, async () => {
      const whole = fixture('photo.webp')
      for (const length of [Math.floor(whole.length * 0.6), whole.length - 1]) {
        const cut = whole.subarray(0, length)
        expect(readHeader(cut)).toMatchObject({ format: 'webp' })
        await expectProblem(await compress(cut, { format }, { contentType: 'image/webp' }), 'corrupt_image', 422)
        await expectStillServing()
      }
    })
  }

  it('refuses a still WebP whose VP8 frame is larger than its 16x16 canvas, 422 corrupt_image', async () => {
    const still = fixture('photo.webp')
    const vp8 = still.subarray(12, 20 + new DataView(still.buffer, still.byteOffset).getUint32(16, true))
    const vp8x = Uint8Array.from([0, 0, 0, 0, 15, 0, 0, 15, 0, 0])
    const lying = H.riffChunk('RIFF', H.concat(new TextEncoder().encode('WEBP'), H.riffChunk('VP8X', vp8x), vp8))
    expect(readHeader(lying)).toMatchObject({ format: 'webp', width: 16, height: 16 })
    await expectProblem(await compress(lying, { format: 'png' }, { contentType: 'image/webp' }), 'corrupt_image', 422)
    await expectStillServing()
  })

  it('refuses an animated WebP whose first frame is larger than its frame rectangle says, 422 corrupt_image', async () => {
    // 300x300 of VP8L in a 16x16 frame: small enough to decode within the budget, so only the size check refuses it.
    const lying = H.webpAnimationOf(H.vp8lSolid(300, 300), 16)
    const problem = await expectProblem(await compress(lying, { format: 'png' }, { contentType: 'image/webp' }), 'corrupt_image', 422)
    expect(problem.detail).toContain('300x300')
    await expectStillServing()
  })
})

describe('WebP pixels', () => {
  it('decodes a lossless WebP with alpha exactly as an independent decoder does', async () => {
    const source = (await decode(fixture('basn6a08.png'))).image
    const webp = await CODECS.webp.encode!(source, { quality: 100, lossless: true, effort: 4 }).then(({ bytes }) => bytes)
    const header = readHeader(webp)
    expect(header).toMatchObject({ format: 'webp', hasAlpha: true, lossless: true })
    const ours = await CODECS.webp.decode!(webp, header)
    const reference = await referenceWebpDecode(webp)
    expect([ours.width, ours.height]).toEqual([reference.width, reference.height])
    expect(firstDifference(new Uint8Array(ours.data.buffer, ours.data.byteOffset, ours.data.length), new Uint8Array(reference.data.buffer))).toBe(-1)
    // and through the API, as a PNG: the same pixels wherever they are visible
    const png = await decode(await okBytes(await compress(webp, { format: 'png' }, { contentType: 'image/webp' })))
    expect(psnr(reference, png.image, { alpha: true })).toBe(Number.POSITIVE_INFINITY)
  })
})
