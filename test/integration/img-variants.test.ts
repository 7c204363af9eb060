/**
 * GET /img variant keys and quota: every spelling of one option value is one variant (one conversion, one cache
 * entry, one ETag), and a key missing from the bucket is counted against the client's quota like any conversion, so
 * nobody can probe the bucket's keys without limit. Regression: `background=fff` and `%23FFFFFF` were two
 * conversions, and a missing key answered 404 before the rate limit.
 */
import { env } from 'cloudflare:test'
import { expect, it } from 'vitest'
import { expectProblem, okBytes } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import { decode, pixel } from '../helpers/image'
import { callWorker, freshIp } from '../helpers/worker'

it('makes background=fff, %23FFFFFF and %23ffffff one variant, and another colour another', async () => {
  await env.IMAGES.put('variants/alpha.png', fixture('alpha.png'))
  const first = await callWorker('/img/format=jpeg,width=64,background=fff/variants/alpha.png')
  const white = await decode(await okBytes(first))
  expect(first.headers.get('cache-status')).toBe('imgedge; fwd=miss; stored')
  for (const spelling of ['%23FFFFFF', '%23ffffff', 'FFF', '%23fFf']) {
    const again = await callWorker(`/img/format=jpeg,width=64,background=${spelling}/variants/alpha.png`)
    expect([again.headers.get('cache-status'), again.headers.get('etag')], spelling).toEqual(['imgedge; hit', first.headers.get('etag')])
    await okBytes(again)
  }
  const black = await callWorker('/img/format=jpeg,width=64,background=000/variants/alpha.png')
  expect(black.headers.get('etag')).not.toBe(first.headers.get('etag'))
  const [x, y] = [0, 0]
  expect(pixel(white.image, x, y)).not.toEqual(pixel((await decode(await okBytes(black))).image, x, y))
})

it('counts a missing key against the quota like a miss, and still answers 404', async () => {
  await env.IMAGES.put('variants/here.jpg', fixture('photo.jpg'))
  const ip = { 'CF-Connecting-IP': freshIp() }
  const limited = { RATE_LIMIT_ANON_PER_MINUTE: '2' }
  const converted = await callWorker('/img/width=40/variants/here.jpg', { headers: ip }, limited)
  await okBytes(converted)
  const missing = await callWorker('/img/width=40/variants/nowhere.jpg', { headers: ip }, limited)
  expect((await expectProblem(missing, 'source_not_found', 404)).key).toBe('variants/nowhere.jpg')
  expect(missing.headers.get('x-ratelimit-remaining')).toBe('0')
  await expectProblem(await callWorker('/img/width=40/variants/elsewhere.jpg', { headers: ip }, limited), 'rate_limited', 429)
  // The stored answer and its 304 stay free.
  expect((await callWorker('/img/width=40/variants/here.jpg', { headers: ip }, limited)).headers.get('cache-status')).toBe('imgedge; hit')
  expect((await callWorker('/img/width=40/variants/here.jpg', { headers: { ...ip, 'If-None-Match': converted.headers.get('etag')! } }, limited)).status).toBe(304)
})
