import { z } from 'zod'

const DeliverySchema = z.object({
  /** `Cache-Control: public, max-age=` of every GET /img answer, in seconds. */
  IMG_MAX_AGE: z.coerce.number().int().min(0).default(86_400),
  /** The secret that signs /img URLs; unset, unsigned URLs are served (the local default). */
  SIGNING_KEY: z.string().min(1).optional(),
})

export interface Delivery {
  maxAgeSeconds: number
  signingKey: string | undefined
}

const parsed = new WeakMap<object, Delivery>()

/**
 * GET /img's configuration: `IMG_MAX_AGE` from `[vars]`, `SIGNING_KEY` a secret (`wrangler secret put SIGNING_KEY`).
 *
 * @example
 * const { maxAgeSeconds, signingKey } = deliveryOf(c.env)
 */
export function deliveryOf(env: object): Delivery {
  let delivery = parsed.get(env)
  if (!delivery) {
    const config = DeliverySchema.parse(env)
    delivery = { maxAgeSeconds: config.IMG_MAX_AGE, signingKey: config.SIGNING_KEY }
    parsed.set(env, delivery)
  }
  return delivery
}
