/**
 * A page's first view: many GET /img requests at once for variants nobody asked for yet. Identical variants are
 * converted once (single flight, `Cache-Status: ...; collapsed` on the merged answers), an origin's timeout measures
 * the origin and not the wait for the conversion turn, an overloaded queue says so at once with Retry-After, and no
 * error is cacheable. The queue's behaviour across requests that end early is test/queue/wedge.test.ts.
 */
import { env } from 'cloudflare:test'
import { describe, expect, inject, it } from 'vitest'
import { expectProblem, okBytes } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import { decode } from '../helpers/image'
import { callWorker } from '../helpers/worker'

const ORIGIN = inject('originUrl')
const viaOrigin = { ORIGIN_URL: `${ORIGIN}/images/` }
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

let names = 0
/** A name under the origin's /images/burst/ (any name there is the photo) that no other test asks for. */
const fresh = () => `burst/${Date.now()}-${++names}.jpg`

async function originHits(path: string): Promise<number> {
  const hits = (await (await fetch(`${ORIGIN}/hits`)).json()) as Record<string, number>
  return hits[`/images/${path}`] ?? 0
}

/** An upload spread over `ms`: its conversion holds the queue that long. */
function holdQueue(ms: number, vars: Record<string, string>): Promise<Response> {
  const photo = fixture('photo.jpg')
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      for (let at = 0; at < photo.length; at += 4096) {
        controller.enqueue(photo.slice(at, at + 4096))
        await sleep(ms / Math.ceil(photo.length / 4096))
      }
      controller.close()
    },
  })
  return callWorker('/api/compress?format=webp', { method: 'POST', body, headers: { 'Content-Type': 'image/jpeg' }, duplex: 'half' } as RequestInit, vars)
}

const statuses = (answers: Response[]) => answers.map((res) => res.headers.get('cache-status'))

describe('a burst of GET /img requests', () => {
  it('converts one uncached variant once for thirty requests at once, from an origin', async () => {
    const name = fresh()
    const answers = await Promise.all(Array.from({ length: 30 }, () => callWorker(`/img/width=160,format=webp/${name}`, {}, viaOrigin)))
    expect(answers.map((res) => res.status)).toEqual(Array(30).fill(200))
    expect(statuses(answers).filter((status) => status === 'imgedge; fwd=miss; stored')).toHaveLength(1)
    expect(statuses(answers).filter((status) => status === 'imgedge; fwd=miss; collapsed')).toHaveLength(29)
    expect(await originHits(name)).toBe(1)
    const bodies = await Promise.all(answers.map(okBytes))
    const image = await decode(bodies[29]!)
    expect([image.format, image.image.width]).toEqual(['webp', 160])
    for (const body of bodies) expect(body).toEqual(bodies[0])
  })

  it('converts one uncached variant once for thirty requests at once, from the bucket', async () => {
    const key = `burst/${Date.now()}.jpg`
    await env.IMAGES.put(key, fixture('photo.jpg'))
    const answers = await Promise.all(Array.from({ length: 30 }, () => callWorker(`/img/width=120,format=avif/${key}`)))
    expect(answers.map((res) => res.status)).toEqual(Array(30).fill(200))
    expect(statuses(answers).filter((status) => status === 'imgedge; fwd=miss; stored')).toHaveLength(1)
    const image = await decode(await okBytes(answers[17]!))
    expect([image.format, image.image.width]).toEqual(['avif', 120])
    // Same ETag for all: they are one variant.
    expect(new Set(answers.map((res) => res.headers.get('etag'))).size).toBe(1)
  })

  it('times the origin, not the wait for the conversion turn', async () => {
    const vars = { ...viaOrigin, ORIGIN_TIMEOUT_MS: '400', QUEUE_TIMEOUT_MS: '10000' }
    const held = holdQueue(1500, vars)
    await sleep(100)
    const res = await callWorker(`/img/width=100,format=webp/${fresh()}`, {}, vars)
    const image = await decode(await okBytes(res))
    expect([image.format, image.image.width]).toEqual(['webp', 100])
    expect((await held).status).toBe(200)
  })

  it('answers format=auto with a WebP stand-in while the queue is busy, and stores the AVIF after', async () => {
    const key = `burst/auto-${Date.now()}.jpg`
    await env.IMAGES.put(key, fixture('photo.jpg'))
    const chrome = { accept: 'image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8' }
    const held = holdQueue(1000, {})
    await sleep(100)
    // callWorker returns once the request's waitUntil work is done too: the AVIF made in the background.
    const standIn = await callWorker(`/img/width=150,format=auto/${key}`, { headers: chrome })
    expect(standIn.headers.get('content-type')).toBe('image/webp')
    expect(standIn.headers.get('cache-status')).toBe('imgedge; fwd=miss; stored; detail=stand-in')
    expect(standIn.headers.get('cache-control')).toBe('public, max-age=60')
    expect(standIn.headers.get('etag')).toMatch(/-stand-in"$/)
    expect((await decode(await okBytes(standIn))).image.width).toBe(150)
    expect((await held).status).toBe(200)
    const later = await callWorker(`/img/width=150,format=auto/${key}`, { headers: chrome })
    expect([later.headers.get('content-type'), later.headers.get('cache-status'), later.headers.get('cache-control')]).toEqual(['image/avif', 'imgedge; hit', 'public, max-age=86400'])
    expect((await decode(await okBytes(later))).image.width).toBe(150)
  })

  it("answers an origin's empty body as the origin's fault (502), never cacheable", async () => {
    const res = await callWorker('/img/width=100/empty.jpg', {}, viaOrigin)
    const problem = await expectProblem(res, 'source_unavailable', 502)
    expect(problem.detail).toContain('empty body')
    expect(res.headers.get('cache-control')).toBe('no-store')
  })

  it('marks every error no-store: a missing key, a bad option', async () => {
    const missing = await callWorker('/img/width=100/no/such/key.jpg')
    await expectProblem(missing, 'source_not_found', 404)
    expect(missing.headers.get('cache-control')).toBe('no-store')
    const bad = await callWorker('/img/width=-3/key.jpg')
    await expectProblem(bad, 'invalid_option', 400)
    expect(bad.headers.get('cache-control')).toBe('no-store')
  })

  it("keeps an answer cacheable no longer than its URL's exp", async () => {
    const key = `burst/exp-${Date.now()}.jpg`
    await env.IMAGES.put(key, fixture('photo.jpg'))
    const exp = Math.floor(Date.now() / 1000) + 120
    const res = await callWorker(`/img/width=90/${key}?exp=${exp}`)
    await okBytes(res)
    const maxAge = Number(/max-age=(\d+)/.exec(res.headers.get('cache-control') ?? '')?.[1])
    expect(maxAge).toBeGreaterThan(100)
    expect(maxAge).toBeLessThanOrEqual(120)
  })

  it('refuses at once, with Retry-After, what the queue cannot convert within QUEUE_TIMEOUT_MS, and serves after', async () => {
    const vars = { QUEUE_TIMEOUT_MS: '1000' }
    const held = holdQueue(1500, vars)
    await sleep(100)
    // Six uploads of almost 1 MiB (the tests' MAX_INPUT_BYTES) are expected to take far more than a second in all.
    const big = new Uint8Array(1_000_000)
    big.set(fixture('photo.jpg'))
    const answers = await Promise.all(Array.from({ length: 6 }, () =>
      callWorker('/api/compress?format=webp', { method: 'POST', body: big, headers: { 'Content-Type': 'image/jpeg' } }, vars)))
    const refused = answers.filter((res) => res.status === 503)
    const details: string[] = []
    for (const res of refused) {
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
      details.push((await expectProblem(res, 'busy', 503)).detail)
    }
    // Those over the expected wait are refused on arrival; one admitted may still time out waiting.
    expect(details.filter((detail) => detail.includes('are expected to take')).length).toBeGreaterThan(0)
    expect((await held).status).toBe(200)
    const after = await callWorker('/api/compress?format=webp&width=50', { method: 'POST', body: fixture('photo.jpg'), headers: { 'Content-Type': 'image/jpeg' } }, vars)
    expect((await decode(await okBytes(after))).image.width).toBe(50)
  })

  it("reports the queue's depth and oldest wait on /api/health", async () => {
    const vars = { QUEUE_TIMEOUT_MS: '10000' }
    const held = holdQueue(1200, vars)
    await sleep(100)
    const waiting = callWorker('/api/compress?format=webp', { method: 'POST', body: fixture('photo.jpg'), headers: { 'Content-Type': 'image/jpeg' } }, vars)
    await sleep(300)
    const health = (await (await callWorker('/api/health')).json()) as Record<string, number | string>
    expect(health.status).toBe('ok')
    expect(health.queue).toBe(2)
    expect(health.queueWaiting).toBe(1)
    expect(health.queueOldestWaitMs).toBeGreaterThanOrEqual(200)
    expect((await held).status).toBe(200)
    expect((await waiting).status).toBe(200)
  })
})
