import { DurableObject } from 'cloudflare:workers'

/** What one client may do: `limit` calls in any `windowMs`-long span. */
export interface Quota {
  limit: number
  windowMs: number
}

/** The answer to one call: whether it may proceed, and the numbers for the RateLimit headers. */
export interface Decision {
  allowed: boolean
  limit: number
  /** Calls left in the window after this one. */
  remaining: number
  /** Milliseconds until the oldest counted call leaves the window, i.e. until `remaining` next grows. */
  resetMs: number
}

/**
 * The rate limiter: one Durable Object per client (`idFromName('ip:…')` or `idFromName('key:…')`),
 * storing the times of the client's counted calls in its SQLite database, so counts survive eviction,
 * restarts and deploys.
 *
 * Why a sliding-window log: it is exact. At most `limit` calls are let through in any window-long span,
 * with no double burst at a fixed window's boundary, and `remaining` is a plain count a client can reason
 * about. Its cost, one row per counted call, is bounded by the limit. Why it is exact under concurrency:
 * the whole decision (expire, count, insert) is synchronous SQL inside one method, and a Durable Object
 * runs one event at a time, so no two calls can interleave between the count and the insert; the
 * worker never decides, it only asks.
 *
 * @example
 * const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName('ip:203.0.113.7'))
 * const { allowed, remaining } = await stub.consume({ limit: 60, windowMs: 60_000 })
 */
export class RateLimiter extends DurableObject<Env> {
  private readonly sql: SqlStorage

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env)
    this.sql = ctx.storage.sql
    this.sql.exec('CREATE TABLE IF NOT EXISTS hits (at INTEGER NOT NULL)')
    this.sql.exec('CREATE INDEX IF NOT EXISTS hits_at ON hits (at)')
  }

  /** Count one call now if the quota allows it. */
  async consume(quota: Quota): Promise<Decision> {
    const decision = this.consumeAt(quota, Date.now())
    // Rows expire lazily on the next call; the alarm clears an idle client's rows.
    if (decision.allowed) await this.ctx.storage.setAlarm(Date.now() + quota.windowMs)
    return decision
  }

  /** The decision at time `now` (ms). Public so tests can step through a window without waiting. */
  consumeAt(quota: Quota, now: number): Decision {
    this.sql.exec('DELETE FROM hits WHERE at <= ?', now - quota.windowMs)
    const { n, oldest } = this.sql.exec<{ n: number; oldest: number | null }>('SELECT count(*) AS n, min(at) AS oldest FROM hits').one()
    const allowed = n < quota.limit
    if (allowed) this.sql.exec('INSERT INTO hits (at) VALUES (?)', now)
    const counted = allowed ? n + 1 : n
    return {
      allowed,
      limit: quota.limit,
      remaining: Math.max(0, quota.limit - counted),
      resetMs: Math.max(0, (oldest ?? now) + quota.windowMs - now),
    }
  }

  /** Counted calls still inside the window ending at `now`. */
  countAt(windowMs: number, now: number): number {
    return this.sql.exec<{ n: number }>('SELECT count(*) AS n FROM hits WHERE at > ?', now - windowMs).one().n
  }

  /** Set one window after the last counted call, so every row it finds has expired. */
  override async alarm(): Promise<void> {
    this.sql.exec('DELETE FROM hits')
  }
}
