/**
 * format=auto picks the output from the Accept header; Accept: application/json or response=json
 * turns the answer into JSON with the image in base64.
 */
import { describe, expect, it } from 'vitest'
import { base64ToBytes, compress, okBytes } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import { decode, greyPng } from '../helpers/image'

/** Small inputs keep AVIF cheap: basn6a08.png is 32x32 RGBA, photo.jpg 480x300 (effort 0 for AVIF). */
async function auto(name: string, accept: string): Promise<Response> {
  return compress(fixture(name), { format: 'auto', effort: 0 }, { headers: { Accept: accept } })
}

async function autoFormat(name: string, accept: string): Promise<string> {
  const res = await auto(name, accept)
  const out = await decode(await okBytes(res))
  expect(res.headers.get('x-output-format')).toBe(out.format)
  return out.format
}

/** format=auto for a 16400x8 grey PNG: wider than WebP can store (16383 px). */
async function autoWide(accept: string): Promise<Response> {
  return compress(await greyPng(16400, 8), { format: 'auto', effort: 0 }, { contentType: 'image/png', headers: { Accept: accept } })
}

interface JsonAnswer {
  format: string
  mime: string
  filename: string
  input: { format: string; bytes: number; width: number; height: number }
  output: { bytes: number; width: number; height: number }
  ratio: number
  image: string
}

describe('content negotiation', () => {
  it('chooses avif when Accept lists image/avif', async () => {
    expect(await autoFormat('photo.jpg', 'image/avif,image/webp,image/apng,*/*;q=0.8')).toBe('avif')
  })

  it('chooses webp when Accept lists image/webp but not image/avif', async () => {
    expect(await autoFormat('photo.jpg', 'image/webp,*/*')).toBe('webp')
  })

  it('keeps jpeg for a jpeg input when Accept is only */*', async () => {
    expect(await autoFormat('photo.jpg', '*/*')).toBe('jpeg')
  })

  it('keeps png for a png input when Accept is only */*', async () => {
    expect(await autoFormat('basn6a08.png', '*/*')).toBe('png')
  })

  it('does not count image/* as accepting avif or webp', async () => {
    expect(await autoFormat('photo.jpg', 'image/*')).toBe('jpeg')
  })

  it('does not choose avif when Accept gives it q=0', async () => {
    expect(await autoFormat('photo.jpg', 'image/avif;q=0, image/webp')).toBe('webp')
  })

  it('does not choose avif when Accept gives it q=0.0 with spaces', async () => {
    expect(await autoFormat('photo.jpg', 'image/avif; q=0.0, */*')).toBe('jpeg')
  })

  it('matches media types case-insensitively', async () => {
    expect(await autoFormat('photo.jpg', 'Image/WebP')).toBe('webp')
  })

  it('sends Vary: Accept for format=auto', async () => {
    const res = await auto('photo.jpg', 'image/webp')
    await okBytes(res)
    expect(res.headers.get('vary') ?? '').toMatch(/(^|,\s*)Accept(\s*,|$)/i)
  })

  // format=auto chose WebP for outputs wider than WebP's 16383 px and then refused them with 422.
  it('falls back to png for a 16400x8 png when Accept lists only image/webp, with Vary: Accept', async () => {
    const res = await autoWide('image/webp')
    const out = await decode(await okBytes(res))
    expect([out.format, out.image.width, out.image.height]).toEqual(['png', 16400, 8])
    expect(res.headers.get('x-output-format')).toBe('png')
    expect(res.headers.get('vary') ?? '').toMatch(/(^|,\s*)Accept(\s*,|$)/i)
  })

  it('still chooses avif for a 16400x8 png when Accept lists image/avif and image/webp', async () => {
    expect((await decode(await okBytes(await autoWide('image/avif,image/webp')))).format).toBe('avif')
  })

  it('uses the input format when format is not given, whatever Accept says', async () => {
    const res = await compress(fixture('photo.jpg'), { response: 'image' }, { headers: { Accept: 'image/avif,image/webp' } })
    expect((await decode(await okBytes(res))).format).toBe('jpeg')
  })

  for (const [how, query, headers] of [
    ['Accept: application/json', { format: 'webp' }, { Accept: 'application/json' }],
    ['response=json', { format: 'webp', response: 'json' }, {}],
  ] as const) {
    it(`answers JSON with the image in base64 for ${how}`, async () => {
      const input = fixture('photo.png')
      const res = await compress(input, { ...query, width: 240 }, { headers })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toMatch(/^application\/json/)
      const body = (await res.json()) as JsonAnswer
      expect(body).toMatchObject({
        format: 'webp',
        mime: 'image/webp',
        filename: 'image.webp',
        input: { format: 'png', bytes: input.length, width: 480, height: 300 },
        output: { width: 240, height: 150 },
      })
      const bytes = base64ToBytes(body.image)
      expect(body.output.bytes).toBe(bytes.length)
      expect(body.ratio).toBeCloseTo(bytes.length / input.length, 4)
      const out = await decode(bytes)
      expect(out.format).toBe('webp')
      expect([out.image.width, out.image.height]).toEqual([240, 150])

      // The headers carry the same statistics as the body.
      expect(res.headers.get('x-input-format')).toBe('png')
      expect(res.headers.get('x-input-size')).toBe(String(input.length))
      expect(res.headers.get('x-output-format')).toBe('webp')
      expect(res.headers.get('x-output-size')).toBe(String(bytes.length))
      expect(res.headers.get('x-output-width')).toBe('240')
      expect(res.headers.get('x-output-height')).toBe('150')
      expect(res.headers.get('x-input-width')).toBe('480')
      expect(res.headers.get('x-input-height')).toBe('300')
      expect(Number(res.headers.get('x-compression-ratio'))).toBe(body.ratio)
    })
  }

  it('answers binary for response=image even with Accept: application/json', async () => {
    const res = await compress(fixture('photo.jpg'), { response: 'image' }, { headers: { Accept: 'application/json' } })
    expect(res.headers.get('content-type')).toBe('image/jpeg')
    expect((await decode(await okBytes(res))).format).toBe('jpeg')
  })

  it('sends Vary: Accept when the JSON/binary choice depends on Accept', async () => {
    const res = await compress(fixture('photo.jpg'), {}, { headers: { Accept: 'application/json' } })
    expect(res.status).toBe(200)
    expect(res.headers.get('vary') ?? '').toMatch(/(^|,\s*)Accept(\s*,|$)/i)
  })
})
