/**
 * GET /img/<options>/<key>: images from the IMAGES R2 bucket (miniflare's real R2), converted as POST /api/compress
 * converts them, with strong ETags, 304s, the Cache API (Cache-Status), Accept variants for format=auto, signed URLs
 * and problem+json errors; cache hits and 304s are not counted against the client's quota.
 */
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { signPath } from '../../src/delivery/sign'
import { webpAnimationChunks } from '../helpers/animation'
import { expectProblem, MIME, okBytes } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import { decode } from '../helpers/image'
import { callWorker, freshIp } from '../helpers/worker'

const BROWSER = 'image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8'
const put = (key: string, bytes: Uint8Array) => env.IMAGES.put(key, bytes)
const img = (path: string, headers: Record<string, string> = {}, vars: Record<string, string> = {}, method = 'GET') =>
  callWorker(path, { method, headers }, vars)
const post = (bytes: Uint8Array, query: string, headers: Record<string, string> = {}) =>
  callWorker(`/api/compress?${query}`, { method: 'POST', body: bytes, headers: { 'Content-Type': 'image/jpeg', ...headers } })

describe('GET /img from the IMAGES bucket', () => {
  it('answers the bytes POST /api/compress makes from the same image and options', async () => {
    await put('photos/cat.jpg', fixture('photo.jpg'))
    const res = await img('/img/width=320,format=webp,quality=70/photos/cat.jpg')
    expect(res.headers.get('content-type')).toBe(MIME.webp)
    const bytes = await okBytes(res)
    expect(bytes).toEqual(await okBytes(await post(fixture('photo.jpg'), 'width=320&format=webp&quality=70')))
    const out = await decode(bytes)
    expect([out.format, out.image.width]).toEqual(['webp', 320])
    expect(res.headers.get('content-disposition')).toBe('inline; filename="cat.webp"')
  })

  it('delivers an animated GIF as an animated WebP to a browser (format=auto), every frame, and its first frame with animated=false', async () => {
    await put('clips/anim.gif', fixture('anim.gif'))
    const res = await img('/img/format=auto,width=200/clips/anim.gif', { accept: BROWSER })
    expect([res.headers.get('content-type'), res.headers.get('x-frames')]).toEqual([MIME.webp, '10'])
    expect(webpAnimationChunks(await okBytes(res)).frames).toHaveLength(10)
    const still = await img('/img/format=auto,width=200,animated=false/clips/anim.gif', { accept: BROWSER })
    expect((await decode(await okBytes(still))).header.frames).toBe(1)
    expect(still.headers.get('x-frames-dropped')).toBe('9')
  })

  it('takes _ for no options, and keys with slashes and percent-encoding', async () => {
    await put('a dir/photo 1.png', fixture('photo.png'))
    const res = await img('/img/_/a%20dir/photo%201.png')
    const out = await decode(await okBytes(res))
    expect(out.format).toBe('png')
  })

  it('gives a strong ETag and public caching, and answers If-None-Match with 304 and no body', async () => {
    await put('p.jpg', fixture('photo.jpg'))
    const first = await img('/img/width=200/p.jpg')
    await okBytes(first)
    const etag = first.headers.get('etag')!
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/)
    expect(first.headers.get('cache-control')).toBe('public, max-age=86400')
    expect(first.headers.get('vary') ?? '').not.toContain('Accept')
    const again = await img('/img/width=200/p.jpg', { 'If-None-Match': etag })
    expect(again.status).toBe(304)
    expect(await again.text()).toBe('')
    expect(again.headers.get('etag')).toBe(etag)
    expect((await img('/img/width=200/p.jpg', { 'If-None-Match': '"other"' })).status).toBe(200)
    // The same options in another order are the same variant.
    expect((await img('/img/width=200,fit=inside/p.jpg', { 'If-None-Match': etag })).status).toBe(304)
    expect((await img('/img/width=201/p.jpg', { 'If-None-Match': etag })).status).toBe(200)
    expect((await img('/img/width=200/p.jpg', {}, { IMG_MAX_AGE: '60' })).headers.get('cache-control')).toBe('public, max-age=60')
  })

  it('stores a converted answer in the Cache API and serves the next request from it', async () => {
    await put('c.jpg', fixture('photo.jpg'))
    const miss = await img('/img/width=240,format=jpeg/c.jpg')
    expect(miss.headers.get('cache-status')).toBe('imgedge; fwd=miss; stored')
    const missBytes = await okBytes(miss)
    const hit = await img('/img/width=240,format=jpeg/c.jpg')
    expect(hit.headers.get('cache-status')).toBe('imgedge; hit')
    expect(await okBytes(hit)).toEqual(missBytes)
    expect(hit.headers.get('etag')).toBe(miss.headers.get('etag'))
    expect(hit.headers.get('x-output-width')).toBe('240')
  })

  it('makes a new variant when the object changes', async () => {
    await put('v.jpg', fixture('photo.jpg'))
    const before = await img('/img/format=png,width=64/v.jpg')
    await okBytes(before)
    await put('v.jpg', fixture('exif-6.jpg'))
    const after = await img('/img/format=png,width=64/v.jpg', { 'If-None-Match': before.headers.get('etag')! })
    expect(after.status).toBe(200)
    expect(after.headers.get('cache-status')).toBe('imgedge; fwd=miss; stored')
    expect(after.headers.get('etag')).not.toBe(before.headers.get('etag'))
  })

  it('keeps format=auto variants apart by Accept, with Vary: Accept', async () => {
    await put('auto.jpg', fixture('photo.jpg'))
    const path = '/img/format=auto,width=160/auto.jpg'
    const avif = await img(path, { Accept: BROWSER })
    expect(avif.headers.get('content-type')).toBe(MIME.avif)
    expect(avif.headers.get('vary')).toContain('Accept')
    await okBytes(avif)
    const old = await img(path, { Accept: 'image/*' })
    expect(old.headers.get('content-type')).toBe(MIME.jpeg)
    expect(old.headers.get('cache-status')).toBe('imgedge; fwd=miss; stored')
    expect(old.headers.get('etag')).not.toBe(avif.headers.get('etag'))
    expect((await decode(await okBytes(old))).format).toBe('jpeg')
    const webpOnly = await img(path, { Accept: 'image/webp,*/*' })
    expect(webpOnly.headers.get('content-type')).toBe(MIME.webp)
    const avifAgain = await img(path, { Accept: BROWSER })
    expect([avifAgain.headers.get('cache-status'), avifAgain.headers.get('content-type')]).toEqual(['imgedge; hit', MIME.avif])
    expect((await img(path, { Accept: 'image/*', 'If-None-Match': avif.headers.get('etag')! })).status).toBe(200)
  })

  it('answers HEAD with the headers and no body', async () => {
    await put('h.jpg', fixture('photo.jpg'))
    const res = await img('/img/width=100,format=webp/h.jpg', {}, {}, 'HEAD')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe(MIME.webp)
    expect(res.headers.get('etag')).toMatch(/^"/)
    expect(await res.text()).toBe('')
  })
})

describe('GET /img errors', () => {
  it('answers 404 source_not_found for a key not in the bucket, and the next request is served', async () => {
    const problem = await expectProblem(await img('/img/width=100/nowhere.jpg'), 'source_not_found', 404)
    expect(problem.key).toBe('nowhere.jpg')
    await put('here.jpg', fixture('photo.jpg'))
    await okBytes(await img('/img/width=100/here.jpg'))
  })

  it('validates options as POST /api/compress does', async () => {
    await put('o.jpg', fixture('photo.jpg'))
    expect((await expectProblem(await img('/img/quality=0/o.jpg'), 'invalid_option', 400)).option).toBe('quality')
    expect((await expectProblem(await img('/img/colour=red/o.jpg'), 'invalid_option', 400)).option).toBe('colour')
    expect((await expectProblem(await img('/img/width=1,width=2/o.jpg'), 'invalid_option', 400)).option).toBe('width')
    expect((await expectProblem(await img('/img/webp/o.jpg'), 'invalid_option', 400)).option).toBe('webp')
    expect((await expectProblem(await img('/img/_/o.jpg?width=10'), 'invalid_option', 400)).option).toBe('width')
    await expectProblem(await img('/img/_/a%2F..%2Fo.jpg'), 'invalid_request', 400)
    await expectProblem(await img(`/img/_/${'k'.repeat(1025)}`), 'invalid_request', 400)
    await expectProblem(await img('/img/constructor=1/o.jpg'), 'invalid_option', 400)
    await expectProblem(await img('/img/o.jpg'), 'not_found', 404)
  })

  it('refuses an object over MAX_INPUT_BYTES from its size, and bytes that are not an image', async () => {
    const big = new Uint8Array(1024 * 1024 + 1)
    big.set(fixture('photo.jpg'))
    await put('big.jpg', big)
    expect((await expectProblem(await img('/img/_/big.jpg'), 'payload_too_large', 413)).limit).toBe(1024 * 1024)
    await put('notes.txt', fixture('text.txt'))
    await expectProblem(await img('/img/format=webp/notes.txt'), 'unsupported_format', 415)
  })

  it('allows only GET and HEAD', async () => {
    const res = await img('/img/_/x.jpg', {}, {}, 'POST')
    await expectProblem(res, 'method_not_allowed', 405)
    expect(res.headers.get('allow')).toBe('GET, HEAD')
  })
})

describe('signed /img URLs', () => {
  const KEY = 'test-signing-key-0123456789'
  const signed = { SIGNING_KEY: KEY }

  it('serves unsigned URLs without SIGNING_KEY, and only signed ones with it', async () => {
    await put('s.jpg', fixture('photo.jpg'))
    await okBytes(await img('/img/width=90/s.jpg'))
    await expectProblem(await img('/img/width=90/s.jpg', {}, signed), 'signature_required', 403)
    const res = await img(await signPath('/img/width=90/s.jpg', KEY), {}, signed)
    expect((await decode(await okBytes(res))).image.width).toBe(90)
  })

  it('signs the path as the request will carry it: spaces and non-ASCII percent-encoded', async () => {
    await put('café au lait.jpg', fixture('photo.jpg'))
    const path = await signPath('/img/width=40/café au lait.jpg', KEY)
    expect(path).toMatch(/^\/img\/width=40\/caf%C3%A9%20au%20lait\.jpg\?sig=/)
    expect((await decode(await okBytes(await img(path, {}, signed)))).image.width).toBe(40)
  })

  it('refuses a tampered path, another key, a changed exp and an expired URL', async () => {
    await put('s.jpg', fixture('photo.jpg'))
    const good = await signPath('/img/width=90/s.jpg', KEY)
    const sig = new URL(good, 'https://x').searchParams.get('sig')!
    await expectProblem(await img(`/img/width=900/s.jpg?sig=${sig}`, {}, signed), 'invalid_signature', 403)
    await expectProblem(await img(await signPath('/img/width=90/s.jpg', 'another-key'), {}, signed), 'invalid_signature', 403)
    await expectProblem(await img(`/img/width=90/s.jpg?sig=not*base64`, {}, signed), 'invalid_signature', 403)
    await expectProblem(await img(`/img/width=90/s.jpg?sig=A`, {}, signed), 'invalid_signature', 403)

    const future = Math.floor(Date.now() / 1000) + 3600
    const expiring = await signPath('/img/width=90/s.jpg', KEY, future)
    await okBytes(await img(expiring, {}, signed))
    await expectProblem(await img(expiring.replace(`exp=${future}`, `exp=${future + 1}`), {}, signed), 'invalid_signature', 403)
    const past = Math.floor(Date.now() / 1000) - 10
    const expired = await expectProblem(await img(await signPath('/img/width=90/s.jpg', KEY, past), {}, signed), 'signature_expired', 403)
    expect(expired.expires).toBe(past)
  })
})

describe('GET /img under REQUIRE_API_KEY', () => {
  it('needs a key for unsigned URLs, stored answers and 304s too, and takes a signed URL in place of one', async () => {
    await put('k.jpg', fixture('photo.jpg'))
    const stored = await img('/img/width=30/k.jpg')
    await okBytes(stored)
    const required = { REQUIRE_API_KEY: 'true' }
    await expectProblem(await img('/img/width=30/k.jpg', {}, required), 'api_key_required', 401)
    await expectProblem(await img('/img/width=30/k.jpg', { 'If-None-Match': stored.headers.get('etag')! }, required), 'api_key_required', 401)
    await expectProblem(await img('/img/width=30/k.jpg', { 'X-API-Key': 'wrong' }, required), 'invalid_api_key', 401)
    const signing = { ...required, SIGNING_KEY: 'the-key' }
    await expectProblem(await img('/img/width=30/k.jpg', {}, signing), 'signature_required', 403)
    expect((await decode(await okBytes(await img(await signPath('/img/width=30/k.jpg', 'the-key'), {}, signing)))).image.width).toBe(30)
  })
})

describe('GET /img and the rate limit', () => {
  it('counts conversions only: cache hits and 304s are free', async () => {
    await put('q.jpg', fixture('photo.jpg'))
    const ip = freshIp()
    const limited = { RATE_LIMIT_ANON_PER_MINUTE: '1' }
    const first = await img('/img/width=50/q.jpg', { 'CF-Connecting-IP': ip }, limited)
    await okBytes(first)
    expect(first.headers.get('x-ratelimit-remaining')).toBe('0')
    const hit = await img('/img/width=50/q.jpg', { 'CF-Connecting-IP': ip }, limited)
    expect(hit.headers.get('cache-status')).toBe('imgedge; hit')
    await okBytes(hit)
    expect((await img('/img/width=50/q.jpg', { 'CF-Connecting-IP': ip, 'If-None-Match': first.headers.get('etag')! }, limited)).status).toBe(304)
    await expectProblem(await img('/img/width=51/q.jpg', { 'CF-Connecting-IP': ip }, limited), 'rate_limited', 429)
  })
})
