/**
 * Against a real `wrangler dev` over HTTP, as users run it: the same command the README gives,
 * on a free loopback port.
 */
import { readFileSync } from 'node:fs'
import { createConfig, lintFromString } from '@redocly/openapi-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readHeader } from '../../src/pipeline/sniff'
import { startWranglerDev, type WranglerDev } from './wrangler-dev'

const fixture = (name: string) => readFileSync(new URL(`../fixtures/${name}`, import.meta.url))

const QUOTA = 8
let dev: WranglerDev
let base: string

beforeAll(async () => {
  // A small body limit so the over-limit test sends little data; a small quota so the rate-limit
  // test reaches it in a few calls. Fresh local state, so counts from an earlier run cannot carry over.
  dev = await startWranglerDev({ MAX_INPUT_BYTES: '200000', RATE_LIMIT_ANON_PER_MINUTE: String(QUOTA) })
  base = dev.base
}, 120_000)

afterAll(async () => {
  await dev?.stop()
})

describe('wrangler dev over HTTP', () => {
  it("serves an OpenAPI document that Redocly's recommended rules pass with no error or warning", async () => {
    const source = await (await fetch(`${base}/api/openapi.json`)).text()
    const problems = await lintFromString({ source, absoluteRef: 'openapi.json', config: await createConfig({ extends: ['recommended'] }) })
    expect(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message}`)).toEqual([])
  })

  it('compresses a JPEG photo to WebP', async () => {
    const res = await fetch(`${base}/api/compress?format=webp&width=240`, {
      method: 'POST',
      headers: { 'Content-Type': 'image/jpeg' },
      body: fixture('photo.jpg'),
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('image/webp')
    const body = new Uint8Array(await res.arrayBuffer())
    expect(Number(res.headers.get('content-length'))).toBe(body.length)
    expect(readHeader(body)).toMatchObject({ format: 'webp', width: 240, height: 150 })
    expect(res.headers.get('server-timing')).toMatch(/decode;dur=.*transform;dur=.*encode;dur=/)
  })

  it('returns 413 for a chunked body over the limit, then still serves', async () => {
    // 256 KiB against the 200 000-byte limit: over it, yet small enough to sit in loopback socket
    // buffers, so the client has finished writing when the worker answers early and closes.
    const chunk = new Uint8Array(64 * 1024)
    let sent = 0
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 4) return controller.close()
        sent++
        controller.enqueue(chunk)
      },
    })
    const res = await fetch(`${base}/api/compress`, {
      method: 'POST',
      headers: { 'Content-Type': 'image/jpeg' },
      body: stream,
      duplex: 'half',
    } as RequestInit)
    expect(res.status).toBe(413)
    expect(res.headers.get('content-type')).toBe('application/problem+json')
    expect(await res.json()).toMatchObject({ code: 'payload_too_large', status: 413 })

    const next = await fetch(`${base}/api/health`)
    expect(next.status).toBe(200)
  })

  it('refuses a 50000x50000 header bomb with 422 image_too_large', async () => {
    const res = await fetch(`${base}/api/compress`, {
      method: 'POST',
      headers: { 'Content-Type': 'image/png' },
      body: fixture('bomb-50000.png'),
    })
    expect(res.status).toBe(422)
    expect(await res.json()).toMatchObject({ code: 'image_too_large' })
  })

  it('counts compress calls in the rate-limit Durable Object and answers 429 at the quota', async () => {
    // Earlier tests in this file made compress calls too; every one counts, whatever its status.
    const bomb = fixture('bomb-50000.png')
    let previous = QUOTA
    for (let call = 0; call <= QUOTA; call++) {
      const res = await fetch(`${base}/api/compress`, { method: 'POST', headers: { 'Content-Type': 'image/png' }, body: bomb })
      await res.arrayBuffer()
      expect(res.headers.get('ratelimit-policy')).toBe(`"anonymous";q=${QUOTA};w=60`)
      const remaining = Number(res.headers.get('x-ratelimit-remaining'))
      if (res.status === 429) {
        expect(previous).toBe(0)
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0)
        return
      }
      expect(res.status).toBe(422)
      if (call > 0) expect(remaining).toBe(previous - 1)
      else expect(remaining).toBeLessThan(QUOTA)
      previous = remaining
    }
    expect.fail(`no 429 after ${QUOTA + 1} calls with a quota of ${QUOTA}`)
  })
})
