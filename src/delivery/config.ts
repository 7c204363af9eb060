import { z } from 'zod'
import { ApiError } from '../errors'
import { perEnv } from '../lib/per-env'
import { parseOptions } from '../pipeline/parse'
import { parsePresets, type Presets } from './presets'

const optionalText = z.string().trim().transform((text) => (text === '' ? undefined : text)).optional()

/** A comma-separated list of whole numbers, sorted. */
const numberList = (name: string) =>
  z.string().transform((text, ctx) => {
    const parts = text.split(',').map((part) => part.trim()).filter(Boolean)
    if (parts.every((part) => /^\d+$/.test(part))) return parts.map(Number).sort((a, b) => a - b)
    ctx.addIssue({ code: 'custom', message: `${name}: "${text}" is not a comma-separated list of whole numbers` })
    return z.NEVER
  })

/** Next.js's default `deviceSizes` and `imageSizes`, so its loader's widths are served unsigned as they are. */
const NEXT_WIDTHS = '16,32,48,64,96,128,256,384,640,750,828,1080,1200,1920,2048,3840'

/** PRESETS, each preset's options checked as a URL's would be, so a mistake shows on the first request, not on a page. */
const presets = z.string().transform((text, ctx): Presets => {
  let name = ''
  try {
    const parsed = parsePresets(text)
    for (const [presetName, fields] of Object.entries(parsed)) {
      name = presetName
      parseOptions(fields)
    }
    return parsed
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: error instanceof ApiError ? `PRESETS: ${name}: ${error.message}` : (error as Error).message })
    return z.NEVER
  }
})

const DeliverySchema = z.object({
  /** `Cache-Control: public, max-age=` of every GET /img answer, in seconds. */
  IMG_MAX_AGE: z.coerce.number().int().min(0).default(86_400),
  /** The secret that signs /img URLs; unset, unsigned URLs are served (the local default). */
  SIGNING_KEY: optionalText,
  /** Set, a /img key is a path under this URL, fetched over HTTP(S), instead of a key in the IMAGES bucket. */
  ORIGIN_URL: optionalText.pipe(z.url({ protocol: /^https?$/ }).optional()),
  /** Hosts (`images.example.com`, `*.example.com`: HTTPS on its usual port) or origins (`http://127.0.0.1:8080`) an absolute /img source may name. */
  ALLOWED_SOURCES: z.string().default('').transform((text) => text.split(',').map((entry) => entry.trim().toLowerCase()).filter(Boolean)),
  /** Longest wait for an origin's headers, and again for its body once the conversion's turn comes, in ms. */
  ORIGIN_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  /** Named option sets, `name=option:value,...;name=...`, used as `/img/preset=<name>/...`. */
  PRESETS: presets.default({}),
  /**
   * What an unsigned /img URL may ask for: `all`, `presets` (a preset, `format`, a width of UNSIGNED_WIDTHS and a
   * quality of UNSIGNED_QUALITIES, nothing else) or `none`. Unset: `none` with SIGNING_KEY, else `all`.
   */
  UNSIGNED_URLS: z.enum(['', 'all', 'presets', 'none']).default(''),
  /** The widths an unsigned URL may name under UNSIGNED_URLS=presets; Next.js's default sizes. */
  UNSIGNED_WIDTHS: numberList('UNSIGNED_WIDTHS').prefault(NEXT_WIDTHS),
  /** The qualities an unsigned URL may name under UNSIGNED_URLS=presets; Next.js's default. */
  UNSIGNED_QUALITIES: numberList('UNSIGNED_QUALITIES').prefault('75'),
})

/** What an unsigned /img URL may name beyond `_`. */
export interface UnsignedRules {
  /** `all`: anything; `presets`: a preset, `format`, and `width` and `quality` from the lists; `none`: nothing (403). */
  mode: 'all' | 'presets' | 'none'
  widths: number[]
  qualities: number[]
}

export interface Delivery {
  maxAgeSeconds: number
  signingKey: string | undefined
  originUrl: string | undefined
  allowedSources: string[]
  originTimeoutMs: number
  presets: Presets
  unsigned: UnsignedRules
}

/**
 * GET /img's configuration: `IMG_MAX_AGE`, `ORIGIN_URL`, `ALLOWED_SOURCES`, `ORIGIN_TIMEOUT_MS`, `PRESETS` and
 * `UNSIGNED_*` from `[vars]`, `SIGNING_KEY` a secret (`wrangler secret put SIGNING_KEY`).
 *
 * @example
 * const { maxAgeSeconds, signingKey } = deliveryOf(c.env)
 */
export const deliveryOf = perEnv((env: object): Delivery => {
  const config = DeliverySchema.parse(env)
  return {
    maxAgeSeconds: config.IMG_MAX_AGE,
    signingKey: config.SIGNING_KEY,
    originUrl: config.ORIGIN_URL,
    allowedSources: config.ALLOWED_SOURCES,
    originTimeoutMs: config.ORIGIN_TIMEOUT_MS,
    presets: config.PRESETS,
    unsigned: {
      mode: config.UNSIGNED_URLS || (config.SIGNING_KEY === undefined ? 'all' : 'none'),
      widths: config.UNSIGNED_WIDTHS,
      qualities: config.UNSIGNED_QUALITIES,
    },
  }
})
