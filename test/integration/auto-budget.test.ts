/**
 * format=auto never refuses what another candidate format could serve: AVIF, WebP and the input's
 * family are tried in that order, and the first whose plan fits the memory budget is taken. An
 * explicit format is still refused with the 422 that names the limit.
 */
import { describe, expect, it } from 'vitest'
import { compress, expectProblem, okBytes } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import { decode, psnr } from '../helpers/image'
import { callWorker } from '../helpers/worker'

/** What Chromium, Firefox and Safari send for an <img>: AVIF and WebP listed explicitly. */
const BROWSER = 'image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8'

/** A 2400x1500 (3.6 MP) JPEG, made by the API from photo.jpg: small to send. */
async function photo36(): Promise<Uint8Array> {
  return okBytes(await compress(fixture('photo.jpg'), { width: 2400, enlarge: true, format: 'jpeg', quality: 60 }))
}

const post = (body: Uint8Array, query: string, headers: Record<string, string> = {}, vars: Record<string, string> = {}) =>
  callWorker(`/api/compress?${query}`, { method: 'POST', body, headers: { 'Content-Type': 'image/jpeg', ...headers } }, vars)

const estimateOf = (res: Response) => Number.parseInt(res.headers.get('x-memory-estimate') ?? '', 10)

describe('format=auto within the memory budget', () => {
  it('serves a browser WebP for a 3.6 MP photo whose AVIF would be over the budget', async () => {
    // Since our own AVIF encoder (wasm/lean/sink_avif.c) a 3.6 MP AVIF fits the default budget: the budget here sits
    // between the AVIF plan's estimate and the WebP plan's, both read from 422s under a budget of 1 MiB.
    const input = await photo36()
    const tiny = { MEMORY_BUDGET_MIB: '1' }
    const avifMiB = (await expectProblem(await post(input, 'format=avif', { Accept: BROWSER }, tiny), 'operation_too_large', 422)).estimateMiB as number
    const webpMiB = (await expectProblem(await post(input, 'format=webp', { Accept: BROWSER }, tiny), 'operation_too_large', 422)).estimateMiB as number
    expect(webpMiB).toBeLessThan(avifMiB - 2)
    const budget = { MEMORY_BUDGET_MIB: String(avifMiB - 2) }
    const avif = await expectProblem(await post(input, 'format=avif', { Accept: BROWSER }, budget), 'operation_too_large', 422)
    expect(avif.estimateMiB as number).toBeGreaterThan(avif.limit as number)

    const res = await post(input, 'format=auto', { Accept: BROWSER }, budget)
    const out = await decode(await okBytes(res))
    expect(out.format).toBe('webp')
    expect([out.image.width, out.image.height]).toEqual([2400, 1500])
    expect(res.headers.get('x-output-format')).toBe('webp')
    expect(res.headers.get('vary') ?? '').toMatch(/(^|,\s*)Accept(\s*,|$)/i)
    expect(estimateOf(res)).toBeLessThanOrEqual(avifMiB - 2)
    const source = (await decode(input)).image
    expect(psnr(source, out.image)).toBeGreaterThan(35)
  })

  it('still chooses AVIF when it fits', async () => {
    const res = await post(fixture('photo.jpg'), 'format=auto&effort=0', { Accept: BROWSER })
    expect((await decode(await okBytes(res))).format).toBe('avif')
  })

  it("falls back to the input's family when neither AVIF nor WebP fits", async () => {
    // 16384x600 (9.8 MP): wider than WebP can be (16383), and, since the AVIF encoder pulls rows, an AVIF of it
    // fits the default budget: the budget here sits between the AVIF plan's estimate and the JPEG plan's, both
    // read from 422s under a budget of 1 MiB. The input's family, JPEG, is written row by row.
    const input = fixture('large.jpg')
    const query = 'width=16384&height=600&fit=fill&enlarge=true'
    const tiny = { MEMORY_BUDGET_MIB: '1' }
    const avifMiB = (await expectProblem(await post(input, `${query}&format=avif`, {}, tiny), 'operation_too_large', 422)).estimateMiB as number
    const jpegMiB = (await expectProblem(await post(input, `${query}&format=jpeg`, {}, tiny), 'operation_too_large', 422)).estimateMiB as number
    expect(jpegMiB).toBeLessThan(avifMiB - 2)
    const budget = { MEMORY_BUDGET_MIB: String(avifMiB - 2) }
    await expectProblem(await post(input, `${query}&format=avif`, {}, budget), 'operation_too_large', 422)
    await expectProblem(await post(input, `${query}&format=webp`, {}, budget), 'image_too_large', 422)
    const res = await post(input, `${query}&format=auto`, { Accept: BROWSER }, budget)
    const out = await decode(await okBytes(res))
    expect([out.format, out.image.width, out.image.height]).toEqual(['jpeg', 16384, 600])
    expect(estimateOf(res)).toBeLessThanOrEqual(avifMiB - 2)
  })

  it('answers 422 operation_too_large when no candidate fits, and serves the next request', async () => {
    const problem = await expectProblem(
      await post(fixture('large.jpg'), 'format=auto', { Accept: BROWSER }, { MEMORY_BUDGET_MIB: '12' }),
      'operation_too_large',
      422,
    )
    expect(problem.detail).toMatch(/MEMORY_BUDGET_MIB/)
    expect(problem.limit).toBe(12)
    const next = await post(fixture('large.jpg'), 'format=auto', { Accept: 'image/webp' })
    expect((await decode(await okBytes(next))).format).toBe('webp')
  })
})
