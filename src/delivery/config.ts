import { z } from 'zod'
import { perEnv } from '../lib/per-env'

const optionalText = z.string().trim().transform((text) => (text === '' ? undefined : text)).optional()

const DeliverySchema = z.object({
  /** `Cache-Control: public, max-age=` of every GET /img answer, in seconds. */
  IMG_MAX_AGE: z.coerce.number().int().min(0).default(86_400),
  /** The secret that signs /img URLs; unset, unsigned URLs are served (the local default). */
  SIGNING_KEY: optionalText,
  /** Set, a /img key is a path under this URL, fetched over HTTP(S), instead of a key in the IMAGES bucket. */
  ORIGIN_URL: optionalText.pipe(z.url({ protocol: /^https?$/ }).optional()),
  /** Hosts (`images.example.com`, `*.example.com`: HTTPS on its usual port) or origins (`http://127.0.0.1:8080`) an absolute /img source may name. */
  ALLOWED_SOURCES: z.string().default('').transform((text) => text.split(',').map((entry) => entry.trim().toLowerCase()).filter(Boolean)),
  /** Longest wait for an origin's answer, body included, in ms. */
  ORIGIN_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
})

export interface Delivery {
  maxAgeSeconds: number
  signingKey: string | undefined
  originUrl: string | undefined
  allowedSources: string[]
  originTimeoutMs: number
}

/**
 * GET /img's configuration: `IMG_MAX_AGE`, `ORIGIN_URL`, `ALLOWED_SOURCES` and `ORIGIN_TIMEOUT_MS` from `[vars]`,
 * `SIGNING_KEY` a secret (`wrangler secret put SIGNING_KEY`).
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
  }
})
