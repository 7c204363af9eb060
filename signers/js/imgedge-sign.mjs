// Sign imgedge GET /img URLs from application code: Web Crypto only, no dependencies (Cloudflare Workers, Node 18+,
// Deno, Bun). The worker checks signatures with this very file (src/delivery/sign.ts imports it), so what an
// application signs here is what the worker verifies. Python, PHP and shell equivalents sit beside this folder.
//
//   import { imageUrl } from './imgedge-sign.mjs'
//   await imageUrl('https://images.example.com', { width: 800, format: 'auto' }, 'photos/cat.jpg', { secret })
//   // 'https://images.example.com/img/width=800,format=auto/photos/cat.jpg?sig=...'

const encoder = new TextEncoder()

/** The signed message: the path as sent (percent-encoded), and the expiry when there is one. */
const message = (path, exp) => encoder.encode(exp === undefined ? path : `${path}?exp=${exp}`)

const hmacKey = (secret, use) => crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [use])

const toBase64Url = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')

function fromBase64Url(text) {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) return undefined
  try {
    return Uint8Array.from(atob(text.replace(/-/g, '+').replace(/_/g, '/')), (char) => char.charCodeAt(0))
  } catch {
    return undefined // a length no base64 has
  }
}

/**
 * The path as the worker will see it: what a URL parser makes of it (spaces and non-ASCII percent-encoded, `.` and
 * `..` segments resolved), which is what the worker checks. `^` is encoded too: newer parsers encode it and older
 * ones do not, and `%5E` reads the same to both. A `?` or `#` cannot be signed: it would end the path.
 *
 * @example
 * requestedPath('/img/_/café.jpg') // '/img/_/caf%C3%A9.jpg'
 */
export function requestedPath(path) {
  if (/[?#]/.test(path)) throw new Error(`a /img path has no ? or #: ${path}`)
  return new URL(path, 'http://imgedge.invalid').pathname.replace(/\^/g, '%5E')
}

/**
 * A /img path with its signature: `sig` is the base64url HMAC-SHA256, under `secret`, of the path as requested
 * (`requestedPath`), followed by `?exp=<exp>` when the URL expires at Unix time `exp`.
 *
 * @example
 * await signPath('/img/width=800/photo.jpg', secret) // '/img/width=800/photo.jpg?sig=...'
 * await signPath('/img/_/photo.jpg', secret, 1767225600) // '/img/_/photo.jpg?exp=1767225600&sig=...'
 */
export async function signPath(path, secret, exp) {
  const requested = requestedPath(path)
  const sig = toBase64Url(await crypto.subtle.sign('HMAC', await hmacKey(secret, 'sign'), message(requested, exp)))
  return exp === undefined ? `${requested}?sig=${sig}` : `${requested}?exp=${exp}&sig=${sig}`
}

/** True when `sig` (base64url) is the signature of `path` and `exp` under `secret`; Web Crypto's verify takes the same time for any wrong one. */
export async function signatureMatches(path, exp, sig, secret) {
  const bytes = fromBase64Url(sig)
  return bytes !== undefined && crypto.subtle.verify('HMAC', await hmacKey(secret, 'verify'), bytes, message(path, exp))
}

/**
 * `/img/<options>/<source>`: options as an object (`{ width: 800, format: 'auto' }`, `{ preset: 'thumb' }`) or a
 * ready `name=value,...` string, each value percent-encoded (`background: '#fff'` is `background=%23fff`); the
 * source a bucket key or path (each segment percent-encoded) or an absolute https:// URL.
 *
 * @example
 * imagePath({ width: 400, format: 'auto' }, 'photos/cat photo.jpg') // '/img/width=400,format=auto/photos/cat%20photo.jpg'
 */
export function imagePath(options, source) {
  const text = typeof options === 'string' ? options : Object.entries(options).map(([name, value]) => `${name}=${encodeURIComponent(String(value))}`).join(',')
  return `/img/${text || '_'}/${source.replace(/^\/+/, '').split('/').map(encodeURIComponent).join('/')}`
}

/**
 * A whole /img URL on `base` (the worker's origin), signed when `secret` is given, expiring at Unix time `exp` or
 * `expiresIn` seconds from now when either is given.
 *
 * @example
 * await imageUrl('https://images.example.com', { width: 800, format: 'auto' }, 'photos/cat.jpg', { secret, expiresIn: 3600 })
 */
export async function imageUrl(base, options, source, { secret, exp, expiresIn } = {}) {
  const path = imagePath(options, source)
  const expires = exp ?? (expiresIn === undefined ? undefined : Math.floor(Date.now() / 1000) + expiresIn)
  return `${base.replace(/\/+$/, '')}${secret === undefined ? requestedPath(path) : await signPath(path, secret, expires)}`
}
