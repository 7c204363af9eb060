/**
 * Every error the API can be driven to from outside, as application/problem+json (RFC 9457) with the
 * stable `code`; and the worker keeps serving after each bad input.
 *
 * Not reachable from a test without faking the runtime: busy (needs a conversion queued for
 * QUEUE_TIMEOUT_MS, 20 s), codec_failed and internal_error (an encoder or the worker itself failing on
 * valid input).
 */
import { SELF, env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { compress, compressForm, expectProblem, get, okBytes } from '../helpers/api'
import { pngWithSize } from '../helpers/hostile'
import { fixture } from '../helpers/fixtures'
import { decode } from '../helpers/image'

/** The body limit the worker runs with in tests (vitest.config.ts sets it; wrangler.toml has 25 MiB). */
const LIMIT = Number((env as unknown as Record<string, string>).MAX_INPUT_BYTES)
const MAX_INPUT_PIXELS = Number((env as unknown as Record<string, string>).MAX_INPUT_PIXELS)
const MAX_OUTPUT_PIXELS = Number((env as unknown as Record<string, string>).MAX_OUTPUT_PIXELS)

const text = (s: string) => new TextEncoder().encode(s)

/** A ReadableStream of `total` zero bytes in 64 KiB chunks: a body without Content-Length. */
function zeroStream(total: number): ReadableStream<Uint8Array> {
  let sent = 0
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= total) return controller.close()
      const chunk = new Uint8Array(Math.min(64 * 1024, total - sent))
      sent += chunk.length
      controller.enqueue(chunk)
    },
  })
}

/** A minimal BMP header: "BM", file size, reserved, pixel offset, then a 40-byte BITMAPINFOHEADER. */
function bmpHeader(): Uint8Array {
  const bytes = new Uint8Array(54 + 4)
  const view = new DataView(bytes.buffer)
  bytes.set([0x42, 0x4d])
  view.setUint32(2, bytes.length, true)
  view.setUint32(10, 54, true)
  view.setUint32(14, 40, true)
  view.setInt32(18, 1, true)
  view.setInt32(22, 1, true)
  view.setUint16(26, 1, true)
  view.setUint16(28, 24, true)
  return bytes
}

/** A JPEG up to (not including) its first SOS marker: complete headers and tables, no image data. */
function cutBeforeScan(jpeg: Uint8Array): Uint8Array {
  for (let i = 2; i + 1 < jpeg.length; i++) if (jpeg[i] === 0xff && jpeg[i + 1] === 0xda) return jpeg.slice(0, i)
  throw new Error('no SOS marker')
}

/** The worker still converts a valid image of the same family after a bad one. */
async function expectStillServing(valid: string): Promise<void> {
  const res = await compress(fixture(valid), { width: 64 })
  const out = await decode(await okBytes(res))
  expect(out.image.width).toBe(64)
}

describe('errors', () => {
  it('has a test body limit that every fixture fits under', () => {
    expect(LIMIT).toBe(1024 * 1024)
    expect(fixture('photo.png').length).toBeLessThan(LIMIT)
  })

  it('answers 400 missing_image for an empty body', async () => {
    await expectProblem(await compress(new Uint8Array(0), undefined, { contentType: 'image/png' }), 'missing_image', 400)
  })

  it('answers 400 missing_image for a request with no body and no Content-Type', async () => {
    await expectProblem(await compress(null), 'missing_image', 400)
  })

  it('answers 400 missing_image for multipart without an image field', async () => {
    const form = new FormData()
    form.append('format', 'webp')
    await expectProblem(await compressForm(form), 'missing_image', 400)
  })

  it('answers 400 missing_image for an empty multipart image field', async () => {
    const form = new FormData()
    form.append('image', new File([], 'empty.png', { type: 'image/png' }))
    await expectProblem(await compressForm(form), 'missing_image', 400)
  })

  it('answers 400 invalid_option for a bad option value', async () => {
    const body = await expectProblem(await compress(fixture('photo.jpg'), { quality: 'high' }), 'invalid_option', 400)
    expect(body.option).toBe('quality')
  })

  it('answers 400 invalid_request for a multipart body that cannot be parsed', async () => {
    const res = await compress(text('--x\r\nnot a part'), undefined, { contentType: 'multipart/form-data; boundary=x' })
    await expectProblem(res, 'invalid_request', 400)
  })

  for (const type of ['text/plain', 'application/json', 'application/x-www-form-urlencoded']) {
    it(`answers 415 unsupported_media_type for Content-Type ${type}`, async () => {
      await expectProblem(await compress(fixture('photo.jpg'), undefined, { contentType: type }), 'unsupported_media_type', 415)
    })
  }

  it('answers 415 unsupported_format for SVG sent as image/svg+xml', async () => {
    const body = await expectProblem(
      await compress(fixture('not-an-image.svg'), undefined, { contentType: 'image/svg+xml' }),
      'unsupported_format',
      415,
    )
    expect(body.detected).toBe('svg')
  })

  it('answers 415 unsupported_format for text sent as image/png', async () => {
    const body = await expectProblem(await compress(fixture('text.txt'), undefined, { contentType: 'image/png' }), 'unsupported_format', 415)
    expect(body.detected).toBe('text')
  })

  it('answers 415 unsupported_format for a BMP', async () => {
    const body = await expectProblem(await compress(bmpHeader(), undefined, { contentType: 'image/bmp' }), 'unsupported_format', 415)
    expect(body.detected).toBe('bmp')
  })

  it('answers 415 unsupported_format for a PNG with a damaged signature', async () => {
    await expectProblem(await compress(fixture('xs1n0g01.png'), undefined, { contentType: 'image/png' }), 'unsupported_format', 415)
  })

  it('answers 413 payload_too_large for a body over the limit with Content-Length', async () => {
    const res = await compress(new Uint8Array(LIMIT + 1), undefined, { contentType: 'image/jpeg' })
    const body = await expectProblem(res, 'payload_too_large', 413)
    expect(body.limit).toBe(LIMIT)
  })

  it('answers 413 payload_too_large for a streamed body over the limit without Content-Length', async () => {
    const res = await compress(zeroStream(LIMIT + 1), undefined, { contentType: 'image/jpeg' })
    const body = await expectProblem(res, 'payload_too_large', 413)
    expect(body.limit).toBe(LIMIT)
  })

  it('accepts a streamed body of exactly the limit (then refuses it as no image)', async () => {
    // LIMIT zero bytes are within the limit; they are not an image.
    const res = await compress(zeroStream(LIMIT), undefined, { contentType: 'image/jpeg' })
    await expectProblem(res, 'unsupported_format', 415)
  })

  it('answers 413 payload_too_large for a multipart body over the limit', async () => {
    const form = new FormData()
    form.append('image', new File([new Uint8Array(LIMIT + 1)], 'big.jpg', { type: 'image/jpeg' }))
    await expectProblem(await compressForm(form), 'payload_too_large', 413)
  })

  it('answers 422 image_too_large for a 50000x50000 PNG header, fast', async () => {
    const started = performance.now()
    const res = await compress(fixture('bomb-50000.png'), undefined, { contentType: 'image/png' })
    const elapsed = performance.now() - started
    const body = await expectProblem(res, 'image_too_large', 422)
    expect(body).toMatchObject({ width: 50000, height: 50000, limit: MAX_INPUT_PIXELS })
    // Refused from the header: decoding would need 10 GB. A full request round trip here takes ~5 ms.
    expect(elapsed).toBeLessThan(1000)
  })

  it('answers 422 image_too_large for an output over the pixel limit', async () => {
    // 480x300 enlarged to 16384 wide is 16384x10240 = 168 MP, over MAX_OUTPUT_PIXELS.
    const body = await expectProblem(
      await compress(fixture('photo.jpg'), { width: 16384, enlarge: true }),
      'image_too_large',
      422,
    )
    expect(body.limit).toBe(MAX_OUTPUT_PIXELS)
  })

  it('answers 422 operation_too_large for a conversion over the memory budget, from the header alone', async () => {
    // A 4000x3000 (12 MP) PNG header with no pixel data, to lossless AVIF (libaom's 4:4:4 frame and state): the
    // model estimates far over 120 MiB, so it must be refused before decoding (the data would be corrupt otherwise).
    const res = await compress(pngWithSize(fixture('bomb-50000.png'), 4000, 3000), { format: 'avif', lossless: true }, { contentType: 'image/png' })
    const body = await expectProblem(res, 'operation_too_large', 422)
    expect(body.limit).toBe(120)
    expect(body.estimateMiB as number).toBeGreaterThan(120)
    expect(body.detail).toMatch(/MEMORY_BUDGET_MIB/)
  })

  it('answers 422 operation_too_large for an enlarged output over the memory budget', async () => {
    // 480x300 enlarged to 4000x2500 (10 MP) lossless AVIF output: far over the budget by the model.
    const res = await compress(fixture('photo.jpg'), { width: 4000, enlarge: true, format: 'avif', lossless: true })
    await expectProblem(res, 'operation_too_large', 422)
  })

  it('reports the memory estimate of a conversion it accepts', async () => {
    const res = await compress(fixture('photo.jpg'), { format: 'webp' })
    expect(res.status).toBe(200)
    expect(res.headers.get('x-memory-estimate')).toMatch(/^\d+ MiB$/)
  })

  const CORRUPT: Array<[string, () => Uint8Array, string]> = [
    ['xc1n0g08.png (colour type 1)', () => fixture('xc1n0g08.png'), 'image/png'],
    ['xdtn0g01.png (no IDAT)', () => fixture('xdtn0g01.png'), 'image/png'],
    ['photo.png cut to 200 bytes', () => fixture('photo.png').slice(0, 200), 'image/png'],
    ['a JPEG cut before its frame header', () => fixture('photo.jpg').slice(0, 20), 'image/jpeg'],
    ['a JPEG cut before its first scan', () => cutBeforeScan(fixture('photo.jpg')), 'image/jpeg'],
    ['photo.webp cut to 1000 bytes', () => fixture('photo.webp').slice(0, 1000), 'image/webp'],
    ['photo.avif cut to 1000 bytes', () => fixture('photo.avif').slice(0, 1000), 'image/avif'],
    ['a GIF header without image data', () => fixture('alpha.gif').slice(0, 13), 'image/gif'],
  ]
  for (const [what, bytes, type] of CORRUPT) {
    it(`answers 422 corrupt_image for ${what}`, async () => {
      await expectProblem(await compress(bytes(), undefined, { contentType: type }), 'corrupt_image', 422)
    })
  }

  // Only the IHDR checksum was checked: xcsn0g01.png (PngSuite, wrong IDAT CRC) converted with 200.
  it('answers 422 corrupt_image naming the IDAT chunk for a PNG whose IDAT checksum is wrong (xcsn0g01.png)', async () => {
    const body = await expectProblem(await compress(fixture('xcsn0g01.png'), undefined, { contentType: 'image/png' }), 'corrupt_image', 422)
    expect(body.detail).toMatch(/IDAT chunk at byte \d+ is damaged: its CRC-32 checksum does not match/)
    await expectStillServing('photo.png')
  })

  it('answers 422 corrupt_image naming the chunk for a wrong checksum after the image data (IEND)', async () => {
    const png = fixture('photo.png')
    png[png.length - 1]! ^= 0x01
    const body = await expectProblem(await compress(png, undefined, { contentType: 'image/png' }), 'corrupt_image', 422)
    expect(body.detail).toContain('IEND chunk')
  })

  it('answers 404 not_found for an unknown path', async () => {
    const body = await expectProblem(await get('/api/nope'), 'not_found', 404)
    expect(body.detail).toContain('/api/nope')
  })

  it('keeps serving after each kind of bad input', async () => {
    const bad: Array<[() => Promise<Response>, string]> = [
      [() => compress(fixture('photo.png').slice(0, 200), undefined, { contentType: 'image/png' }), 'photo.png'],
      [() => compress(fixture('xdtn0g01.png'), undefined, { contentType: 'image/png' }), 'photo.png'],
      [() => compress(cutBeforeScan(fixture('photo.jpg')), undefined, { contentType: 'image/jpeg' }), 'photo.jpg'],
      [() => compress(fixture('photo.webp').slice(0, 1000), undefined, { contentType: 'image/webp' }), 'photo.webp'],
      [() => compress(fixture('photo.avif').slice(0, 1000), undefined, { contentType: 'image/avif' }), 'photo.avif'],
      [() => compress(fixture('bomb-50000.png'), undefined, { contentType: 'image/png' }), 'photo.png'],
      [() => compress(zeroStream(LIMIT + 1), undefined, { contentType: 'image/jpeg' }), 'photo.jpg'],
      [() => compress(fixture('not-an-image.svg'), undefined, { contentType: 'image/svg+xml' }), 'photo.jpg'],
    ]
    for (const [send, valid] of bad) {
      const res = await send()
      await res.arrayBuffer()
      expect(res.status).toBeGreaterThanOrEqual(400)
      expect(res.status).toBeLessThan(500)
      await expectStillServing(valid)
    }
  })

  it('answers 422 corrupt_image for a JPEG cut off inside its image data', async () => {
    const body = await expectProblem(await compress(fixture('truncated-10000.jpg'), undefined, { contentType: 'image/jpeg' }), 'corrupt_image', 422)
    expect(body.detail).toMatch(/truncated/)
    await expectStillServing('photo.jpg')
  })

  it('answers 405 method_not_allowed with Allow for a wrong method on a known path', async () => {
    const res = await get('/api/compress')
    expect(res.headers.get('allow')).toBe('POST')
    await expectProblem(res, 'method_not_allowed', 405)
    const post = await SELF.fetch('https://imgedge.test/api/health', { method: 'POST' })
    expect(post.headers.get('allow')).toBe('GET, HEAD')
    await expectProblem(post, 'method_not_allowed', 405)
  })
})
