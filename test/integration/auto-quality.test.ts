/**
 * quality=auto: the lowest quality whose output scores the target (SSIMULACRA 2) is chosen per image and said in
 * X-Quality and X-Score. The 480x300 photo is its own sample (not over 576 px a side), so the answer itself must score
 * what X-Score says.
 */
import { describe, expect, it } from 'vitest'
import { leanCodec, MemoryCap } from '../../wasm'
import { compress, expectProblem, okBytes } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import { decode, greyPng } from '../helpers/image'
import { callWorker } from '../helpers/worker'

const jpeg = { contentType: 'image/jpeg' }
const scoreOf = async (answer: Uint8Array, source: ImageData) => leanCodec(new MemoryCap(256 * 2 ** 20)).score(source, (await decode(answer)).image, false)

describe('quality=auto chooses the quality that reaches the target', () => {
  for (const format of ['jpeg', 'webp', 'avif'] as const) {
    it(`${format}: the answer scores the target or more, as X-Score says`, async () => {
      const source = (await decode(fixture('photo.jpg'))).image
      const res = await compress(fixture('photo.jpg'), { format, quality: 'auto', target: 70, effort: 2 }, jpeg)
      const body = await okBytes(res)
      const out = await decode(body)
      expect([out.format, out.image.width, out.image.height]).toEqual([format, 480, 300])
      const quality = Number(res.headers.get('x-quality'))
      expect(quality).toBeGreaterThanOrEqual(10)
      expect(quality).toBeLessThanOrEqual(95)
      const said = Number(res.headers.get('x-score'))
      expect(said).toBeGreaterThanOrEqual(70)
      // (the service decodes the JPEG row by row, the test whole: a fraction of a point apart)
      expect(Math.abs((await scoreOf(body, source)) - said)).toBeLessThan(1)
    })
  }

  it('a higher target costs a higher quality and more bytes', async () => {
    const at = async (target: number) => {
      const res = await compress(fixture('photo.jpg'), { format: 'webp', quality: 'auto', target, effort: 2 }, jpeg)
      return { quality: Number(res.headers.get('x-quality')), bytes: (await okBytes(res)).length }
    }
    const [low, high] = [await at(55), await at(85)]
    expect(high.quality).toBeGreaterThan(low.quality)
    expect(high.bytes).toBeGreaterThan(low.bytes)
  })

  it('a flat graphic gets a lower quality than a photo at the same target', async () => {
    const flat = await compress(await greyPng(480, 300), { format: 'jpeg', quality: 'auto', effort: 2 }, { contentType: 'image/png' })
    const photo = await compress(fixture('photo.jpg'), { format: 'jpeg', quality: 'auto', effort: 2 }, jpeg)
    await okBytes(flat)
    await okBytes(photo)
    expect(Number(flat.headers.get('x-quality'))).toBeLessThan(Number(photo.headers.get('x-quality')))
  })

  it('puts the quality and the score in the JSON answer', async () => {
    const res = await compress(fixture('photo.jpg'), { format: 'webp', quality: 'auto', response: 'json', effort: 2 }, jpeg)
    const answer = await res.json<{ quality: number; score: number }>()
    expect(answer.quality).toBe(Number(res.headers.get('x-quality')))
    expect(answer.score).toBeCloseTo(Number(res.headers.get('x-score')), 2)
  })

  it('with format=png: a palette whose target is searched', async () => {
    const res = await compress(fixture('photo.png'), { format: 'png', quality: 'auto', target: 60, effort: 0 }, { contentType: 'image/png' })
    const body = await okBytes(res)
    expect(body[25]).toBe(3) // colour type 3: indexed
    expect(Number(res.headers.get('x-score'))).toBeGreaterThanOrEqual(60)
    expect(Number(res.headers.get('x-palette-colors'))).toBeLessThanOrEqual(256)
  })

  it('with format=auto: the chosen format is searched', async () => {
    const res = await compress(fixture('photo.jpg'), { format: 'auto', quality: 'auto', effort: 2 }, { ...jpeg, headers: { Accept: 'image/webp,*/*' } })
    await okBytes(res)
    expect(res.headers.get('content-type')).toBe('image/webp')
    expect(Number(res.headers.get('x-score'))).toBeGreaterThan(0)
  })

  it('with max_bytes: the chosen quality is lowered until the answer fits', async () => {
    const res = await compress(fixture('photo.jpg'), { format: 'webp', quality: 'auto', max_bytes: 5000, effort: 2 }, jpeg)
    const body = await okBytes(res)
    expect(body.length).toBeLessThanOrEqual(5000)
    expect(res.headers.get('x-score')).toBeNull()
  })

  for (const format of ['jpeg', 'webp'] as const) {
    it(`${format}, an image larger than the sample: the answer is scored whole, and X-Score is that score`, async () => {
      const source = (await decode(fixture('large.jpg'))).image
      const res = await compress(fixture('large.jpg'), { format, quality: 'auto', target: 70, effort: 2 }, jpeg)
      const body = await okBytes(res)
      const said = Number(res.headers.get('x-score'))
      // the worst tile of the sample alone is a few points off the whole answer's score; the answer is checked whole
      expect(Math.abs((await scoreOf(body, source)) - said)).toBeLessThan(0.3)
      expect(said).toBeGreaterThanOrEqual(70)
    })
  }

  it('a JPEG padded onto a transparent canvas (fit=contain): the answer keeps its alpha and its whole score, over two backgrounds, reaches the target', async () => {
    const res = await compress(fixture('large.jpg'), { format: 'webp', quality: 'auto', target: 70, effort: 2, width: 900, height: 900, fit: 'contain' }, jpeg)
    const out = await decode(await okBytes(res))
    expect([out.image.width, out.image.height]).toEqual([900, 900])
    expect(out.image.data[3]).toBe(0) // a padded corner
    expect(Number(res.headers.get('x-score'))).toBeGreaterThanOrEqual(70)
  })

  it('an image larger than the sample: tiles of it are scored, the answer is full size', async () => {
    const res = await compress(fixture('large.jpg'), { format: 'webp', quality: 'auto', effort: 2 }, jpeg)
    const out = await decode(await okBytes(res))
    const input = await decode(fixture('large.jpg'))
    expect([out.image.width, out.image.height]).toEqual([input.image.width, input.image.height])
    expect(Number(res.headers.get('x-score'))).toBeGreaterThan(0)
  })
})

describe('quality=auto keeps within the CPU limit', () => {
  it('starts no try past 30 % of CPU_LIMIT_MS: with a limit no try fits in, the first try (the default quality) is the answer', async () => {
    const post = (vars: Record<string, string> = {}) =>
      callWorker('/api/compress?format=webp&quality=auto&target=50&effort=2', { method: 'POST', body: fixture('photo.jpg'), headers: { 'Content-Type': 'image/jpeg' } }, vars)
    const searched = await post()
    expect(Number(searched.headers.get('x-quality'))).toBeLessThan(80) // target 50 is reached well below quality 80
    const cut = await post({ CPU_LIMIT_MS: '1' })
    const body = await okBytes(cut)
    expect(cut.headers.get('x-quality')).toBe('80')
    expect(Number(cut.headers.get('x-score'))).toBeGreaterThan(50)
    expect((await decode(body)).format).toBe('webp')
  })
})

describe('quality=auto refuses what it cannot apply to', () => {
  it('target without quality=auto', async () => {
    const body = await expectProblem(await compress(fixture('photo.jpg'), { format: 'webp', target: 70 }, jpeg), 'invalid_option', 400)
    expect(body.option).toBe('target')
  })

  it('with lossless=true', async () => {
    await expectProblem(await compress(fixture('photo.jpg'), { format: 'webp', quality: 'auto', lossless: true }, jpeg), 'invalid_option', 400)
  })

  it('a target outside 10-95, or a quality that is neither a number nor auto', async () => {
    await expectProblem(await compress(fixture('photo.jpg'), { format: 'webp', quality: 'auto', target: 99 }, jpeg), 'invalid_option', 400)
    await expectProblem(await compress(fixture('photo.jpg'), { format: 'webp', quality: 'best' }, jpeg), 'invalid_option', 400)
  })
})
