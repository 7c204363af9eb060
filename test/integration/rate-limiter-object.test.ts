/** The RateLimiter Durable Object itself: the sliding window, concurrency, persistence and cleanup. */
import { env, evictDurableObject, runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import type { RateLimiter } from '../../src/ratelimit/limiter'

const QUOTA = { limit: 10, windowMs: 60_000 }
let objects = 0
const freshStub = () => env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`test:object-${++objects}`))

describe('sliding window', () => {
  it('lets exactly the limit through in a window and refuses the next call until the oldest expires', async () => {
    await runInDurableObject(freshStub(), (limiter: RateLimiter) => {
      const t0 = 1_700_000_000_000
      for (let i = 0; i < 10; i++) {
        expect(limiter.consumeAt(QUOTA, t0 + i)).toMatchObject({ allowed: true, remaining: 9 - i })
      }
      expect(limiter.consumeAt(QUOTA, t0 + 10)).toEqual({ allowed: false, limit: 10, remaining: 0, resetMs: 59_990 })
      expect(limiter.consumeAt(QUOTA, t0 + 59_999).allowed).toBe(false)
      // one window after the first call, exactly one slot is free again
      expect(limiter.consumeAt(QUOTA, t0 + 60_000)).toMatchObject({ allowed: true, remaining: 0 })
      expect(limiter.consumeAt(QUOTA, t0 + 60_000).allowed).toBe(false)
      // after a whole window with no counted call, the full quota is back
      expect(limiter.consumeAt(QUOTA, t0 + 200_000)).toMatchObject({ allowed: true, remaining: 9, resetMs: 60_000 })
    })
  })

  it('counts refused calls nowhere: hammering does not extend the wait', async () => {
    await runInDurableObject(freshStub(), (limiter: RateLimiter) => {
      const t0 = 1_700_000_000_000
      for (let i = 0; i < 10; i++) limiter.consumeAt(QUOTA, t0)
      for (let t = 1; t < 60_000; t += 997) expect(limiter.consumeAt(QUOTA, t0 + t).allowed).toBe(false)
      expect(limiter.countAt(QUOTA.windowMs, t0 + 59_999)).toBe(10)
      expect(limiter.consumeAt(QUOTA, t0 + 60_000).allowed).toBe(true)
    })
  })

  it('slides: calls spread over the window free up one by one', async () => {
    await runInDurableObject(freshStub(), (limiter: RateLimiter) => {
      const t0 = 1_700_000_000_000
      for (let i = 0; i < 5; i++) limiter.consumeAt(QUOTA, t0)
      for (let i = 0; i < 5; i++) limiter.consumeAt(QUOTA, t0 + 30_000)
      expect(limiter.consumeAt(QUOTA, t0 + 59_000)).toMatchObject({ allowed: false, resetMs: 1_000 })
      // the five at t0 have left; the five at t0+30s have not
      expect(limiter.consumeAt(QUOTA, t0 + 60_000)).toMatchObject({ allowed: true, remaining: 4, resetMs: 30_000 })
      expect(limiter.countAt(QUOTA.windowMs, t0 + 60_000)).toBe(6)
    })
  })
})

describe('concurrency', () => {
  it('lets exactly 10 of 40 concurrent calls through with a limit of 10', async () => {
    const stub = freshStub()
    const decisions = await Promise.all(Array.from({ length: 40 }, () => stub.consume(QUOTA)))
    expect(decisions.filter((d) => d.allowed)).toHaveLength(10)
    expect(decisions.filter((d) => !d.allowed).every((d) => d.remaining === 0)).toBe(true)
    // every allowed call saw a different remaining count: none was decided on a stale count
    expect(new Set(decisions.filter((d) => d.allowed).map((d) => d.remaining)).size).toBe(10)
  })
})

describe('persistence', () => {
  it('keeps counts across an eviction of the object (SQLite storage, no in-memory state)', async () => {
    const stub = freshStub()
    for (let i = 0; i < 3; i++) await stub.consume(QUOTA)
    await evictDurableObject(stub)
    expect(await stub.consume(QUOTA)).toMatchObject({ allowed: true, remaining: 6 })
    // and a new instance over the same storage sees the same rows
    const counted = await runInDurableObject(stub, (limiter: RateLimiter) => limiter.countAt(QUOTA.windowMs, Date.now()))
    expect(counted).toBe(4)
  })

  it('clears an idle client with its alarm', async () => {
    const stub = freshStub()
    await stub.consume(QUOTA)
    await stub.consume(QUOTA)
    expect(await runDurableObjectAlarm(stub)).toBe(true)
    expect(await stub.consume(QUOTA)).toMatchObject({ allowed: true, remaining: 9 })
  })
})
