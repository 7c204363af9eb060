import { z } from 'zod'

/**
 * The `API_KEYS` secret: a JSON array of `{ name, plan, sha256 }`, where `sha256` is the hex SHA-256 of
 * the key. Only hashes are configured, so neither the repo, the dashboard nor a log ever holds a key.
 * `npm run key -- <name> <plan>` makes a key and its entry.
 */
const KeysSchema = z.array(
  z.strictObject({
    name: z.string().regex(/^[\w.@-]{1,64}$/, 'name: 1-64 letters, digits, _ . @ -'),
    plan: z.string().min(1),
    sha256: z.string().regex(/^[0-9a-f]{64}$/i, 'sha256: 64 hex digits').transform((hex) => hexBytes(hex)),
  }),
)

export interface ApiKey {
  /** The client's name: its rate-limit identity and what logs may show. */
  name: string
  plan: string
}

interface StoredKey extends ApiKey {
  sha256: Uint8Array
}

function hexBytes(hex: string): Uint8Array {
  const bytes = new Uint8Array(hex.length / 2)
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16)
  return bytes
}

const cache = new WeakMap<object, StoredKey[]>()

/**
 * The configured keys, parsed once per `env`. A malformed secret throws (the request fails with 500)
 * rather than silently letting every key in or out; the error names the entry, never its hash.
 *
 * @example
 * const keys = keysOf(c.env)
 */
export function keysOf(env: object, plans: Record<string, number>): StoredKey[] {
  let keys = cache.get(env)
  if (!keys) {
    const secret = (env as { API_KEYS?: unknown }).API_KEYS
    const raw = typeof secret === 'string' && secret.trim() ? JSON.parse(secret) : []
    keys = KeysSchema.parse(raw)
    for (const key of keys) {
      if (!(key.plan in plans)) throw new Error(`API_KEYS: key "${key.name}" is on plan "${key.plan}", which RATE_LIMIT_PLANS does not define`)
    }
    cache.set(env, keys)
  }
  return keys
}

/**
 * The key a request presents, from `Authorization: Bearer <key>` or `X-API-Key`; undefined if none.
 * An Authorization header of another scheme is not a key (a proxy's Basic auth must not be read as one).
 */
export function presentedKey(headers: Headers): string | undefined {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(headers.get('authorization') ?? '')?.[1]
  return bearer ?? (headers.get('x-api-key')?.trim() || undefined)
}

/**
 * The configured key matching `key`, or undefined. Compares SHA-256 digests with
 * `crypto.subtle.timingSafeEqual` and always walks every entry, so timing says nothing about which
 * entry, or how much of one, matched.
 *
 * @example
 * const client = await findKey(keysOf(env, plans), presentedKey(c.req.raw.headers) ?? '')
 */
export async function findKey(keys: StoredKey[], key: string): Promise<ApiKey | undefined> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(key)))
  let found: ApiKey | undefined
  for (const entry of keys) {
    if (crypto.subtle.timingSafeEqual(entry.sha256, digest) && !found) found = { name: entry.name, plan: entry.plan }
  }
  return found
}
