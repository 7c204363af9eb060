import { CODECS, defaultOutputFor, type OutputFormat } from '../codecs/registry'
import type { ImageHeader } from './sniff'
import type { RequestedFormat } from './options'

/** Media types listed in an Accept header with q > 0 (wildcards are ignored on purpose: see below). */
function acceptedTypes(accept: string): Set<string> {
  const types = new Set<string>()
  for (const part of accept.split(',')) {
    const [type, ...params] = part.trim().toLowerCase().split(';')
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='))
    if (type && !(q && Number(q.slice(2)) === 0)) types.add(type.trim())
  }
  return types
}

/**
 * Choose the output format. `auto` takes AVIF, then WebP, when the client lists them explicitly
 * (an `image/*` or `*\/*` wildcard does not count: old clients send those without decoding AVIF),
 * else stays in the input's family: PNG for images that may be transparent, JPEG otherwise.
 *
 * @example
 * chooseFormat('auto', header, 'image/avif,image/webp,*\/*') // 'avif'
 */
export function chooseFormat(requested: RequestedFormat | undefined, header: ImageHeader, accept: string): OutputFormat {
  if (requested === undefined) return defaultOutputFor(header.format)
  if (requested !== 'auto') return requested
  const accepted = acceptedTypes(accept)
  for (const format of ['avif', 'webp'] as const) {
    if (accepted.has(CODECS[format].mime)) return format
  }
  if (header.format === 'jpeg') return 'jpeg'
  if (header.format === 'png' || header.format === 'gif') return 'png'
  return header.hasAlpha === false ? 'jpeg' : 'png'
}
