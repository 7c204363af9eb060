import { ApiError } from '../errors'
import type { Delivery } from './config'
import { decodePart } from './url'

/** R2's longest object key, in UTF-8 bytes. */
const MAX_KEY_BYTES = 1024

/** Where a /img image comes from: a key in the IMAGES bucket, or a URL fetched over HTTP(S). */
export type Source = { kind: 'bucket'; key: string } | { kind: 'origin'; url: URL }

/**
 * The source a /img path names (`raw`: the path after the options, still percent-encoded). An absolute
 * `https://host/...` (a slash of it may have been merged away) must be on `ALLOWED_SOURCES`, or it is refused before
 * any fetch; with `ORIGIN_URL` set, anything else is a path under it; otherwise a key in the IMAGES bucket.
 *
 * @example
 * resolveSource('photos/cat.jpg', delivery) // { kind: 'bucket', key: 'photos/cat.jpg' }
 */
export function resolveSource(raw: string, delivery: Delivery): Source {
  const decoded = decodePart(raw, 'The source')
  const absolute = /^(https?):\/\/?(.*)$/i.exec(decoded)
  if (absolute) {
    const url = parseUrl(`${absolute[1]!.toLowerCase()}://${absolute[2]}`)
    if (!isAllowed(url, delivery.allowedSources)) {
      throw new ApiError('source_not_allowed', `${url.origin} is not on ALLOWED_SOURCES: absolute sources are fetched only from the hosts listed there.`, { host: url.host })
    }
    return { kind: 'origin', url }
  }
  if (decoded.split('/').some((part) => part === '..' || part === '.')) throw new ApiError('invalid_request', 'The image key may not contain . or .. segments.')
  if (delivery.originUrl === undefined) {
    if (new TextEncoder().encode(decoded).length > MAX_KEY_BYTES) throw new ApiError('invalid_request', `An R2 key is at most ${MAX_KEY_BYTES} bytes.`)
    return { kind: 'bucket', key: decoded }
  }
  // Appended to the base as text, never resolved against it: nothing in the path can name another host or user.
  const base = new URL(delivery.originUrl.endsWith('/') ? delivery.originUrl : `${delivery.originUrl}/`)
  const url = parseUrl(`${base.origin}${base.pathname}${raw}`)
  if (url.origin !== base.origin || !url.pathname.startsWith(base.pathname)) throw new ApiError('invalid_request', 'The image path must stay under ORIGIN_URL.')
  return { kind: 'origin', url }
}

/** An entry is a host (HTTPS, default port; `*.` for its subdomains) or an origin (`http://127.0.0.1:8080`). */
function isAllowed(url: URL, allowed: readonly string[]): boolean {
  return allowed.some((entry) => {
    if (entry.includes('://')) return url.origin === entry.replace(/\/+$/, '')
    if (url.protocol !== 'https:' || url.port !== '') return false
    return entry.startsWith('*.') ? url.hostname.endsWith(entry.slice(1)) : url.hostname === entry
  })
}

function parseUrl(text: string): URL {
  try {
    return new URL(text)
  } catch {
    throw new ApiError('invalid_request', `The source is not a valid URL: ${text}`)
  }
}
