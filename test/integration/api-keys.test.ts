/** API keys: plans, the two ways to send a key, and the 401 answers. */
import { describe, expect, it } from 'vitest'
import { expectProblem } from '../helpers/api'
import { callWorker, compressTiny, freshIp } from '../helpers/worker'

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('')
}

// Keys are made per run: only their hashes go into the API_KEYS secret, as in production.
const PRO_KEY = `ie_${crypto.randomUUID()}`
const FREE_KEY = `ie_${crypto.randomUUID()}`
const VARS = {
  RATE_LIMIT_ANON_PER_MINUTE: '1',
  RATE_LIMIT_PLANS: 'free=2,pro=3',
  API_KEYS: JSON.stringify([
    { name: `acme-${crypto.randomUUID()}`, plan: 'pro', sha256: await sha256Hex(PRO_KEY) },
    { name: `hobby-${crypto.randomUUID()}`, plan: 'free', sha256: await sha256Hex(FREE_KEY) },
  ]),
}

describe('plans', () => {
  it("applies the key's plan limit, counted per key, whichever header carries it", async () => {
    const ip = freshIp()
    const first = await compressTiny(ip, VARS, { Authorization: `Bearer ${PRO_KEY}` })
    expect(first.status).toBe(200)
    expect(first.headers.get('ratelimit-policy')).toBe('"pro";q=3;w=60')
    expect(first.headers.get('ratelimit')).toBe('"pro";r=2;t=60')
    // the same key from another address and through X-API-Key is the same client
    expect((await compressTiny(freshIp(), VARS, { 'X-API-Key': PRO_KEY })).headers.get('x-ratelimit-remaining')).toBe('1')
    expect((await compressTiny(ip, VARS, { authorization: `bearer ${PRO_KEY}` })).headers.get('x-ratelimit-remaining')).toBe('0')
    await expectProblem(await compressTiny(ip, VARS, { 'X-API-Key': PRO_KEY }), 'rate_limited', 429)
  })

  it('gives each plan its own limit and keeps keyed and anonymous counts apart', async () => {
    const ip = freshIp()
    expect((await compressTiny(ip, VARS)).status).toBe(200)
    expect((await compressTiny(ip, VARS)).status).toBe(429)
    const keyed = await compressTiny(ip, VARS, { 'X-API-Key': FREE_KEY })
    expect(keyed.status).toBe(200)
    expect(keyed.headers.get('ratelimit-policy')).toBe('"free";q=2;w=60')
  })

  it('lets a key on an unlimited plan (0) through without rate-limit headers', async () => {
    const res = await compressTiny(freshIp(), { ...VARS, RATE_LIMIT_PLANS: 'free=2,pro=0' }, { 'X-API-Key': PRO_KEY })
    expect(res.status).toBe(200)
    expect(res.headers.get('ratelimit')).toBeNull()
  })
})

describe('401', () => {
  it('refuses an unknown key with invalid_api_key and WWW-Authenticate, without counting the IP', async () => {
    const ip = freshIp()
    const wrongKeys: Record<string, string>[] = [{ Authorization: 'Bearer ie_not-a-key' }, { 'X-API-Key': `${PRO_KEY}x` }]
    for (const headers of wrongKeys) {
      const res = await compressTiny(ip, VARS, headers)
      await expectProblem(res, 'invalid_api_key', 401)
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="imgedge", error="invalid_token"')
      expect(res.headers.get('ratelimit')).toBeNull()
    }
    expect((await compressTiny(ip, VARS)).status).toBe(200)
  })

  it('with REQUIRE_API_KEY=true, refuses a call without a key and serves one with a key', async () => {
    const vars = { ...VARS, REQUIRE_API_KEY: 'true' }
    const res = await compressTiny(freshIp(), vars)
    const body = await expectProblem(res, 'api_key_required', 401)
    expect(body.detail).toMatch(/X-API-Key/)
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="imgedge"')
    expect((await compressTiny(freshIp(), vars, { 'X-API-Key': FREE_KEY })).status).toBe(200)
  })

  it('does not read another Authorization scheme as a key', async () => {
    const res = await compressTiny(freshIp(), VARS, { Authorization: 'Basic dXNlcjpwYXNz' })
    expect(res.status).toBe(200)
    expect(res.headers.get('ratelimit-policy')).toBe('"anonymous";q=1;w=60')
  })

  it('keeps /api/health and /api/formats open when keys are required', async () => {
    for (const path of ['/api/health', '/api/formats']) {
      expect((await callWorker(path, {}, { ...VARS, REQUIRE_API_KEY: 'true' })).status).toBe(200)
    }
  })
})
