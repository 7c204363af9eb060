/**
 * The binary answer: type, length, file name, statistics headers and Server-Timing; the
 * never-bigger rule; GIF input (first frame, PNG by default).
 */
import { describe, expect, it } from 'vitest'
import { compress, compressForm, okBytes } from '../helpers/api'
import { firstDifference } from '../helpers/bytes'
import { fixture } from '../helpers/fixtures'
import { prng } from '../helpers/hostile'
import { decode } from '../helpers/image'
import { writePng } from '../helpers/png'
import { callWorker } from '../helpers/worker'

describe('binary answer', () => {
  it('labels the answer with its type, length and a file name with the new extension', async () => {
    const res = await compress(fixture('photo.png'), { format: 'webp' }, { contentType: 'image/png' })
    const body = await okBytes(res)
    expect(res.headers.get('content-type')).toBe('image/webp')
    expect(res.headers.get('content-length')).toBe(String(body.length))
    expect(res.headers.get('content-disposition')).toBe('inline; filename="image.webp"')
  })

  it("names the answer after the multipart file's base name", async () => {
    const form = new FormData()
    form.append('image', new File([fixture('photo.png')], 'holiday.at.sea.png', { type: 'image/png' }))
    form.append('format', 'jpeg')
    const res = await compressForm(form)
    await okBytes(res)
    expect(res.headers.get('content-disposition')).toBe('inline; filename="holiday.at.sea.jpg"')
  })

  it('replaces unsafe characters in the multipart file name', async () => {
    const form = new FormData()
    form.append('image', new File([fixture('photo.jpg')], 'my "summer"; photo.jpeg', { type: 'image/jpeg' }))
    form.append('format', 'webp')
    const res = await compressForm(form)
    await okBytes(res)
    const disposition = res.headers.get('content-disposition') ?? ''
    expect(disposition).toMatch(/^inline; filename="[\w.-]+\.webp"$/)
    expect(disposition).toContain('summer')
  })

  it('reports input and output statistics in headers', async () => {
    const input = fixture('photo.png')
    const res = await compress(input, { format: 'jpeg', width: 240 })
    const body = await okBytes(res)
    const h = Object.fromEntries(res.headers)
    expect(h).toMatchObject({
      'x-input-format': 'png',
      'x-input-size': String(input.length),
      'x-input-width': '480',
      'x-input-height': '300',
      'x-output-format': 'jpeg',
      'x-output-size': String(body.length),
      'x-output-width': '240',
      'x-output-height': '150',
    })
    expect(Number(h['x-compression-ratio'])).toBeCloseTo(body.length / input.length, 4)
    expect(Number(h['x-effort'])).toBe(4)
    expect(h['x-original-returned']).toBeUndefined()
    expect(h['x-frames-dropped']).toBeUndefined()
  })

  it('reports decode, transform and encode durations in Server-Timing', async () => {
    const res = await compress(fixture('photo.jpg'), { width: 200 })
    await okBytes(res)
    const timing = res.headers.get('server-timing') ?? ''
    const entries = Object.fromEntries(
      timing.split(',').map((entry) => {
        const [name, ...params] = entry.trim().split(';')
        const dur = params.find((p) => p.trim().startsWith('dur='))
        return [name, dur === undefined ? Number.NaN : Number(dur.trim().slice(4))]
      }),
    )
    for (const name of ['decode', 'transform', 'encode']) {
      expect(entries[name], `${name} in "${timing}"`).toBeGreaterThanOrEqual(0)
    }
  })

  it('returns the input byte for byte when re-encoding would not make it smaller', async () => {
    // photo.jpg at quality 20 is small and already "optimised"; sending it back at quality 100 with the
    // same format and no resize would only grow it, so the input itself is the answer.
    const small = await okBytes(await compress(fixture('photo.jpg'), { quality: 20 }))
    const res = await compress(small, { quality: 100 })
    const body = await okBytes(res)
    expect(firstDifference(body, small)).toBe(-1)
    expect(res.headers.get('x-original-returned')).toBe('true')
    expect(res.headers.get('content-type')).toBe('image/jpeg')
    expect(res.headers.get('x-output-size')).toBe(String(small.length))
    expect(res.headers.get('x-compression-ratio')).toBe('1')
  })

  it('returns the input when libpng, writing as it goes, reaches its size, and serves the next request', async () => {
    // oxipng's file at effort 6 is smaller than libpng's at zlib level 1 (effort 0), which the row sink
    // stops writing once it is as large as the input.
    const optimised = await okBytes(await compress(fixture('photo.png'), { effort: 6 }))
    const res = await compress(optimised, { effort: 0 })
    expect(firstDifference(await okBytes(res), optimised)).toBe(-1)
    expect(res.headers.get('x-original-returned')).toBe('true')
    expect(res.headers.get('content-type')).toBe('image/png')

    const next = await compress(fixture('photo.png'), { format: 'webp' })
    expect((await decode(await okBytes(next))).format).toBe('webp')
  })

  it('returns an input over a MiB as itself, byte for byte, copied out in parts', async () => {
    // A gradient with grain in its low three bits: our PNG at effort 6 is smaller than at effort 0, which the writer stops once it is as
    // large as the input, so the answer is the input (copied out of the body buffer a MiB at a time; streamed as views of
    // it, workerd held it about twice more).
    const random = prng(7)
    const samples = Uint8Array.from({ length: 1200 * 1000 * 3 }, (_, i) => (((i % 3600) >> 4) & 0xf8) | (random() * 8))
    const big = { MAX_INPUT_BYTES: String(4 * 1024 * 1024) }
    const post = (query: string, body: Uint8Array) => callWorker(`/api/compress?${query}`, { method: 'POST', headers: { 'Content-Type': 'image/png' }, body }, big)
    const optimised = await okBytes(await post('effort=6', await writePng({ width: 1200, height: 1000, channels: 3, depth: 8, samples })))
    expect(optimised.length).toBeGreaterThan(1024 * 1024)
    const res = await post('effort=0', optimised)
    expect(res.headers.get('x-original-returned')).toBe('true')
    expect(firstDifference(await okBytes(res), optimised)).toBe(-1)
    expect((await decode(await okBytes(await post('format=webp', fixture('photo.png'))))).format).toBe('webp')
  })

  it('applies never-bigger also when the same format is named explicitly', async () => {
    const small = await okBytes(await compress(fixture('photo.jpg'), { quality: 20 }))
    const res = await compress(small, { format: 'jpeg', quality: 100 })
    expect(firstDifference(await okBytes(res), small)).toBe(-1)
    expect(res.headers.get('x-original-returned')).toBe('true')
  })

  it('does not return the input when the format changes', async () => {
    const small = await okBytes(await compress(fixture('photo.jpg'), { quality: 20 }))
    const res = await compress(small, { format: 'webp', quality: 100 })
    const body = await okBytes(res)
    expect(res.headers.get('x-original-returned')).toBeNull()
    expect((await decode(body)).format).toBe('webp')
  })

  it('does not return the input when the image is resized', async () => {
    const small = await okBytes(await compress(fixture('photo.jpg'), { quality: 20 }))
    const res = await compress(small, { quality: 100, width: 479 })
    const body = await okBytes(res)
    expect(res.headers.get('x-original-returned')).toBeNull()
    expect((await decode(body)).image.width).toBe(479)
  })

  it('keeps the first frame of an animated GIF, as PNG by default, and says how many frames were dropped', async () => {
    // anim.gif has 10 frames.
    const res = await compress(fixture('anim.gif'), undefined, { contentType: 'image/gif' })
    const body = await okBytes(res)
    expect(res.headers.get('x-frames-dropped')).toBe('9')
    expect(res.headers.get('content-type')).toBe('image/png')
    expect(res.headers.get('content-disposition')).toBe('inline; filename="image.png"')
    const out = await decode(body)
    expect(out.format).toBe('png')
    expect([out.image.width, out.image.height]).toEqual([370, 285])
    expect(out.header.frames).toBe(1)
  })

  it('keeps the first frame of an animated WebP with animated=false and says how many frames were dropped', async () => {
    // anim.webp: 200x200, 6 frames.
    const res = await compress(fixture('anim.webp'), { animated: false }, { contentType: 'image/webp' })
    const out = await decode(await okBytes(res))
    expect(res.headers.get('x-frames-dropped')).toBe('5')
    expect(out.format).toBe('webp')
    expect([out.image.width, out.image.height]).toEqual([200, 200])
    expect(out.header.frames).toBe(1)
  })

  it('does not report dropped frames for a single-frame GIF', async () => {
    const res = await compress(fixture('alpha.gif'), undefined, { contentType: 'image/gif' })
    await okBytes(res)
    expect(res.headers.get('x-frames-dropped')).toBeNull()
    expect(res.headers.get('content-type')).toBe('image/png')
  })

  it('marks answers as not cacheable', async () => {
    const res = await compress(fixture('basn6a08.png'))
    await okBytes(res)
    expect(res.headers.get('cache-control')).toBe('no-store')
  })
})
