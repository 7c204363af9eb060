/**
 * AVIF output from the row pipeline: the AVIF sink (libavif + libaom in the lean codec, wasm/lean/sink_avif.c)
 * takes the rows 64 at a time, so no whole RGBA image exists beside its YUV planes. Before it, the encoder took
 * the whole RGBA image and a 12 MP photo to AVIF at full size was refused (estimate 225 MiB).
 */
import { describe, expect, it } from 'vitest'
import { CODECS } from '../../src/codecs/registry'
import { compress, okBytes } from '../helpers/api'
import { decode, psnr } from '../helpers/image'
import { screenshotSamples, writePng } from '../helpers/png'
import { callWorker } from '../helpers/worker'

const estimate = (res: Response) => Number.parseInt(res.headers.get('x-memory-estimate') ?? '', 10)

describe('AVIF from the row pipeline', () => {
  it('encodes a 3840x2160 screenshot to AVIF 1600 px wide, as close to it as the same resize to PNG (the lean memory grows while rows are taken)', async () => {
    const png = await writePng({ width: 3840, height: 2160, channels: 3, depth: 8, samples: screenshotSamples(3840, 2160) })
    const res = await compress(png, { format: 'avif', width: 1600, effort: 0 }, { contentType: 'image/png' })
    const avif = await decode(await okBytes(res))
    expect(estimate(res)).toBeLessThanOrEqual(120)
    expect([avif.format, avif.image.width, avif.image.height]).toEqual(['avif', 1600, 900])
    const reference = await decode(await okBytes(await compress(png, { format: 'png', width: 1600, effort: 0 }, { contentType: 'image/png' })))
    expect(psnr(avif.image, reference.image)).toBeGreaterThan(30)
  }, 60_000)

  it('encodes a 12 MP photo to AVIF at full size within the budget, close to the source', async () => {
    const [width, height] = [4032, 3024]
    const data = new Uint8ClampedArray(width * height * 4)
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) data.set([(x * 255) / width, (y * 255) / height, 128 + 100 * Math.sin((x + y) / 300), 255], (y * width + x) * 4)
    }
    const source = new ImageData(data, width, height)
    const jpeg = await CODECS.jpeg.encode!(source, { quality: 90, lossless: false, effort: 2, turbo: true }).then(({ bytes }) => bytes)
    const res = await compress(jpeg, { format: 'avif' }, { contentType: 'image/jpeg' })
    const out = await decode(await okBytes(res))
    expect(estimate(res)).toBeLessThanOrEqual(120)
    expect([out.format, out.image.width, out.image.height]).toEqual(['avif', width, height])
    expect(psnr(out.image, source)).toBeGreaterThan(30)
  }, 120_000)

  it('encodes a PNG of over 8 MiB, whose body it gives back before libaom starts, as the same resize to PNG', async () => {
    // Grain in the low bits keeps deflate from shrinking it under the body buffer's 8 MiB: the AVIF sink then gives the
    // request body back once the rows are in its planes (src/pipeline/convert.ts), and nothing may read it after.
    const [width, height] = [2000, 1600]
    const samples = new Uint8Array(width * height * 3)
    let seed = 1
    for (let i = 0; i < samples.length; i++) {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0
      const x = (i / 3) % width
      samples[i] = ((i % 3 === 0 ? x : i % 3 === 1 ? i / 3 / width : 128) & 0xc0) | (seed >>> 26)
    }
    const png = await writePng({ width, height, channels: 3, depth: 8, samples })
    expect(png.length).toBeGreaterThan(8 * 2 ** 20)
    const post = (query: string) =>
      callWorker(`/api/compress?${query}`, { method: 'POST', headers: { 'Content-Type': 'image/png' }, body: png }, { MAX_INPUT_BYTES: String(16 * 2 ** 20) })
    const avif = await decode(await okBytes(await post('format=avif&width=500')))
    expect([avif.format, avif.image.width, avif.image.height]).toEqual(['avif', 500, 400])
    const reference = await decode(await okBytes(await post('format=png&width=500&effort=0')))
    expect(psnr(avif.image, reference.image)).toBeGreaterThan(28)
  }, 120_000)
})
