import { z } from 'zod'
import { perEnv } from './lib/per-env'

const positiveInt = z.coerce.number().int().positive()
const count = z.coerce.number().int().min(0)
const flag = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1')

/**
 * Plans for API keys as `name=perMinute` pairs, comma-separated (`free=120,pro=1200`): a string, so
 * `wrangler dev --var RATE_LIMIT_PLANS:pro=5000` can override it like any other var. 0 means unlimited.
 */
const plans = z
  .string()
  .transform((text, ctx) => {
    const out: Record<string, number> = {}
    for (const pair of text.split(',').map((p) => p.trim()).filter(Boolean)) {
      const match = /^([a-z][a-z0-9_-]*)=(\d+)$/i.exec(pair)
      if (!match) {
        ctx.addIssue({ code: 'custom', message: `RATE_LIMIT_PLANS: "${pair}" is not name=perMinute` })
        return z.NEVER
      }
      out[match[1]!] = Number(match[2])
    }
    return out
  })

/**
 * Service configuration, read from `[vars]` in wrangler.toml (override with `wrangler dev --var NAME:VALUE`).
 * Parsed once per isolate; /api/formats publishes the same object so documentation cannot drift.
 */
const ConfigSchema = z.object({
  /** Largest request body, in bytes, enforced while streaming. */
  MAX_INPUT_BYTES: positiveInt.default(25 * 1024 * 1024),
  /**
   * Largest PNG request body, in bytes, when it is read as the decoder asks for it (not held: its bytes cost no
   * memory). Workers accept request bodies up to 100 MB on the Free and Pro plans; a 50 MP photo PNG is about 89 MB.
   */
  MAX_STREAMED_INPUT_BYTES: positiveInt.default(100_000_000),
  /**
   * Largest input, in pixels (width x height from the file header): a safety net refused before anything else (a
   * 50 MP camera's photo is under it). What a conversion of a large image may produce is the memory model's call
   * (MEMORY_BUDGET_MIB): a 24 MP JPEG scaled to 1600 px decodes a quarter of its pixels.
   */
  MAX_INPUT_PIXELS: positiveInt.default(50_000_000),
  /** Largest output, in pixels (after resize/enlarge); the memory model decides below it. */
  MAX_OUTPUT_PIXELS: positiveInt.default(25_000_000),
  /** Most frames an animation converted to an animated WebP may have (a GIF of 10,000 tiny frames is refused from its header). */
  MAX_ANIMATION_FRAMES: positiveInt.default(1000),
  /**
   * Most pixels an animation converted to an animated WebP may have in all: frames x the larger of its canvas and the
   * output (100 frames of 1280x720 is 92 MP). Each frame is decoded and encoded whole, so this bounds the CPU time.
   */
  MAX_ANIMATION_PIXELS: positiveInt.default(100_000_000),
  /** Peak memory, in MiB, one conversion may be estimated to need (see MEMORY_MODEL); the isolate has 128 MB. */
  MEMORY_BUDGET_MIB: positiveInt.default(120),
  /**
   * The CPU time, in ms, a request may use: wrangler.toml's `limits.cpu_ms` (the platform kills a request past it).
   * max_bytes stops trying lower qualities before its trials would take the conversion past 80 % of it.
   */
  CPU_LIMIT_MS: positiveInt.default(30_000),
  /** Longest wait, in ms, for this isolate's single conversion slot before answering 503. */
  QUEUE_TIMEOUT_MS: positiveInt.default(20_000),
  /**
   * Longest time, in ms, a request's body may take to arrive once the request holds the conversion slot
   * (bodies are read only then, so a queue holds no image bytes): a stalled upload then answers 408
   * instead of keeping the slot from every request behind it.
   */
  BODY_TIMEOUT_MS: positiveInt.default(30_000),
  /** Compress calls a minute per client IP without an API key; 0 turns limiting off. */
  RATE_LIMIT_ANON_PER_MINUTE: count.default(60),
  /** Per-minute limits of the plans an API key can be on. */
  RATE_LIMIT_PLANS: plans.default({ free: 120, pro: 1200 }),
  /** Refuse calls without an API key (401). */
  REQUIRE_API_KEY: flag.default(false),
  /** Origins whose pages may call the API from a browser: `*` (any), or a comma-separated list. */
  CORS_ORIGINS: z.string().default('*').transform((text) => text.split(',').map((o) => o.trim()).filter(Boolean)),
  /** Serve without counting when the rate limiter cannot be reached, instead of answering 503. */
  RATE_LIMIT_FAIL_OPEN: flag.default(false),
})

export type Config = z.infer<typeof ConfigSchema>

/** Compress-call quotas: who gets how many calls per window. */
export interface Quotas {
  /** Length of the sliding window every limit counts over. */
  windowSeconds: number
  /** Limit for clients without a key, per IP; 0 = unlimited. */
  anonymousPerMinute: number
  /** Limit per plan name for clients with a key; 0 = unlimited. */
  plans: Record<string, number>
  requireApiKey: boolean
  failOpen: boolean
}

export interface Limits {
  maxInputBytes: number
  /** A PNG body read as it arrives (MAX_STREAMED_INPUT_BYTES, never below maxInputBytes). */
  maxStreamedInputBytes: number
  maxInputPixels: number
  maxOutputPixels: number
  maxAnimationFrames: number
  maxAnimationPixels: number
  memoryBudgetMiB: number
  cpuLimitMs: number
  queueTimeoutMs: number
  bodyTimeoutMs: number
  /** Browser origins allowed to call the API; `['*']` allows any. */
  corsOrigins: string[]
  quotas: Quotas
}

/**
 * The service limits and quotas for this environment, parsed and validated once per `env` object. The
 * one source of truth for what the API enforces and what /api/formats and the reference page publish.
 *
 * @example
 * const { maxInputBytes, quotas } = limitsOf(c.env)
 */
export const limitsOf = perEnv((env: Partial<Record<keyof Config, unknown>>): Limits => {
  const config = ConfigSchema.parse(env)
  return {
    maxInputBytes: config.MAX_INPUT_BYTES,
    maxStreamedInputBytes: Math.max(config.MAX_INPUT_BYTES, config.MAX_STREAMED_INPUT_BYTES),
    maxInputPixels: config.MAX_INPUT_PIXELS,
    maxOutputPixels: config.MAX_OUTPUT_PIXELS,
    maxAnimationFrames: config.MAX_ANIMATION_FRAMES,
    maxAnimationPixels: config.MAX_ANIMATION_PIXELS,
    memoryBudgetMiB: config.MEMORY_BUDGET_MIB,
    cpuLimitMs: config.CPU_LIMIT_MS,
    queueTimeoutMs: config.QUEUE_TIMEOUT_MS,
    bodyTimeoutMs: config.BODY_TIMEOUT_MS,
    corsOrigins: config.CORS_ORIGINS,
    quotas: {
      windowSeconds: 60,
      anonymousPerMinute: config.RATE_LIMIT_ANON_PER_MINUTE,
      plans: config.RATE_LIMIT_PLANS,
      requireApiKey: config.REQUIRE_API_KEY,
      failOpen: config.RATE_LIMIT_FAIL_OPEN,
    },
  }
})
