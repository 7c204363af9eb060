import { z } from 'zod'

const positiveInt = z.coerce.number().int().positive()

/**
 * Service configuration, read from `[vars]` in wrangler.toml (override with `wrangler dev --var NAME:VALUE`).
 * Parsed once per isolate; /api/formats publishes the same object so documentation cannot drift.
 */
const ConfigSchema = z.object({
  /** Largest request body, in bytes, enforced while streaming. */
  MAX_INPUT_BYTES: positiveInt.default(25 * 1024 * 1024),
  /** Largest input, in pixels (width x height from the file header). */
  MAX_INPUT_PIXELS: positiveInt.default(16_000_000),
  /** Largest output, in pixels (after resize/enlarge). */
  MAX_OUTPUT_PIXELS: positiveInt.default(16_000_000),
  /** Peak memory, in MiB, one conversion may be estimated to need (see MEMORY_MODEL); the isolate has 128 MB. */
  MEMORY_BUDGET_MIB: positiveInt.default(120),
  /** Longest wait, in ms, for this isolate's single conversion slot before answering 503. */
  QUEUE_TIMEOUT_MS: positiveInt.default(20_000),
})

export type Config = z.infer<typeof ConfigSchema>

export interface Limits {
  maxInputBytes: number
  maxInputPixels: number
  maxOutputPixels: number
  memoryBudgetMiB: number
  queueTimeoutMs: number
}

const cache = new WeakMap<object, Limits>()

/**
 * The service limits for this environment, parsed and validated once per `env` object.
 *
 * @example
 * const { maxInputBytes } = limitsOf(c.env)
 */
export function limitsOf(env: Partial<Record<keyof Config, unknown>>): Limits {
  let limits = cache.get(env)
  if (!limits) {
    const config = ConfigSchema.parse(env)
    limits = {
      maxInputBytes: config.MAX_INPUT_BYTES,
      maxInputPixels: config.MAX_INPUT_PIXELS,
      maxOutputPixels: config.MAX_OUTPUT_PIXELS,
      memoryBudgetMiB: config.MEMORY_BUDGET_MIB,
      queueTimeoutMs: config.QUEUE_TIMEOUT_MS,
    }
    cache.set(env, limits)
  }
  return limits
}
