/**
 * gravity=auto on a JPEG whose plan keeps the preview pass's decode (ConversionPlan.keptDecode): the conversion reads
 * the rows the pass decoded instead of decoding the file again. The answer must be the window X-Crop names, as a fresh
 * decode of that window gives it; the kept decode is charged in X-Memory-Estimate; where it does not fit the budget the
 * preview decodes on its own and the answer is the same, and where the conversion itself does not fit, a 422.
 */
import { describe, expect, it } from 'vitest'
import { compress, expectProblem, okBytes } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import { decode, psnr } from '../helpers/image'
import { callWorker } from '../helpers/worker'
import { releaseLeanMemory } from '../../wasm'

const post = (body: Uint8Array, query: string, vars: Record<string, string> = {}) =>
  callWorker(`/api/compress?${query}`, { method: 'POST', body, headers: { 'Content-Type': 'image/jpeg' } }, vars)

/** As `post`, in a fresh lean memory: the estimate is then the plan's own, not the larger memory earlier tests left. */
const postFresh = (body: Uint8Array, query: string, vars: Record<string, string> = {}) => {
  releaseLeanMemory()
  return post(body, query, vars)
}

const estimateOf = (res: Response) => Number.parseInt(res.headers.get('x-memory-estimate') ?? '', 10)
const cropOf = (res: Response) => res.headers.get('x-crop')!.split(',').map(Number) as [number, number, number, number]

/** The same window cut by trim (top;right;bottom;left) from an upright `width` x `height` image. */
const trimOf = ([x, y, w, h]: readonly number[], width: number, height: number) => `${y};${width - x! - w!};${height - y! - h!};${x}`

/** A 2400x1500 (3.6 MP) JPEG, made by the API from photo.jpg: small to send. */
async function photo36(): Promise<Uint8Array> {
  return okBytes(await compress(fixture('photo.jpg'), { width: 2400, enlarge: true, format: 'jpeg', quality: 60 }))
}

describe('gravity=auto with the decode kept for the conversion', () => {
  it.each([
    // 1200x750 to 250x250: the conversion decodes at 1/2, the preview is its blocks' means (1/4)
    { name: 'large.jpg', width: 1200, height: 750, side: 250 },
    // EXIF 6 (stored 120x180, upright 180x120): the kept rows are turned by the conversion as a decode's are
    { name: 'exif-6.jpg', width: 180, height: 120, side: 60 },
  ])('$name to a $side px cover is the window X-Crop names, pixel for pixel', async ({ name, width, height, side }) => {
    // PNG output builds the rows twice (its two passes): both read the kept decode
    const query = { format: 'png', width: side, height: side, fit: 'cover' }
    const res = await compress(fixture(name), { ...query, gravity: 'auto' })
    const auto = (await decode(await okBytes(res))).image
    const crop = cropOf(res)
    const trimmed = (await decode(await okBytes(await compress(fixture(name), { ...query, trim: trimOf(crop, width, height) })))).image
    expect([auto.width, auto.height]).toEqual([side, side])
    expect(Buffer.from(auto.data).equals(Buffer.from(trimmed.data))).toBe(true)
  })

  it('reads the kept decode for quality=auto’s sample and check too', async () => {
    const input = fixture('large.jpg')
    const res = await compress(input, { format: 'webp', width: 250, height: 250, fit: 'cover', gravity: 'auto', quality: 'auto' })
    const auto = (await decode(await okBytes(res))).image
    const reference = (await decode(await okBytes(await compress(input, { format: 'png', width: 250, height: 250, fit: 'cover', trim: trimOf(cropOf(res), 1200, 750) })))).image
    expect([auto.width, auto.height]).toEqual([250, 250])
    expect(psnr(auto, reference)).toBeGreaterThan(30)
  })

  it('charges the kept decode in the estimate, and decodes the preview on its own where that does not fit', async () => {
    // 2400x1500 to 640x640: the conversion decodes at full size (3.6 MP, 13.7 MiB of RGBA), which the pass keeps
    const input = await photo36()
    const query = 'format=webp&width=640&height=640&fit=cover'
    const centre = await postFresh(input, query)
    await okBytes(centre)
    const kept = await postFresh(input, `${query}&gravity=auto`)
    const keptImage = (await decode(await okBytes(kept))).image
    // the preview pass (MEMORY_MODEL.previewMiB, 8) and the kept decode (4 MiB per MP)
    expect(estimateOf(kept) - estimateOf(centre)).toBeGreaterThanOrEqual(21)
    expect(estimateOf(kept) - estimateOf(centre)).toBeLessThanOrEqual(23)

    // a budget with room for the preview pass but not the kept decode: the same answer, within the budget
    const budget = { MEMORY_BUDGET_MIB: String(estimateOf(centre) + 10) }
    const alone = await postFresh(input, `${query}&gravity=auto`, budget)
    const aloneImage = (await decode(await okBytes(alone))).image
    expect(estimateOf(alone)).toBeLessThanOrEqual(estimateOf(centre) + 10)
    expect(estimateOf(alone)).toBeGreaterThanOrEqual(estimateOf(centre) + 7)
    expect([aloneImage.width, aloneImage.height]).toEqual([640, 640])
    // (the preview made another way may move the window by a preview pixel: 2400 / 256 px of the image)
    const [a, b] = [cropOf(kept), cropOf(alone)]
    expect(Math.abs(a[0] - b[0])).toBeLessThanOrEqual(20)
    expect(Math.abs(a[1] - b[1])).toBeLessThanOrEqual(20)
    if (a[0] === b[0] && a[1] === b[1]) expect(Buffer.from(aloneImage.data).equals(Buffer.from(keptImage.data))).toBe(true)
  })

  it('refuses with 422 operation_too_large where the conversion itself does not fit, and converts the next request', async () => {
    const input = await photo36()
    const query = 'format=webp&width=640&height=640&fit=cover&gravity=auto'
    const fits = await post(input, query)
    await okBytes(fits)
    const problem = await expectProblem(await post(input, query, { MEMORY_BUDGET_MIB: '20' }), 'operation_too_large', 422)
    expect(problem.limit).toBe(20)
    const next = await post(input, query)
    expect((await decode(await okBytes(next))).image.width).toBe(640)
  })
})
