// No imports: scripts/sign.mjs loads this file in Node as it is.

const encoder = new TextEncoder()

/** The signed message: the path as sent (percent-encoded), and the expiry when there is one. */
const message = (path: string, exp: number | undefined) => encoder.encode(exp === undefined ? path : `${path}?exp=${exp}`)

const hmacKey = (secret: string, use: 'sign' | 'verify') =>
  crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [use])

const toBase64Url = (bytes: ArrayBuffer) => btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')

function fromBase64Url(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) return undefined
  try {
    return Uint8Array.from(atob(text.replace(/-/g, '+').replace(/_/g, '/')), (char) => char.charCodeAt(0))
  } catch {
    return undefined // a length no base64 has
  }
}

/**
 * The path as the worker will see it: what a URL parser makes of it (spaces and non-ASCII percent-encoded, `.` and
 * `..` segments resolved), which is what the worker checks. A `?` or `#` cannot be signed: it would end the path.
 */
export function requestedPath(path: string): string {
  if (/[?#]/.test(path)) throw new Error(`a /img path has no ? or #: ${path}`)
  return new URL(path, 'http://imgedge.invalid').pathname
}

/**
 * A /img path with its signature: `sig` is the base64url HMAC-SHA256, under `secret`, of the path as requested
 * (`requestedPath`), followed by `?exp=<exp>` when the URL expires at Unix time `exp`.
 *
 * @example
 * await signPath('/img/width=800/photo.jpg', secret) // '/img/width=800/photo.jpg?sig=...'
 * await signPath('/img/_/photo.jpg', secret, 1767225600) // '/img/_/photo.jpg?exp=1767225600&sig=...'
 */
export async function signPath(path: string, secret: string, exp?: number): Promise<string> {
  const requested = requestedPath(path)
  const sig = toBase64Url(await crypto.subtle.sign('HMAC', await hmacKey(secret, 'sign'), message(requested, exp)))
  return exp === undefined ? `${requested}?sig=${sig}` : `${requested}?exp=${exp}&sig=${sig}`
}

/** True when `sig` (base64url) is the signature of `path` and `exp` under `secret`; Web Crypto's verify takes the same time for any wrong one. */
export async function signatureMatches(path: string, exp: number | undefined, sig: string, secret: string): Promise<boolean> {
  const bytes = fromBase64Url(sig)
  return bytes !== undefined && crypto.subtle.verify('HMAC', await hmacKey(secret, 'verify'), bytes, message(path, exp))
}
