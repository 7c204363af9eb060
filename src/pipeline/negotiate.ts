import { CODECS, defaultOutputFor, type OutputFormat } from '../codecs/registry'
import type { EncodeSettings } from '../codecs/types'
import type { Limits } from '../env'
import { ApiError } from '../errors'
import { encodeSettings } from './codec'
import { checkPlan, type ConversionPlan, isAnimation, MAX_OUTPUT_DIMENSION, planConversion } from './limits'
import type { CompressOptions, RequestedFormat } from './options'
import type { ImageHeader } from './sniff'
import type { Geometry } from './transform'
import { whatFits, whatFitsText } from './what-fits'

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
 * The formats `auto` may choose beyond the input's family, from what the client lists explicitly (AVIF, WebP): the part of
 * Accept an `auto` answer depends on, so caches can key its variants by it.
 *
 * @example
 * acceptedModernFormats('image/avif,image/webp,image/apng,*\/*;q=0.8') // ['avif', 'webp']
 */
export function acceptedModernFormats(accept: string): OutputFormat[] {
  const accepted = acceptedTypes(accept)
  return (['avif', 'webp'] as const).filter((format) => accepted.has(CODECS[format].mime))
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
 * The output formats to try, best first. An explicit format is the only one. `auto` takes AVIF, then
 * WebP, when the client lists them explicitly (an `image/*` or `*\/*` wildcard does not count: old
 * clients send those without decoding AVIF), then the input's family: PNG for images that may be
 * transparent, JPEG otherwise; for an animated GIF or WebP (unless `animated=false`), WebP first, which keeps every frame. A
 * candidate that cannot hold the planned output size is left out (a 16400 px wide output is never WebP), PNG being the last resort.
 *
 * @example
 * formatCandidates('auto', header, 'image/avif,image/webp,*\/*', { width: 1600, height: 1200 }) // ['avif', 'webp', 'jpeg']
 */
export function formatCandidates(requested: RequestedFormat | undefined, header: ImageHeader, accept: string, output: OutputSize, animated = true): OutputFormat[] {
  if (requested === undefined) return [defaultOutputFor(header.format)]
  if (requested !== 'auto') return [requested]
  let modern = acceptedModernFormats(accept)
  // An animation stays one where the client takes WebP (an AVIF would be its first frame).
  if (animated && isAnimation(header) && modern.includes('webp')) modern = ['webp', ...modern.filter((format) => format !== 'webp')]
  const candidates = [...modern, familyOf(header)]
  const fitting = candidates.filter((format) => fits(format, output))
  return fitting.length > 0 ? fitting : ['png']
}

/** The chosen output: its format, resolved encoder settings, the conversion plan and its memory estimate. */
export interface OutputChoice {
  format: OutputFormat
  settings: EncodeSettings
  plan: ConversionPlan
  memoryEstimate: number
  /**
   * The plan fits only if the lean memory the isolate kept from earlier conversions is given up (left to the
   * garbage collector) rather than reused.
   */
  releaseLean: boolean
}

/**
 * Step 3: the first candidate whose plan fits the limits. With `auto`, a candidate the memory budget
 * refuses is skipped for the next (a 12 MP photo PNG asked for by a browser gets WebP when AVIF beside
 * its file would not fit, not a 422); the last candidate's refusal is the answer when none fits. An explicit format has
 * one candidate, so it is refused with the 422 that names the limit and what would fit (whatFits). A plan is checked over the codec
 * memory the isolate keeps (`leanResidentMiB`), and, only if it does not fit so, over a
 * fresh one: the same request gets the same format whatever ran before it in the isolate. With `preview` (gravity=auto's
 * pass will run: the size it would keep), a plan keeps the pass's rows for the conversion where that fits (planConversion).
 *
 * @example
 * const { format, plan } = chooseOutput(formatCandidates('auto', header, accept, geometry.canvas), header, geometry, options, limits)
 */
export function chooseOutput(
  candidates: OutputFormat[],
  header: ImageHeader,
  geometry: Geometry,
  options: CompressOptions,
  limits: Limits,
  leanResidentMiB = 0,
  preview?: { width: number; height: number } | 'decoded',
): OutputChoice {
  const faces = options.gravity === 'face'
  const explicit = options.format !== undefined && options.format !== 'auto'
  const pixels = geometry.canvas.width * geometry.canvas.height
  // Over the held memory first, then without it.
  const residents = leanResidentMiB > 0 ? [leanResidentMiB, 0] : [0]
  let refusal: unknown = new Error('no output format candidates')
  for (const format of candidates) {
    const settings = encodeSettings(format, options, pixels, explicit, isAnimation(header) ? header.frames : 1)
    for (const resident of residents) {
      const plan = planConversion(header, format, geometry, settings, limits, resident, preview, faces)
      try {
        return { format, settings, plan, memoryEstimate: checkPlan(plan, limits, resident), releaseLean: resident !== leanResidentMiB }
      } catch (error) {
        if (!(error instanceof ApiError && error.code === 'operation_too_large')) throw error
        refusal = error
      }
    }
  }
  // The last candidate's refusal names what would fit instead, so the client can ask again.
  const last = candidates[candidates.length - 1]
  if (refusal instanceof ApiError && last !== undefined) {
    const fits = whatFits(header, last, options, limits)
    throw new ApiError(refusal.code, `${refusal.message} ${whatFitsText(fits)}`, { ...refusal.extensions, fits })
  }
  throw refusal
}
