import pkg from '../../package.json'
import { acceptedModernFormats } from '../pipeline/negotiate'
import type { CompressOptions } from '../pipeline/options'

/** One answer of GET /img: the same options, source version and (for `format=auto`) accepted formats give the same bytes. */
export interface Variant {
  /** Strong ETag, quoted. */
  etag: string
  /** The Cache API key: a URL made from the ETag, so every part of the variant is in it. */
  cacheKey: Request
  /** True when the answer depends on Accept (`format=auto`). */
  varies: boolean
}

/**
 * The variant a request names: its parsed options (defaults filled, so `width=800,format=webp` and
 * `format=webp,width=800` are one variant), the object's key and version (R2's etag), the formats `auto` may
 * choose from Accept, and the build (package version and codec build id: a new encoder makes new bytes).
 *
 * @example
 * const { etag, cacheKey } = await variantOf(options, 'photo.jpg', object.etag, accept, buildId)
 */
export async function variantOf(options: CompressOptions, key: string, version: string, accept: string, build: string): Promise<Variant> {
  const varies = options.format === 'auto'
  const normalised = Object.entries(options).sort(([a], [b]) => a.localeCompare(b))
  const accepted = varies ? acceptedModernFormats(accept).join('+') || 'family' : ''
  const text = JSON.stringify([pkg.version, build, normalised, key, version, accepted])
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)))
  const id = [...digest.subarray(0, 16)].map((byte) => byte.toString(16).padStart(2, '0')).join('')
  return { etag: `"${id}"`, cacheKey: new Request(`https://imgedge-cache.invalid/img/${id}`), varies }
}

/** True when an If-None-Match header names this ETag (or is `*`); weak comparison, as RFC 9110 asks for If-None-Match. */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false
  return header.split(',').some((tag) => {
    const t = tag.trim()
    return t === '*' || t.replace(/^W\//, '') === etag
  })
}
