/** The API's CORS policy and the security headers every answer carries. */
import { describe, expect, it } from 'vitest'
import { compress, expectProblem, get } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import { callWorker, compressTiny, freshIp } from '../helpers/worker'

const ORIGIN = 'https://app.example'

const preflight = (vars: Record<string, unknown> = {}, origin = ORIGIN) =>
  callWorker('/api/compress', {
    method: 'OPTIONS',
    headers: { Origin: origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type,x-api-key' },
  }, vars)

describe('CORS', () => {
  it('answers a preflight for compress with the methods and headers a client needs', async () => {
    const res = await preflight()
    expect(res.status).toBe(204)
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    expect(res.headers.get('access-control-allow-methods')).toContain('POST')
    const allowed = res.headers.get('access-control-allow-headers')!.toLowerCase().split(',')
    expect(allowed).toEqual(expect.arrayContaining(['content-type', 'authorization', 'x-api-key', 'accept']))
    expect(res.headers.get('access-control-max-age')).toBe('86400')
    expect(res.headers.get('access-control-allow-credentials')).toBeNull()
  })

  it('does not count preflights against the rate limit', async () => {
    const ip = freshIp()
    const vars = { RATE_LIMIT_ANON_PER_MINUTE: '1' }
    for (let i = 0; i < 3; i++) {
      const res = await callWorker('/api/compress', { method: 'OPTIONS', headers: { Origin: ORIGIN, 'Access-Control-Request-Method': 'POST', 'CF-Connecting-IP': ip } }, vars)
      expect(res.status).toBe(204)
    }
    expect((await compressTiny(ip, vars)).status).toBe(200)
  })

  it('lets a page read the image, the statistics and the rate-limit headers', async () => {
    const res = await compressTiny(freshIp(), { RATE_LIMIT_ANON_PER_MINUTE: '10' }, { Origin: ORIGIN }, '?format=webp')
    expect(res.status).toBe(200)
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    const exposed = res.headers.get('access-control-expose-headers')!.toLowerCase().split(',')
    for (const name of ['x-output-size', 'x-compression-ratio', 'server-timing', 'ratelimit', 'ratelimit-policy', 'x-ratelimit-remaining', 'retry-after', 'content-disposition']) {
      expect(exposed).toContain(name)
    }
  })

  it('lets a page read error answers too', async () => {
    const res = await compress(fixture('photo.jpg'), { quality: 0 }, { headers: { Origin: ORIGIN } })
    await expectProblem(res, 'invalid_option', 400)
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
  })

  it('with CORS_ORIGINS set, allows only those origins and varies on Origin', async () => {
    const vars = { CORS_ORIGINS: 'https://one.example, https://app.example' }
    const ok = await preflight(vars)
    expect(ok.headers.get('access-control-allow-origin')).toBe(ORIGIN)
    expect(ok.headers.get('vary')).toMatch(/origin/i)
    const other = await preflight(vars, 'https://evil.example')
    expect(other.headers.get('access-control-allow-origin')).toBeNull()
    const formats = await callWorker('/api/formats', { headers: { Origin: 'https://evil.example' } }, vars)
    expect(formats.status).toBe(200)
    expect(formats.headers.get('access-control-allow-origin')).toBeNull()
  })
})

describe('security headers', () => {
  it('sends nosniff and no-referrer on every kind of answer', async () => {
    const answers = [
      await get('/api/health'),
      await get('/api/formats'),
      await get('/api/openapi.json'),
      await get('/api/nowhere'),
      await compress(fixture('photo.jpg'), { format: 'webp', width: 32 }),
      await compress(fixture('photo.jpg'), { width: 32, response: 'json' }),
      await compress(fixture('text.txt'), {}, { contentType: 'image/png' }),
      await compressTiny(freshIp(), { RATE_LIMITER: undefined, RATE_LIMIT_ANON_PER_MINUTE: '5' }),
      await preflight(),
    ]
    for (const res of answers) {
      expect(res.headers.get('x-content-type-options'), `${res.status}`).toBe('nosniff')
      expect(res.headers.get('referrer-policy')).toBe('no-referrer')
      await res.arrayBuffer()
    }
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 404, 200, 200, 415, 503, 204])
  })
})
