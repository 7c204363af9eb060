/**
 * Resampling (src/pipeline/transform.ts applyGeometry, wasm/lean/resample.c): what a resized answer
 * holds, checked against an independent Lanczos3 (jSquash's, test/helpers/reference.ts) on the same
 * decoded source. PNG output, so the comparison sees the resampler and nothing lossy.
 *
 * Floor: the two resamplers agree to 90-100 dB on photos (float rounding only). Checked to fail: a
 * sampling grid shifted by half a pixel scored 24-30 dB (49 dB on the 1-pixel-wide strip), colour not
 * weighted by alpha 29 dB.
 */
import { describe, expect, it } from 'vitest'
import { CODECS } from '../../src/codecs/registry'
import { compress, expectProblem, okBytes } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import { jpegWithSize, prng } from '../helpers/hostile'
import { decode, psnr } from '../helpers/image'
import { referenceResize } from '../helpers/reference'

const FLOOR = 50

async function resized(name: string, query: Record<string, string | number | boolean>): Promise<{ source: ImageData; output: ImageData }> {
  const { image: source } = await decode(fixture(name))
  const { image: output } = await decode(await okBytes(await compress(fixture(name), { format: 'png', ...query })))
  return { source, output }
}

describe('resize', () => {
  it('downscales by a fraction as Lanczos3 does', async () => {
    // 480x300 to 300x188: a factor of 1.6, under the 2x at which a box shrink would go first.
    const { source, output } = await resized('photo.png', { width: 300 })
    expect([output.width, output.height]).toEqual([300, 188])
    const score = psnr(await referenceResize(source, 300, 188), output)
    expect(score, `PSNR ${score.toFixed(2)} dB`).toBeGreaterThan(FLOOR)
  })

  it('enlarges as Lanczos3 does when enlarge=true', async () => {
    const { source, output } = await resized('photo.png', { width: 701, enlarge: true })
    expect([output.width, output.height]).toEqual([701, 438])
    const score = psnr(await referenceResize(source, 701, 438), output)
    expect(score, `PSNR ${score.toFixed(2)} dB`).toBeGreaterThan(FLOOR)
  })

  it('squeezes whole rows into one pixel for a 1-pixel-wide fill', async () => {
    // A factor of 480 across: the kernel spans every column (no box shrink goes first).
    const { source, output } = await resized('photo.png', { width: 1, height: 233, fit: 'fill' })
    expect([output.width, output.height]).toEqual([1, 233])
    const score = psnr(await referenceResize(source, 1, 233), output)
    expect(score, `PSNR ${score.toFixed(2)} dB`).toBeGreaterThan(FLOOR)
  })

  it('shrinks noise by thousands as Lanczos3 does: every tap weighs what it should', async () => {
    // 24000x6 of noise to 4x1: some 18000 taps a pixel, each weight a unit or two in 16-bit fixed point, whose
    // rounding would add up to a weight of its own (checked to fail so: 36 dB); such a shrink keeps the floats.
    const random = prng(46)
    const pixels = new Uint8ClampedArray(24000 * 6 * 4)
    for (let i = 0; i < pixels.length; i++) pixels[i] = i % 4 === 3 ? 255 : Math.floor(random() * 256)
    const source = new ImageData(pixels, 24000, 6)
    const png = await CODECS.png.encode!(source, { quality: 100, lossless: true, effort: 0 }).then(({ bytes }) => bytes)
    const { image: output } = await decode(await okBytes(await compress(png, { format: 'png', width: 4, height: 1, fit: 'fill' })))
    expect([output.width, output.height]).toEqual([4, 1])
    const score = psnr(await referenceResize(source, 4, 1), output)
    expect(score, `PSNR ${score.toFixed(2)} dB`).toBeGreaterThan(FLOOR)
  })

  it('weights colour by alpha, so nearly transparent pixels lend no colour to their neighbours', async () => {
    // Left half opaque red, right half green at alpha 1: without weighting by alpha, the green
    // would tint the red edge as much as opaque green would.
    const pixels = new Uint8ClampedArray(40 * 40 * 4)
    for (let i = 0; i < 40 * 40; i++) pixels.set((i % 40) < 20 ? [255, 0, 0, 255] : [0, 255, 0, 1], i * 4)
    const source = new ImageData(pixels, 40, 40)
    const png = await CODECS.png.encode!(source, { quality: 100, lossless: true, effort: 0 }).then(({ bytes }) => bytes)
    const { image: output } = await decode(await okBytes(await compress(png, { format: 'png', width: 25 })))
    expect([output.width, output.height]).toEqual([25, 25])
    const score = psnr(await referenceResize(source, 25, 25, true), output, { alpha: true })
    expect(score, `PSNR ${score.toFixed(2)} dB`).toBeGreaterThan(FLOOR)
  })

  it('refuses a fill to a very flat box with 422 before decoding: the resampler would keep thousands of rows', async () => {
    // 2400x2400 to 2400x4: each output row spans about 3600 source rows (138 MiB of floats). Only the
    // header is read: the scan data is photo.jpg's.
    const res = await compress(jpegWithSize(fixture('photo.jpg'), 2400, 2400), { format: 'webp', width: 2400, height: 4, fit: 'fill' })
    await expectProblem(res, 'operation_too_large', 422)
  })
})
