import pkg from '../../package.json'
import { acceptedModernFormats } from '../pipeline/negotiate'
import type { CompressOptions } from '../pipeline/options'

/** One answer of GET /img: the same options, source and (for `format=auto`) accepted formats give the same bytes. */
export interface Variant {
  /** Hash of everything but the source's version. */
  id: string
  /** True when the answer depends on Accept (`format=auto`). */
  varies: boolean
}

/** The SHA-256 of text or bytes in hex, its first `bytes` bytes (all 32 by default). */
export async function sha256Hex(data: string | Uint8Array, bytes = 32): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', typeof data === 'string' ? new TextEncoder().encode(data) : data))
  return [...digest.subarray(0, bytes)].map((byte) => byte.toString(16).padStart(2, '0')).join('')
}

/** `fff`, `#FFF` and `#ffffff` are one colour: `#rrggbb` in lower case. */
const hexColour = (text: string) => {
  const hex = text.replace(/^#/, '').toLowerCase()
  return `#${hex.length === 3 ? [...hex].map((digit) => digit + digit).join('') : hex}`
}

/** Options whose values have more than one spelling, and their one spelling in a variant. */
const CANONICAL: Partial<Record<keyof CompressOptions, (value: string) => string>> = { background: hexColour }

/**
 * The variant a request names: its parsed options (defaults filled, so `width=800,format=webp` and
 * `format=webp,width=800` are one variant; every spelling of a colour one; `format: 'json'` for the facts), the source
 * (bucket key or URL), the formats `auto` may choose from
 * Accept, and the build (package version and codec build id: a new encoder makes new bytes).
 *
 * @example
 * const variant = await variantOf(options, 'bucket:photo.jpg', accept, LEAN_BUILD)
 */
export async function variantOf(options: Readonly<Partial<Record<keyof CompressOptions, unknown>>>, source: string, accept: string, build: string): Promise<Variant> {
  const varies = options.format === 'auto'
  const normalised = Object.entries(options)
    .map(([name, value]) => [name, typeof value === 'string' ? (CANONICAL[name as keyof CompressOptions]?.(value) ?? value) : value])
    .sort(([a], [b]) => String(a).localeCompare(String(b)))
  const accepted = varies ? acceptedModernFormats(accept).join('+') || 'family' : ''
  return { id: await sha256Hex(JSON.stringify([pkg.version, build, normalised, source, accepted]), 16), varies }
}

/** The strong ETag of a variant made from one version of its source (R2's etag, an origin's ETag or Last-Modified). */
export const etagOf = async (variant: Variant, version: string): Promise<string> => `"${await sha256Hex(`${variant.id}\n${version}`, 16)}"`

/** The Cache API's key for a hash (an ETag for bucket sources, a variant's id for origins). */
export const cacheKeyOf = (hash: string): Request => new Request(`https://imgedge-cache.invalid/img/${hash.replace(/"/g, '')}`)

/** True when an If-None-Match header names this ETag (or is `*`); weak comparison, as RFC 9110 asks for If-None-Match. */
export function matchesIfNoneMatch(header: string | undefined, etag: string | null): boolean {
  if (!header || !etag) return false
  return header.split(',').some((tag) => {
    const t = tag.trim()
    return t === '*' || t.replace(/^W\//, '') === etag
  })
}
