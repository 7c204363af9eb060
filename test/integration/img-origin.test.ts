import type {} from '../helpers/provided'
/**
 * GET /img from an origin (ORIGIN_URL, or an absolute URL on ALLOWED_SOURCES): a real HTTP server on loopback
 * (test/origin/server.ts), fetched as an untrusted one: refused hosts never fetched, redirects kept to the origin,
 * 404/410, 5xx, timeouts, byte limits, non-images, onerror=redirect, and stored answers served without the origin.
 */
import { inject } from 'vitest'
import { describe, expect, it } from 'vitest'
import { expectProblem, MIME, okBytes } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import { decode } from '../helpers/image'
import { callWorker } from '../helpers/worker'

const ORIGIN = inject('originUrl')
const viaOrigin = { ORIGIN_URL: `${ORIGIN}/images/` }
const get = (path: string, vars: Record<string, string> = viaOrigin, headers: Record<string, string> = {}) => callWorker(path, { headers }, vars)
const hits = async (path: string): Promise<number> => ((await (await fetch(`${ORIGIN}/hits`)).json()) as Record<string, number>)[path] ?? 0

describe('GET /img from ORIGIN_URL', () => {
  it('converts the image at the path under ORIGIN_URL, as POST /api/compress does', async () => {
    const res = await get('/img/width=300,format=webp/photo.jpg')
    const bytes = await okBytes(res)
    const posted = await callWorker('/api/compress?width=300&format=webp', { method: 'POST', body: fixture('photo.jpg'), headers: { 'Content-Type': 'image/jpeg' } })
    expect(bytes).toEqual(await okBytes(posted))
    expect(res.headers.get('etag')).toMatch(/^"[0-9a-f]{32}"$/)
    expect(res.headers.get('content-disposition')).toBe('inline; filename="photo.webp"')
    expect((await decode(await okBytes(await get('/img/width=50/a%20b.jpg')))).image.width).toBe(50)
    expect((await decode(await okBytes(await get('/img/_/no-type.jpg')))).format).toBe('jpeg')
  })

  it('serves the stored answer and 304 without asking the origin again', async () => {
    const path = '/img/width=111,format=png/photo.jpg'
    const before = await hits('/images/photo.jpg')
    const miss = await get(path)
    expect(miss.headers.get('cache-status')).toBe('imgedge; fwd=miss; stored')
    const missBytes = await okBytes(miss)
    const hit = await get(path)
    expect(hit.headers.get('cache-status')).toBe('imgedge; hit')
    expect(await okBytes(hit)).toEqual(missBytes)
    const notModified = await get(path, viaOrigin, { 'If-None-Match': miss.headers.get('etag')! })
    expect(notModified.status).toBe(304)
    expect(await hits('/images/photo.jpg')).toBe(before + 1)
  })

  it("makes the ETag from the origin's version", async () => {
    const path = '/img/width=40/versioned.png'
    const first = await get(path)
    await okBytes(first)
    await fetch(`${ORIGIN}/bump`)
    // A new variant id (width 41) so the stored answer of width 40 does not hide the origin's change.
    const a = await get('/img/width=41/versioned.png')
    await okBytes(a)
    await fetch(`${ORIGIN}/bump`)
    const b = await get('/img/width=41/versioned.png', viaOrigin, { 'If-None-Match': a.headers.get('etag')! })
    // Stored: still the same answer and ETag until max-age passes.
    expect([b.status, b.headers.get('cache-status')]).toEqual([304, null])
  })

  it('follows a redirect within the origin, and refuses one elsewhere, a loop, 404, 410 and 5xx', async () => {
    expect((await decode(await okBytes(await get('/img/width=60/redirect')))).image.width).toBe(60)
    expect((await expectProblem(await get('/img/_/elsewhere'), 'source_unavailable', 502)).detail).toMatch(/another origin/)
    expect((await expectProblem(await get('/img/_/loop'), 'source_unavailable', 502)).detail).toMatch(/redirects/)
    expect((await expectProblem(await get('/img/_/bad-redirect'), 'source_unavailable', 502)).detail).toMatch(/invalid URL/)
    await expectProblem(await get('/img/_/nothing-here.jpg'), 'source_not_found', 404)
    await expectProblem(await get('/img/_/gone'), 'source_not_found', 404)
    expect((await expectProblem(await get('/img/_/broken'), 'source_unavailable', 502)).detail).toMatch(/answered 500/)
    await okBytes(await get('/img/width=61/photo.jpg'))
  })

  it('gives up on a slow origin and a stalled body, and refuses a body over MAX_INPUT_BYTES, declared or streamed', async () => {
    const quick = { ...viaOrigin, ORIGIN_TIMEOUT_MS: '500' }
    expect((await expectProblem(await get('/img/_/slow.jpg', quick), 'source_unavailable', 502)).detail).toMatch(/500 ms/)
    await expectProblem(await get('/img/_/stalls.jpg', quick), 'source_unavailable', 502)
    expect((await expectProblem(await get('/img/_/huge.jpg'), 'payload_too_large', 413)).limit).toBe(1024 * 1024)
    await expectProblem(await get('/img/_/endless.jpg'), 'payload_too_large', 413)
    await expectProblem(await get('/img/format=webp/page.html'), 'unsupported_format', 415)
    await okBytes(await get('/img/width=62/photo.jpg'))
  })

  it('answers onerror=redirect failures with a redirect to the original', async () => {
    const res = await get('/img/width=100,onerror=redirect/broken')
    expect(res.status).toBe(302)
    expect(res.headers.get('location')).toBe(`${ORIGIN}/images/broken`)
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect((await get('/img/format=webp,onerror=redirect/page.html')).headers.get('location')).toBe(`${ORIGIN}/images/page.html`)
    expect((await get('/img/width=100,onerror=redirect/photo.jpg')).status).toBe(200)
    await expectProblem(await get('/img/onerror=fallback/photo.jpg'), 'invalid_option', 400)
    await expectProblem(await callWorker('/img/onerror=redirect/x.jpg'), 'invalid_option', 400)
  })
})

describe('GET /img from an origin, asked for oddly', () => {
  it('keeps every path under ORIGIN_URL, whatever the path holds (brackets, userinfo, dot segments)', async () => {
    const before = await hits('/images/photo.jpg')
    await expectProblem(await get('/img/_///[/x'), 'source_not_found', 404)
    // A scheme-relative or userinfo path is a path under the origin, not another host.
    expect((await expectProblem(await get('/img/_///user:pw@localhost/images/photo.jpg'), 'source_not_found', 404)).source).toMatch(new RegExp(`^${ORIGIN}/images///user:pw@localhost/`))
    // The URL parser resolves a %2E%2E segment before the worker sees it; encoded slashes leave it to our check.
    await expectProblem(await get('/img/_/%2E%2E/hits'), 'not_found', 404)
    await expectProblem(await get('/img/_/a%2F%2E%2E%2F%2E%2E%2Fhits'), 'invalid_request', 400)
    expect(await hits('/images/photo.jpg')).toBe(before)
  })

  it('names the answer after an origin file whose name is not valid percent-encoding', async () => {
    const res = await callWorker(`/img/width=20/${ORIGIN}/images/a%25ff.jpg`, {}, { ALLOWED_SOURCES: ORIGIN })
    expect((await decode(await okBytes(res))).image.width).toBe(20)
    expect(res.headers.get('content-disposition')).toBe('inline; filename="a_ff.jpg"')
  })

  it('does not ask the origin for a client over its quota', async () => {
    const limited = { ...viaOrigin, RATE_LIMIT_ANON_PER_MINUTE: '1' }
    const ip = { 'CF-Connecting-IP': '203.0.113.77' }
    await okBytes(await get('/img/width=77/photo.jpg', limited, ip))
    const before = await hits('/images/photo.jpg')
    await expectProblem(await get('/img/width=78/photo.jpg', limited, ip), 'rate_limited', 429)
    await expectProblem(await get('/img/width=79/photo.jpg', limited, { ...ip, 'If-None-Match': '*' }), 'rate_limited', 429)
    expect(await hits('/images/photo.jpg')).toBe(before)
  })

  it('gives an origin without validators an ETag from its bytes, and no 304 from a guess', async () => {
    const first = await get('/img/width=33/no-type.jpg')
    await okBytes(first)
    expect(first.headers.get('etag')).toMatch(/^"[0-9a-f]{32}"$/)
    const other = await get('/img/width=34/no-type.jpg', viaOrigin, { 'If-None-Match': first.headers.get('etag')! })
    expect(other.status).toBe(200)
  })
})

describe('GET /img with an absolute source', () => {
  const host = new URL(ORIGIN).host
  it('fetches only from ALLOWED_SOURCES, and refuses any other host before fetching', async () => {
    const allowed = { ALLOWED_SOURCES: `images.example.com, ${ORIGIN}` }
    const res = await callWorker(`/img/width=70/${ORIGIN}/images/photo.jpg`, {}, allowed)
    expect(res.headers.get('content-type')).toBe(MIME.jpeg)
    expect((await decode(await okBytes(res))).image.width).toBe(70)
    // A slash merged away by a proxy, and the URL percent-encoded, name the same image.
    await okBytes(await callWorker(`/img/width=70/${ORIGIN.replace('//', '/')}/images/photo.jpg`, {}, allowed))
    await okBytes(await callWorker(`/img/width=70/${encodeURIComponent(`${ORIGIN}/images/photo.jpg`)}`, {}, allowed))

    const before = await hits('/images/photo.jpg')
    const refused = await expectProblem(await callWorker(`/img/width=70/http://localhost:${new URL(ORIGIN).port}/images/photo.jpg`, {}, allowed), 'source_not_allowed', 403)
    expect(refused.host).toBe(`localhost:${new URL(ORIGIN).port}`)
    await expectProblem(await callWorker(`/img/_/https://evil.example.net/a.jpg`, {}, allowed), 'source_not_allowed', 403)
    await expectProblem(await callWorker(`/img/_/${ORIGIN}/images/photo.jpg`), 'source_not_allowed', 403)
    await expectProblem(await callWorker(`/img/_/${ORIGIN}/images/photo.jpg`, {}, { ALLOWED_SOURCES: '127.0.0.1' }), 'source_not_allowed', 403)
    expect(await hits('/images/photo.jpg')).toBe(before)
    expect(host).toContain('127.0.0.1')
  })
})
