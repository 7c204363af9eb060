/**
 * The isolate's body buffer (src/lib/body-buffer.ts): reused from one conversion to the next, except that the
 * room a large body needed is given back when its conversion ends, at once (its memory detached), rather than
 * kept for the life of the isolate or left to the garbage collector; an AVIF encode gives it back before libaom starts.
 */
import { describe, expect, it } from 'vitest'
import { endBodyBuffer, releaseBodyOf } from '../../src/lib/body-buffer'
import { readBody } from '../../src/pipeline/parse'

const request = (size: number) => new Request('http://x/', { method: 'POST', body: new Uint8Array(size).fill(7), headers: { 'Content-Length': String(size) } })

describe('the body buffer', () => {
  it('keeps the buffer of a photo-sized body for the next conversion', async () => {
    const first = await readBody(request(3 * 2 ** 20), 2 ** 30)
    endBodyBuffer()
    expect(first.length).toBe(3 * 2 ** 20)
    const second = await readBody(request(2 ** 20), 2 ** 30)
    expect(second.buffer.byteLength).toBeGreaterThanOrEqual(3 * 2 ** 20)
    endBodyBuffer()
  })

  it('frees the buffer of a body over 8 MiB when its conversion ends', async () => {
    const body = await readBody(request(12 * 2 ** 20), 2 ** 30)
    expect(body.length).toBe(12 * 2 ** 20)
    expect(body[body.length - 1]).toBe(7)
    endBodyBuffer()
    expect(body.buffer.byteLength).toBe(0)
    const next = await readBody(request(1000), 2 ** 30)
    expect(next.length).toBe(1000)
    expect(next.buffer.byteLength).toBeLessThan(2 ** 20)
  })

  it('is given back early only for a view of a body over 8 MiB, and the next body reads whole', async () => {
    const small = await readBody(request(2 ** 20), 2 ** 30)
    expect(releaseBodyOf(small)).toBe(false)
    expect(releaseBodyOf(new Uint8Array(12 * 2 ** 20))).toBe(false)
    expect(small.length).toBe(2 ** 20)
    const large = await readBody(request(12 * 2 ** 20), 2 ** 30)
    expect(releaseBodyOf(large)).toBe(true)
    expect(large.buffer.byteLength).toBe(0)
    endBodyBuffer()
    const next = await readBody(request(5000), 2 ** 30)
    expect([next.length, next[4999]]).toEqual([5000, 7])
    endBodyBuffer()
  })
})
