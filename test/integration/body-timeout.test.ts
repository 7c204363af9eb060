/**
 * A request's body is read only once the request holds the isolate's conversion slot (so a queue of
 * uploads holds no image bytes). An upload that stalls then answers 408 body_timeout after
 * BODY_TIMEOUT_MS instead of keeping the slot from every request behind it.
 */
import { describe, expect, it } from 'vitest'
import { expectProblem, okBytes } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import { decode } from '../helpers/image'
import { callWorker } from '../helpers/worker'

/** A body that sends the first `sent` bytes of `bytes` and then nothing, without ending. */
function stalled(bytes: Uint8Array, sent: number): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      controller.enqueue(bytes.slice(0, sent))
    },
  })
}

describe('an upload that stalls', () => {
  it('answers 408 body_timeout after BODY_TIMEOUT_MS, and the next request is served', async () => {
    const photo = fixture('photo.jpg')
    const started = Date.now()
    const res = await callWorker(
      '/api/compress?format=webp',
      { method: 'POST', body: stalled(photo, 1000), headers: { 'Content-Type': 'image/jpeg' }, duplex: 'half' } as RequestInit,
      { BODY_TIMEOUT_MS: '300' },
    )
    const problem = await expectProblem(res, 'body_timeout', 408)
    expect(problem.limit).toBe(300)
    expect(Date.now() - started).toBeLessThan(10_000)

    const next = await callWorker('/api/compress?format=webp', { method: 'POST', body: photo, headers: { 'Content-Type': 'image/jpeg' } })
    expect((await decode(await okBytes(next))).format).toBe('webp')
  })

  it('reads a body that arrives in time, in several chunks', async () => {
    const photo = fixture('photo.jpg')
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        for (let at = 0; at < photo.length; at += 4096) {
          controller.enqueue(photo.slice(at, at + 4096))
          await new Promise((resolve) => setTimeout(resolve, 5))
        }
        controller.close()
      },
    })
    const res = await callWorker('/api/compress?format=webp', { method: 'POST', body, headers: { 'Content-Type': 'image/jpeg' }, duplex: 'half' } as RequestInit, { BODY_TIMEOUT_MS: '5000' })
    expect((await decode(await okBytes(res))).format).toBe('webp')
  })
})
