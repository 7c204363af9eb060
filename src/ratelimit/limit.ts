import { createMiddleware } from 'hono/factory'
import { limitsOf } from '../env'
import { ApiError } from '../errors'
import type { ClientVariables } from './identify'
import type { Decision } from './limiter'

export interface RateLimitOptions {
  /** Longest wait for the Durable Object's answer before treating it as unreachable. */
  timeoutMs?: number
}

/**
 * Asks the client's Durable Object whether this call fits its quota, before any body is read. Over the
 * limit: 429 `rate_limited` with `Retry-After`. Object unreachable: 503 `rate_limiter_unavailable`
 * (fail closed) unless RATE_LIMIT_FAIL_OPEN is set. Every answer after the check, errors included,
 * carries the RateLimit headers. Runs after `identifyClient()`.
 *
 * @example
 * app.post('/api/compress', identifyClient(), rateLimit({ timeoutMs: 5000 }), handler)
 */
export const rateLimit = (options: RateLimitOptions = {}) => {
  const timeoutMs = options.timeoutMs ?? 5000
  return createMiddleware<{ Bindings: Env } & ClientVariables>(async (c, next) => {
    const { quotas } = limitsOf(c.env)
    const client = c.get('client')
    if (client.limit === 0) return next()

    const windowMs = quotas.windowSeconds * 1000
    let decision: Decision
    try {
      const stub = c.env.RATE_LIMITER.get(c.env.RATE_LIMITER.idFromName(client.id))
      decision = await withTimeout(stub.consume({ limit: client.limit, windowMs }), timeoutMs)
    } catch (error) {
      console.error(`rate limiter unreachable for policy ${client.policy}: ${(error as Error).message}`)
      if (quotas.failOpen) return next()
      throw new ApiError('rate_limiter_unavailable', 'The rate limiter could not be reached; try again shortly.', {}, { 'Retry-After': '5' })
    }

    const headers = rateLimitHeaders(client.policy, decision, quotas.windowSeconds)
    if (!decision.allowed) {
      const retryAfter = Math.max(1, Math.ceil(decision.resetMs / 1000))
      throw new ApiError(
        'rate_limited',
        `Over the ${client.policy} limit of ${decision.limit} compress calls per ${quotas.windowSeconds} s; retry in ${retryAfter} s.`,
        { limit: decision.limit, windowSeconds: quotas.windowSeconds, retryAfter },
        { ...headers, 'Retry-After': String(retryAfter) },
      )
    }
    await next()
    for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value)
  })
}

/** The rate-limit headers and what they mean; /api/openapi.json documents them from this list. */
export const RATE_LIMIT_HEADERS = {
  'RateLimit-Policy': 'IETF draft: the policy name (plan or `anonymous`), quota `q` per window `w` seconds, e.g. `"anonymous";q=60;w=60`.',
  RateLimit: 'IETF draft: `r` calls remaining and `t` seconds until `r` next grows, e.g. `"anonymous";r=59;t=60`.',
  'X-RateLimit-Limit': 'The quota per window.',
  'X-RateLimit-Remaining': 'Calls remaining in the window.',
  'X-RateLimit-Reset': 'Unix time (s) when `X-RateLimit-Remaining` next grows.',
} as const

/**
 * The IETF draft headers (`RateLimit-Policy`, `RateLimit`, structured fields) and the older
 * `X-RateLimit-*` trio. `t` and `X-RateLimit-Reset` say when `remaining` next grows: seconds from now,
 * and Unix time in seconds.
 */
export function rateLimitHeaders(policy: string, decision: Decision, windowSeconds: number): Record<keyof typeof RATE_LIMIT_HEADERS, string> {
  const resetSeconds = Math.ceil(decision.resetMs / 1000)
  return {
    'RateLimit-Policy': `"${policy}";q=${decision.limit};w=${windowSeconds}`,
    RateLimit: `"${policy}";r=${decision.remaining};t=${resetSeconds}`,
    'X-RateLimit-Limit': String(decision.limit),
    'X-RateLimit-Remaining': String(decision.remaining),
    'X-RateLimit-Reset': String(Math.ceil((Date.now() + decision.resetMs) / 1000)),
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}
