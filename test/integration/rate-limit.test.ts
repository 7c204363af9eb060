/** POST /api/compress behind the rate limiter: headers, 429, exact counts, what is not counted, 503. */
import { env, runInDurableObject } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import type { RateLimiter } from '../../src/ratelimit/limiter'
import { expectProblem } from '../helpers/api'
import { callWorker, compressTiny, freshIp } from '../helpers/worker'

const LIMIT_10 = { RATE_LIMIT_ANON_PER_MINUTE: '10' }

describe('headers', () => {
  it('sends the IETF draft and X-RateLimit headers on a counted call', async () => {
    const before = Math.floor(Date.now() / 1000)
    const res = await compressTiny(freshIp(), LIMIT_10)
    expect(res.status).toBe(200)
    expect(res.headers.get('ratelimit-policy')).toBe('"anonymous";q=10;w=60')
    expect(res.headers.get('ratelimit')).toBe('"anonymous";r=9;t=60')
    expect(res.headers.get('x-ratelimit-limit')).toBe('10')
    expect(res.headers.get('x-ratelimit-remaining')).toBe('9')
    const reset = Number(res.headers.get('x-ratelimit-reset'))
    expect(reset).toBeGreaterThanOrEqual(before + 59)
    expect(reset).toBeLessThanOrEqual(before + 62)
  })

  it('counts and labels error answers after the check too', async () => {
    const ip = freshIp()
    const res = await compressTiny(ip, LIMIT_10, {}, '?quality=0')
    await expectProblem(res, 'invalid_option', 400)
    expect(res.headers.get('x-ratelimit-remaining')).toBe('9')
    expect((await compressTiny(ip, LIMIT_10)).headers.get('x-ratelimit-remaining')).toBe('8')
  })

  it('sends no rate-limit headers when limiting is off (limit 0)', async () => {
    const res = await compressTiny(freshIp(), { RATE_LIMIT_ANON_PER_MINUTE: '0' })
    expect(res.status).toBe(200)
    expect(res.headers.get('ratelimit')).toBeNull()
    expect(res.headers.get('x-ratelimit-limit')).toBeNull()
  })
})

describe('limits', () => {
  it('lets exactly the limit through, then answers 429 problem+json with Retry-After', async () => {
    const ip = freshIp()
    for (let i = 0; i < 10; i++) {
      const res = await compressTiny(ip, LIMIT_10)
      expect(res.status, `call ${i + 1}`).toBe(200)
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(9 - i))
    }
    const res = await compressTiny(ip, LIMIT_10)
    const body = await expectProblem(res, 'rate_limited', 429)
    expect(body).toMatchObject({ limit: 10, windowSeconds: 60 })
    const retryAfter = Number(res.headers.get('retry-after'))
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(60)
    expect(body.retryAfter).toBe(retryAfter)
    expect(res.headers.get('ratelimit')).toBe(`"anonymous";r=0;t=${retryAfter}`)
    expect(res.headers.get('x-ratelimit-remaining')).toBe('0')
  })

  it('lets exactly 10 of 40 concurrent calls through with a limit of 10', async () => {
    const ip = freshIp()
    const answers = await Promise.all(Array.from({ length: 40 }, () => compressTiny(ip, LIMIT_10)))
    const statuses = answers.map((r) => r.status)
    expect(statuses.filter((s) => s === 200)).toHaveLength(10)
    expect(statuses.filter((s) => s === 429)).toHaveLength(30)
    await Promise.all(answers.map((r) => r.arrayBuffer()))
  })

  it('refuses before reading the image: an over-limit corrupt upload gets 429, not 422', async () => {
    const ip = freshIp()
    const vars = { RATE_LIMIT_ANON_PER_MINUTE: '1' }
    expect((await compressTiny(ip, vars)).status).toBe(200)
    const res = await callWorker('/api/compress', {
      method: 'POST',
      body: new Uint8Array([0xff, 0xd8, 0xff, 0, 1, 2, 3]),
      headers: { 'Content-Type': 'image/jpeg', 'CF-Connecting-IP': ip },
    }, vars)
    await expectProblem(res, 'rate_limited', 429)
    expect(res.headers.get('server-timing')).toBeNull()
  })

  it('counts each client IP separately', async () => {
    const vars = { RATE_LIMIT_ANON_PER_MINUTE: '1' }
    const [a, b] = [freshIp(), freshIp()]
    expect((await compressTiny(a, vars)).status).toBe(200)
    expect((await compressTiny(a, vars)).status).toBe(429)
    expect((await compressTiny(b, vars)).status).toBe(200)
  })

  it('does not count /api/health or /api/formats', async () => {
    const ip = freshIp()
    const vars = { RATE_LIMIT_ANON_PER_MINUTE: '2' }
    for (const path of ['/api/health', '/api/formats', '/api/health?deep=1']) {
      for (let i = 0; i < 3; i++) {
        const res = await callWorker(path, { headers: { 'CF-Connecting-IP': ip } }, vars)
        expect(res.status).toBe(200)
        expect(res.headers.get('ratelimit')).toBeNull()
        await res.arrayBuffer()
      }
    }
    expect((await compressTiny(ip, vars)).headers.get('x-ratelimit-remaining')).toBe('1')
  })

  it('publishes the quotas it enforces in /api/formats', async () => {
    const vars = { RATE_LIMIT_ANON_PER_MINUTE: '7', RATE_LIMIT_PLANS: 'free=20,pro=300' }
    const res = await callWorker('/api/formats', {}, vars)
    const body = (await res.json()) as { rateLimits: Record<string, unknown> }
    expect(body.rateLimits).toMatchObject({ windowSeconds: 60, anonymousPerMinute: 7, plans: { free: 20, pro: 300 }, requireApiKey: false })
    expect((await compressTiny(freshIp(), vars)).headers.get('x-ratelimit-limit')).toBe('7')
  })

  it('uses the wrangler.toml default of 60 a minute', async () => {
    const res = await compressTiny(freshIp(), { RATE_LIMIT_ANON_PER_MINUTE: undefined })
    expect(res.headers.get('ratelimit-policy')).toBe('"anonymous";q=60;w=60')
  })
})

describe('when the rate limiter fails', () => {
  it('answers 503 problem+json when the Durable Object binding is missing, and serves the next call', async () => {
    const ip = freshIp()
    const res = await compressTiny(ip, { ...LIMIT_10, RATE_LIMITER: undefined })
    await expectProblem(res, 'rate_limiter_unavailable', 503)
    expect(res.headers.get('retry-after')).toBe('5')
    expect((await compressTiny(ip, LIMIT_10)).status).toBe(200)
  })

  it('answers 503 when the object itself errors (its storage is broken)', async () => {
    const ip = freshIp()
    expect((await compressTiny(ip, LIMIT_10)).status).toBe(200)
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`ip:${ip}`))
    await runInDurableObject(stub, (_: RateLimiter, state) => {
      state.storage.sql.exec('DROP TABLE hits')
    })
    await expectProblem(await compressTiny(ip, LIMIT_10), 'rate_limiter_unavailable', 503)
    expect((await compressTiny(freshIp(), LIMIT_10)).status).toBe(200)
  })

  it('serves uncounted, without rate-limit headers, when RATE_LIMIT_FAIL_OPEN=true', async () => {
    const res = await compressTiny(freshIp(), { ...LIMIT_10, RATE_LIMITER: undefined, RATE_LIMIT_FAIL_OPEN: 'true' })
    expect(res.status).toBe(200)
    expect(res.headers.get('ratelimit')).toBeNull()
  })
})
