/**
 * gravity=auto where the plan keeps the pass's rows for the conversion (ConversionPlan.kept): the pass decodes the image,
 * resizes it whole as the crop is resized, keeps that and places the window on it; the conversion cuts the window out
 * instead of decoding the file again. The answer must be that image, cut where X-Crop says (sharp's cover likewise
 * resizes, then extracts); the kept rows are charged in X-Memory-Estimate; where they do not fit the budget the preview
 * decodes on its own, and where the conversion itself does not fit, a 422.
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

describe('gravity=auto with its rows kept for the conversion', () => {
  it('is the image resized whole and cut at X-Crop’s window, pixel for pixel', async () => {
    // large.jpg (1200x750) to a 250 px cover: the pass keeps it resized to 400x250, a third, and cuts the window there;
    // PNG output builds the rows twice (its two passes): both read the kept rows
    const query = { format: 'png', width: 250, height: 250, fit: 'cover' }
    const res = await compress(fixture('large.jpg'), { ...query, gravity: 'auto' })
    const auto = (await decode(await okBytes(res))).image
    const [x, y, w, h] = cropOf(res)
    expect([y, w, h]).toEqual([0, 750, 750])
    expect(x % 3).toBe(0)
    const whole = await okBytes(await compress(fixture('large.jpg'), { format: 'png', width: 400, height: 250 }))
    const cut = (await decode(await okBytes(await compress(whole, { format: 'png', trim: trimOf([x / 3, 0, 250, 250], 400, 250) })))).image
    expect([auto.width, auto.height]).toEqual([250, 250])
    expect(Buffer.from(auto.data).equals(Buffer.from(cut.data))).toBe(true)
  })

  it('keeps a small output’s decode, turned as the conversion would (EXIF 6), and resizes the window cut from it', async () => {
    // exif-6.jpg (stored 120x180, upright 180x120) to 60x60: resized it would be smaller than the preview, so the decode is
    // kept and the window (120x120) resized after the cut: the same as trimming the window and resizing it
    const query = { format: 'png', width: 60, height: 60, fit: 'cover' }
    const res = await compress(fixture('exif-6.jpg'), { ...query, gravity: 'auto' })
    const auto = (await decode(await okBytes(res))).image
    const trimmed = (await decode(await okBytes(await compress(fixture('exif-6.jpg'), { ...query, trim: trimOf(cropOf(res), 180, 120) })))).image
    expect([auto.width, auto.height]).toEqual([60, 60])
    expect(Buffer.from(auto.data).equals(Buffer.from(trimmed.data))).toBe(true)
  })

  it('keeps a PNG’s alpha in the kept rows', async () => {
    // alpha.png (320x200, RGBA) to a 160 px cover: kept resized to 256x160, the window cut there
    const res = await compress(fixture('alpha.png'), { format: 'png', width: 160, height: 160, fit: 'cover', gravity: 'auto' })
    const auto = (await decode(await okBytes(res))).image
    const [x, y, w, h] = cropOf(res)
    expect([y, w, h]).toEqual([0, 200, 200])
    const whole = await okBytes(await compress(fixture('alpha.png'), { format: 'png', width: 256, height: 160 }))
    const cut = (await decode(await okBytes(await compress(whole, { format: 'png', trim: trimOf([Math.round((x * 256) / 320), 0, 160, 160], 256, 160) })))).image
    expect([auto.width, auto.height]).toEqual([160, 160])
    expect(auto.data.some((_, i) => i % 4 === 3 && auto.data[i]! < 255)).toBe(true)
    expect(Buffer.from(auto.data).equals(Buffer.from(cut.data))).toBe(true)
  })

  it('converts a CMYK JPEG’s colours in the pass, as the conversion would', async () => {
    const query = { format: 'png', width: 50, height: 80, fit: 'cover' }
    const res = await compress(fixture('cmyk.jpg'), { ...query, gravity: 'auto' })
    const auto = (await decode(await okBytes(res))).image
    const trimmed = (await decode(await okBytes(await compress(fixture('cmyk.jpg'), { ...query, trim: trimOf(cropOf(res), 100, 100) })))).image
    expect([auto.width, auto.height]).toEqual([50, 80])
    expect(Buffer.from(auto.data).equals(Buffer.from(trimmed.data))).toBe(true)
  })

  it('reads the kept rows for quality=auto’s sample and check too', async () => {
    const input = fixture('large.jpg')
    const res = await compress(input, { format: 'webp', width: 250, height: 250, fit: 'cover', gravity: 'auto', quality: 'auto' })
    const auto = (await decode(await okBytes(res))).image
    const reference = (await decode(await okBytes(await compress(input, { format: 'png', width: 250, height: 250, fit: 'cover', trim: trimOf(cropOf(res), 1200, 750) })))).image
    expect([auto.width, auto.height]).toEqual([250, 250])
    expect(psnr(auto, reference)).toBeGreaterThan(30)
  })

  it('charges the kept rows in the estimate, and decodes the preview on its own where they do not fit', async () => {
    // 2400x1500 to 640x640: the pass keeps 1024x640 (2.6 MB of RGBA)
    const input = await photo36()
    const query = 'format=webp&width=640&height=640&fit=cover'
    const centre = await postFresh(input, query)
    await okBytes(centre)
    const kept = await postFresh(input, `${query}&gravity=auto`)
    const keptImage = (await decode(await okBytes(kept))).image
    // the preview pass (MEMORY_MODEL.previewMiB, 8) and the kept rows (4 MiB per MP)
    expect(estimateOf(kept) - estimateOf(centre)).toBeGreaterThanOrEqual(10)
    expect(estimateOf(kept) - estimateOf(centre)).toBeLessThanOrEqual(11)

    // a budget with room for the preview pass but not the kept rows: the same picture, within the budget
    const budget = { MEMORY_BUDGET_MIB: String(estimateOf(centre) + 9) }
    const alone = await postFresh(input, `${query}&gravity=auto`, budget)
    const aloneImage = (await decode(await okBytes(alone))).image
    expect(estimateOf(alone)).toBeLessThanOrEqual(estimateOf(centre) + 9)
    expect(estimateOf(alone)).toBeGreaterThanOrEqual(estimateOf(centre) + 7)
    expect([aloneImage.width, aloneImage.height]).toEqual([640, 640])
    // (the preview made another way may move the window by a preview pixel: 2400 / 256 px of the image)
    const [a, b] = [cropOf(kept), cropOf(alone)]
    expect(Math.abs(a[0] - b[0])).toBeLessThanOrEqual(20)
    expect(Math.abs(a[1] - b[1])).toBeLessThanOrEqual(20)
    // (cut, then resized: the window's edges differ from the kept rows' by what Lanczos3 reads past them, and X-Crop, in
    // the image's pixels, is up to half an output pixel from the window placed in the kept ones)
    if (a[0] === b[0] && a[1] === b[1]) expect(psnr(aloneImage, keptImage)).toBeGreaterThan(35)
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
