/**
 * max_bytes: the answer's size as a limit. The quality (given or default) is lowered to the highest that fits; the
 * next quality up must not fit; lossless outputs and impossible targets are 422 max_bytes_unreachable.
 */
import { describe, expect, it } from 'vitest'
import { compress, expectProblem, okBytes } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import { decode } from '../helpers/image'
import { callWorker } from '../helpers/worker'

const jpeg = { contentType: 'image/jpeg' }

describe('max_bytes lowers the quality to the highest that fits', () => {
  for (const format of ['webp', 'jpeg', 'avif'] as const) {
    it(`${format}: within the limit, at the highest quality that is`, async () => {
      const plain = await okBytes(await compress(fixture('photo.jpg'), { format, effort: 0 }, jpeg))
      const limit = Math.floor(plain.length * 0.6)
      const res = await compress(fixture('photo.jpg'), { format, effort: 0, max_bytes: limit }, jpeg)
      const body = await okBytes(res)
      expect(body.length).toBeLessThanOrEqual(limit)
      const quality = Number(res.headers.get('x-quality'))
      expect(quality).toBeGreaterThanOrEqual(1)
      const out = await decode(body)
      expect([out.format, out.image.width, out.image.height]).toEqual([format, 480, 300])
      // The next quality up is over the limit: this one is the highest.
      const above = await okBytes(await compress(fixture('photo.jpg'), { format, effort: 0, quality: quality + 1 }, jpeg))
      expect(above.length).toBeGreaterThan(limit)
    })
  }

  it('leaves the quality as it is when the answer already fits, and says which it is', async () => {
    const res = await compress(fixture('photo.jpg'), { format: 'webp', quality: 70, max_bytes: 10_000_000 }, jpeg)
    await okBytes(res)
    expect(res.headers.get('x-quality')).toBe('70')
  })

  it('works with format=auto: the chosen format is fitted', async () => {
    const res = await compress(fixture('photo.jpg'), { format: 'auto', effort: 0, max_bytes: 6000 }, { ...jpeg, headers: { Accept: 'image/webp,*/*' } })
    const body = await okBytes(res)
    expect(res.headers.get('content-type')).toBe('image/webp')
    expect(body.length).toBeLessThanOrEqual(6000)
  })

  it('puts the quality in the JSON answer', async () => {
    const res = await compress(fixture('photo.jpg'), { format: 'jpeg', max_bytes: 15_000, response: 'json', effort: 0 }, jpeg)
    const answer = await res.json<{ quality: number; output: { bytes: number } }>()
    expect(answer.output.bytes).toBeLessThanOrEqual(15_000)
    expect(answer.quality).toBeLessThan(80)
  })
})

describe('max_bytes keeps within the CPU limit', () => {
  const fitting = (limit: number, vars: Record<string, string> = {}) =>
    callWorker(`/api/compress?format=webp&effort=0&max_bytes=${limit}`, { method: 'POST', body: fixture('photo.jpg'), headers: { 'Content-Type': 'image/jpeg' } }, vars)

  it('tries no lower quality that would take the conversion past 80 % of CPU_LIMIT_MS: 422 when the first answer is over the target', async () => {
    const plain = await okBytes(await compress(fixture('photo.jpg'), { format: 'webp', effort: 0 }, jpeg))
    const limit = Math.floor(plain.length * 0.6)
    expect((await fitting(limit)).status).toBe(200) // with the default limit, lower qualities are tried and one fits
    const body = await expectProblem(await fitting(limit, { CPU_LIMIT_MS: '1' }), 'max_bytes_unreachable', 422)
    expect(body.detail).toMatch(/CPU limit \(1 ms, CPU_LIMIT_MS\)/)
    expect(body.limit).toBe(limit)
    // an answer that already fits needs no try
    expect((await fitting(plain.length + 1000, { CPU_LIMIT_MS: '1' })).status).toBe(200)
  })
})

describe('a target that cannot be met is 422 max_bytes_unreachable', () => {
  it('quality 1 is still larger', async () => {
    const body = await expectProblem(await compress(fixture('photo.jpg'), { format: 'webp', max_bytes: 100 }, jpeg), 'max_bytes_unreachable', 422)
    expect(body.limit).toBe(100)
    expect(body.detail).toMatch(/quality 1/)
  })

  it('a lossless output cannot be lowered, unless it fits', async () => {
    await expectProblem(await compress(fixture('photo.png'), { format: 'png', max_bytes: 1000 }, { contentType: 'image/png' }), 'max_bytes_unreachable', 422)
    const fits = await compress(fixture('photo.png'), { format: 'png', max_bytes: 10_000_000 }, { contentType: 'image/png' })
    expect(fits.status).toBe(200)
  })

  it('refuses max_bytes under 100 as an invalid option', async () => {
    await expectProblem(await compress(fixture('photo.jpg'), { max_bytes: 10 }, jpeg), 'invalid_option', 400)
  })
})
