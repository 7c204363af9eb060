import { createMiddleware } from 'hono/factory'
import { limitsOf } from '../env'
import { ApiError } from '../errors'
import { findKey, keysOf, presentedKey } from './keys'

/** Who is calling, and the quota that applies to them. */
export interface Client {
  /** Rate-limit identity: `key:<name>` or `ip:<address>`; the Durable Object's name. */
  id: string
  /** The quota policy's name: the key's plan, or `anonymous`. */
  policy: string
  /** Calls per window; 0 = unlimited. */
  limit: number
}

export type ClientVariables = { Variables: { client: Client } }

export interface IdentifyOptions {
  /** Realm named in `WWW-Authenticate` on 401 answers. */
  realm?: string
  /**
   * True when this request is authorised without a key even under `REQUIRE_API_KEY` (GET /img with signed URLs: an
   * `<img>` cannot send a key, and the signature already says the URL was given out). Such a client counts by its IP.
   */
  authorisedWithoutKey?: (env: Env) => boolean
}

/**
 * Identifies the client: a valid API key (`Authorization: Bearer <key>` or `X-API-Key`) names the client
 * and its plan; without a key the client is its `CF-Connecting-IP` on the anonymous plan. A key that
 * matches nothing is a 401, never a silent fall-back to anonymous, so a client with a typo finds out.
 *
 * @example
 * app.post('/api/compress', identifyClient(), rateLimit(), handler)
 */
export const identifyClient = (options: IdentifyOptions = {}) => {
  const realm = options.realm ?? 'imgedge'
  return createMiddleware<{ Bindings: Env } & ClientVariables>(async (c, next) => {
    const { quotas } = limitsOf(c.env)
    const key = presentedKey(c.req.raw.headers)
    if (key !== undefined) {
      const match = await findKey(keysOf(c.env, quotas.plans), key)
      if (!match) {
        throw new ApiError('invalid_api_key', 'The API key is not valid.', {}, {
          'WWW-Authenticate': `Bearer realm="${realm}", error="invalid_token"`,
        })
      }
      c.set('client', { id: `key:${match.name}`, policy: match.plan, limit: quotas.plans[match.plan] ?? 0 })
    } else if (quotas.requireApiKey && !options.authorisedWithoutKey?.(c.env)) {
      throw new ApiError('api_key_required', 'This service needs an API key: send Authorization: Bearer <key> or X-API-Key.', {}, {
        'WWW-Authenticate': `Bearer realm="${realm}"`,
      })
    } else {
      // Behind Cloudflare CF-Connecting-IP is always set; without it (a test harness) all share one bucket.
      const ip = c.req.header('cf-connecting-ip') ?? 'unknown'
      c.set('client', { id: `ip:${ip}`, policy: 'anonymous', limit: quotas.anonymousPerMinute })
    }
    await next()
  })
}
