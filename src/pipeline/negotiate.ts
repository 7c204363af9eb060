import { CODECS, defaultOutputFor, type OutputFormat } from '../codecs/registry'
import { MAX_OUTPUT_DIMENSION } from './limits'
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

/** The planned output size, known after the geometry step. */
export interface OutputSize {
  width: number
  height: number
}

/** True when `format` can store an image of this size (WebP stops at 16383 px a side, JPEG at 65500). */
function fits(format: OutputFormat, { width, height }: OutputSize): boolean {
  const max = MAX_OUTPUT_DIMENSION[format]
  return max === undefined || (width <= max && height <= max)
}

/** The input's family: JPEG for JPEG, PNG for PNG and GIF, and for WebP/AVIF PNG unless it has no alpha. */
function familyOf(header: ImageHeader): OutputFormat {
  if (header.format === 'jpeg') return 'jpeg'
  if (header.format === 'png' || header.format === 'gif') return 'png'
  return header.hasAlpha === false ? 'jpeg' : 'png'
}

/**
 * Choose the output format. `auto` takes AVIF, then WebP, when the client lists them explicitly
 * (an `image/*` or `*\/*` wildcard does not count: old clients send those without decoding AVIF),
 * else stays in the input's family: PNG for images that may be transparent, JPEG otherwise. With
 * `auto`, a candidate that cannot hold the planned output size is skipped (a 16400 px wide output
 * is never WebP), PNG being the last resort; an explicit format is kept, and the limits refuse it.
 *
 * @example
 * chooseFormat('auto', header, 'image/avif,image/webp,*\/*', { width: 1600, height: 1200 }) // 'avif'
 */
export function chooseFormat(requested: RequestedFormat | undefined, header: ImageHeader, accept: string, output: OutputSize): OutputFormat {
  if (requested === undefined) return defaultOutputFor(header.format)
  if (requested !== 'auto') return requested
  const accepted = acceptedTypes(accept)
  const candidates = (['avif', 'webp'] as const).filter((format) => accepted.has(CODECS[format].mime))
  return [...candidates, familyOf(header)].find((format) => fits(format, output)) ?? 'png'
}
