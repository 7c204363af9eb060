/**
 * Whatever happens to a request in the conversion queue (it times out, its client goes away, its conversion
 * throws), the next conversion is served. Each request here is a real request to the worker (SELF), in a request
 * context of its own: workerd does not run a finished request's continuations, so a queue that needs one to let the
 * next request through wedges the isolate for good. QUEUE_TIMEOUT_MS is 1500 in this project (vitest.config.ts).
 */
import { SELF } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { BASE, expectProblem, okBytes } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import { decode } from '../helpers/image'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** An upload of `bytes` spread over `ms`, so its request holds the conversion slot that long. */
function trickle(bytes: Uint8Array, ms: number, pieces = 10): ReadableStream<Uint8Array> {
  return new ReadableStream({
    async start(controller) {
      const size = Math.ceil(bytes.length / pieces)
      for (let at = 0; at < bytes.length; at += size) {
        controller.enqueue(bytes.slice(at, at + size))
        await sleep(ms / pieces)
      }
      controller.close()
    },
  })
}

const post = (body: BodyInit, init: RequestInit = {}) =>
  SELF.fetch(`${BASE}/api/compress?format=webp`, { method: 'POST', body, headers: { 'Content-Type': 'image/jpeg' }, duplex: 'half', ...init } as RequestInit)

/** A small conversion that must succeed: a 100 px JPEG thumbnail to WebP. */
async function expectServed(): Promise<void> {
  const res = await SELF.fetch(`${BASE}/api/compress?format=webp&width=100`, { method: 'POST', body: fixture('photo.jpg'), headers: { 'Content-Type': 'image/jpeg' } })
  const image = await decode(await okBytes(res))
  expect(image.format).toBe('webp')
  expect(image.image.width).toBe(100)
}

describe('the conversion queue', () => {
  it('serves the next conversion after a request timed out waiting', async () => {
    const slow = post(trickle(fixture('photo.jpg'), 2500))
    await sleep(300)
    await expectProblem(await post(fixture('photo.jpg')), 'busy', 503)
    expect((await slow).status).toBe(200)
    await expectServed()
  })

  it('serves the next conversion after a waiting client went away', async () => {
    const slow = post(trickle(fixture('photo.jpg'), 1500))
    await sleep(300)
    const gone = new AbortController()
    const waiter = post(fixture('photo.jpg'), { signal: gone.signal }).catch((error: Error) => error)
    await sleep(200)
    gone.abort()
    expect(await waiter).toBeInstanceOf(Error)
    expect((await slow).status).toBe(200)
    await expectServed()
  })

  it('serves the next conversion after the converting client went away', async () => {
    const gone = new AbortController()
    const holder = post(trickle(fixture('photo.jpg'), 3000), { signal: gone.signal }).catch((error: Error) => error)
    await sleep(500)
    gone.abort()
    expect(await holder).toBeInstanceOf(Error)
    // The queue learns that the conversion will never finish when its request's heartbeat stops (STALE_MS, 2 s).
    await sleep(2500)
    await expectServed()
    await expectServed()
  })

  it('serves the conversions queued behind one that throws', async () => {
    const slow = post(trickle(fixture('photo.jpg'), 500))
    await sleep(100)
    // Bytes that are no image: this conversion throws inside the slot, while another waits behind it.
    const failing = post(trickle(fixture('truncated-10000.jpg').slice(0, 300), 100))
    await sleep(50)
    const behind = SELF.fetch(`${BASE}/api/compress?format=webp&width=100`, { method: 'POST', body: fixture('photo.jpg'), headers: { 'Content-Type': 'image/jpeg' } })
    expect((await slow).status).toBe(200)
    expect((await failing).status).toBeGreaterThanOrEqual(400)
    expect((await behind).status).toBe(200)
    await expectServed()
  })
})
