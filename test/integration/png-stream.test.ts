/**
 * A PNG converted to JPEG, WebP or AVIF in one pass is read as it arrives (src/pipeline/body.ts): libpng's reads wait
 * for the body's next chunk through JSPI (wasm/lean.ts), so the file is never held and may be larger than
 * MAX_INPUT_BYTES (1 MiB here), up to MAX_STREAMED_INPUT_BYTES. A client that goes away mid-upload, or a body shorter
 * than the PNG, fails cleanly, and the next conversion is served. GET /img reads a PNG from the bucket, or from an
 * origin that gives its version, the same way.
 */
import { env } from 'cloudflare:test'
import { describe, expect, inject, it } from 'vitest'
import { expectProblem, okBytes } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import { decode, psnr } from '../helpers/image'
import { writePng } from '../helpers/png'
import { callWorker } from '../helpers/worker'

/** `bytes` as a request body of `size`-byte chunks, each enqueued when the reader asks for it. */
function chunked(bytes: Uint8Array, size: number, { failAt }: { failAt?: number } = {}): ReadableStream<Uint8Array> {
  let at = 0
  return new ReadableStream({
    pull(controller) {
      if (failAt !== undefined && at >= failAt) return controller.error(new Error('Network connection lost.'))
      if (at >= bytes.length) return controller.close()
      controller.enqueue(bytes.slice(at, at + size))
      at += size
    },
  })
}

const post = (query: string, body: BodyInit, headers: Record<string, string> = {}, vars: Record<string, unknown> = {}) =>
  callWorker(`/api/compress?${query}`, { method: 'POST', body, headers: { 'Content-Type': 'image/png', ...headers }, duplex: 'half' } as RequestInit, vars)

/** A photo-like RGB PNG (a gradient with grain) of about 1.5 MB: over the tests' MAX_INPUT_BYTES of 1 MiB. */
async function largePng(): Promise<{ png: Uint8Array; width: number; height: number }> {
  const width = 900
  const height = 600
  const samples = new Uint8Array(width * height * 3)
  let seed = 1
  for (let i = 0; i < samples.length; i++) {
    seed = (seed * 1103515245 + 12345) >>> 0
    const x = (i / 3) % width
    const y = Math.floor(i / 3 / width)
    samples[i] = Math.min(255, Math.max(0, ((x + y * (i % 3)) >> 2) + ((seed >>> 24) % 33) - 16))
  }
  return { png: await writePng({ width, height, channels: 3, depth: 8, samples }), width, height }
}

describe('a PNG read as it arrives', () => {
  it('is read whole for lossless WebP by our coder, which reads the rows three times, every pixel kept', async () => {
    const { png, width, height } = await largePng()
    // a budget under libwebp's lossless estimate: our streaming VP8L coder takes it, and the file is held, not streamed
    const answer = await okBytes(await post('format=webp&lossless=true', chunked(png, 4096), {}, { MEMORY_BUDGET_MIB: '40', MAX_INPUT_BYTES: String(4 * 2 ** 20) }))
    const [got, want] = [await decode(answer), await decode(png)]
    expect(got.format).toBe('webp')
    expect([got.image.width, got.image.height]).toEqual([width, height])
    expect(psnr(got.image, want.image)).toBe(Number.POSITIVE_INFINITY)
  })

  it('converts from a body of 1000-byte chunks to the same pixels as the file held', async () => {
    const png = fixture('photo.png')
    for (const format of ['jpeg', 'webp', 'avif']) {
      const streamed = await okBytes(await post(`format=${format}&width=300`, chunked(png, 1000)))
      // metadata=copyright reads the file's chunks, so the file is held: the same rows through the same encoder
      const held = await okBytes(await post(`format=${format}&width=300&metadata=copyright`, png))
      const [a, b] = [await decode(streamed), await decode(held)]
      expect(a.format).toBe(format)
      expect([a.image.width, a.image.height]).toEqual([b.image.width, b.image.height])
      expect(psnr(a.image, b.image)).toBe(Number.POSITIVE_INFINITY)
    }
  })

  it('takes a PNG over MAX_INPUT_BYTES to JPEG, and still refuses it to PNG (held) with 413', async () => {
    const { png, width, height } = await largePng()
    expect(png.length).toBeGreaterThan(1024 * 1024)
    const res = await post('format=jpeg', chunked(png, 16 * 1024), { 'Content-Length': String(png.length) })
    const { format, image } = await decode(await okBytes(res))
    expect([format, image.width, image.height]).toEqual(['jpeg', width, height])
    expect(res.headers.get('x-input-size')).toBe(String(png.length))
    const source = await decode(png)
    expect(psnr(image, source.image)).toBeGreaterThan(30)

    await expectProblem(await post('format=png', png), 'payload_too_large', 413)
    await expectProblem(await post('format=jpeg', png, {}, { MAX_STREAMED_INPUT_BYTES: String(1024 * 1024) }), 'payload_too_large', 413)
  })

  it('fails cleanly when the client goes away mid-upload, and serves the next conversion', async () => {
    const { png } = await largePng()
    const res = await post('format=webp', chunked(png, 8192, { failAt: 600_000 }))
    const problem = await expectProblem(res, 'invalid_request', 400)
    expect(problem.detail).toMatch(/connection was lost/)
    const next = await post('format=webp&width=200', chunked(fixture('photo.png'), 4096))
    expect((await decode(await okBytes(next))).format).toBe('webp')
  })

  it('refuses a body shorter than the PNG as 422 corrupt_image, and serves the next conversion', async () => {
    const png = fixture('photo.png')
    const cut = png.slice(0, Math.floor(png.length * 0.6))
    const problem = await expectProblem(await post('format=avif', chunked(cut, 4096)), 'corrupt_image', 422)
    expect(problem.detail).toMatch(/ends early/)
    const next = await post('format=jpeg', chunked(png, 4096))
    expect((await decode(await okBytes(next))).format).toBe('jpeg')
  })

  it('refuses a PNG whose image data fails its CRC as 422 corrupt_image, though the header read first was whole', async () => {
    const png = fixture('photo.png').slice()
    const view = new DataView(png.buffer)
    // photo.png has one IDAT at byte 33, longer than the 64 KiB read before deciding: libpng checks its CRC as it reads
    expect(String.fromCharCode(...png.subarray(37, 41))).toBe('IDAT')
    const crcAt = 41 + view.getUint32(33)
    png[crcAt] = png[crcAt]! ^ 0xff
    const problem = await expectProblem(await post('format=webp', chunked(png, 4096)), 'corrupt_image', 422)
    expect(problem.detail).toMatch(/CRC/)
    expect((await decode(await okBytes(await post('format=webp', chunked(fixture('photo.png'), 4096))))).format).toBe('webp')
  })
})

describe('GET /img of a PNG read as it arrives', () => {
  it('converts a PNG over MAX_INPUT_BYTES from the bucket to JPEG and WebP, and refuses it to PNG (held) with 413', async () => {
    const { png, width } = await largePng()
    await env.IMAGES.put('stream/large.png', png)
    for (const format of ['jpeg', 'webp']) {
      const res = await callWorker(`/img/format=${format},width=300/stream/large.png`)
      const out = await decode(await okBytes(res))
      expect([out.format, out.image.width]).toEqual([format, 300])
      expect(res.headers.get('x-input-size')).toBe(String(png.length))
    }
    expect(width).toBeGreaterThan(300)
    const problem = await expectProblem(await callWorker('/img/format=png,width=300/stream/large.png'), 'payload_too_large', 413)
    expect(problem.detail).toMatch(/source image/)
  })

  it("converts an origin's PNG that has a version, to the same pixels as the bucket's", async () => {
    const viaOrigin = { ORIGIN_URL: `${inject('originUrl')}/images/` }
    const fromOrigin = await okBytes(await callWorker('/img/format=jpeg,width=120/versioned.png', {}, viaOrigin))
    await env.IMAGES.put('stream/photo.png', fixture('photo.png'))
    const fromBucket = await okBytes(await callWorker('/img/format=jpeg,width=120/stream/photo.png'))
    expect(fromOrigin).toEqual(fromBucket)
  })
})
