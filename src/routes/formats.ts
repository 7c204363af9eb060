import { Hono } from 'hono'
import { canStreamInput } from '../../wasm'
import { CODECS } from '../codecs/registry'
import { AVIF_EFFORT_CAPS } from '../codecs/avif'
import { publishedCaps } from '../codecs/effort-caps'
import { PNG_EFFORT_CAPS } from '../codecs/png'
import { WEBP_ANIMATION_EFFORT_CAPS, WEBP_EFFORT_CAPS } from '../codecs/webp'
import { deliveryOf } from '../delivery/config'
import { cloudflareTable, NAMED_QUALITY } from '../dialects/cloudflare'
import { limitsOf } from '../env'
import { measuredMatrix } from '../lib/measured-matrix'
import { MEMORY_MODEL } from '../pipeline/limits'
import { CHECK, MAX_TRIES, SAMPLE } from '../pipeline/auto-quality'
import { CompressOptionsSchema } from '../pipeline/options'

/**
 * GET /api/formats: generated from the codec registry and the configuration, never a second list.
 */
/** What happens to colours (docs/guide/colour-metadata.md): every output sRGB without a profile, every described input converted. */
const COLOUR = {
  output: 'sRGB, no embedded profile',
  converted: {
    jpeg: 'ICC profile (APP2); CMYK and YCCK through their profile, else a generic coated-paper CMYK profile',
    png: 'iCCP; else gAMA and cHRM unless an sRGB chunk is present',
    webp: 'ICCP chunk (still images)',
    avif: 'colr ICC profile; else nclx primaries and SDR transfer (PQ and HLG left as they are)',
  },
  intent: 'perceptual (Little CMS 2.16), as sharp; the same as relative colorimetric for matrix profiles (P3, Adobe RGB)',
  metadata: 'stripped by default; the metadata option keeps EXIF Artist and Copyright (copyright) or EXIF, XMP and an RGB profile (keep)',
}

/** How quality=auto works, for /api/formats (each lossy format's `autoQuality` has its default target and range). */
const AUTO_QUALITY = {
  metric: 'SSIMULACRA 2 (0-100: 90 visually lossless, 80 very high, 70 high, 50 medium quality), as libjxl\'s tool within about 0.3 on photos',
  sample: `the output itself up to ${SAMPLE.tile * SAMPLE.count} px a side, else ${SAMPLE.count} x ${SAMPLE.count} tiles of ${SAMPLE.tile} px at full resolution, each encoded and scored on its own; the worst tile counts`,
  maxTrialEncodes: MAX_TRIES,
  check: `the answer at the quality the sample found is scored whole against the rows it was encoded from; where it misses the target or passes it by more than ${CHECK.above}, it is encoded again, at most ${CHECK.tries} more times within ${CHECK.share * 100} % of the CPU limit; left out for an output no larger than the sample (scored whole by the search), with max_bytes, for an animation, and where it would not fit the memory budget beside the conversion (the sample's score then stands)`,
  choice: 'the lowest quality whose whole answer (else sample) reaches the target; the highest tried when none does',
  calibration: 'JPEG, WebP and AVIF: the default target costs on average no more bytes than the default quality over 21 images (photos at 1600 px, full-resolution crops, grainy photos, wallpapers), with a narrower spread of scores and a better worst case, each answer scored whole (docs/notes/benchmarks.md item 36); PNG\'s is not calibrated (its default is lossless)',
}

export const formats = new Hono<{ Bindings: Env }>().get('/', (c) => {
  const limits = limitsOf(c.env)
  const { presets, unsigned } = deliveryOf(c.env)
  return c.json({
    formats: Object.values(CODECS).map((codec) => ({
      id: codec.id,
      label: codec.label,
      mime: codec.mime,
      extensions: codec.extensions,
      decode: Boolean(codec.decode),
      encode: Boolean(codec.encode),
      lossy: codec.lossy,
      lossless: codec.lossless,
      alpha: codec.alpha,
      options: codec.encode ? codec.options : {},
      ...(codec.autoQuality ? { autoQuality: codec.autoQuality } : {}),
    })),
    autoQuality: AUTO_QUALITY,
    colour: COLOUR,
    options: Object.keys(CompressOptionsSchema.shape),
    // GET /cdn-cgi/image/<options>/<source>: each Cloudflare option mapped onto the options above, not mapped yet, or refused
    cloudflare: { path: '/cdn-cgi/image/<options>/<source>', namedQuality: NAMED_QUALITY, options: cloudflareTable() },
    limits: {
      maxInputBytes: limits.maxInputBytes,
      // A PNG converted in one pass is read as it arrives (src/pipeline/stream.ts); 0 where the engine cannot (no JSPI).
      maxStreamedInputBytes: canStreamInput() ? limits.maxStreamedInputBytes : 0,
      maxInputPixels: limits.maxInputPixels,
      maxOutputPixels: limits.maxOutputPixels,
      maxAnimationFrames: limits.maxAnimationFrames,
      maxAnimationPixels: limits.maxAnimationPixels,
      maxDimension: 16384,
      memoryBudgetMiB: limits.memoryBudgetMiB,
      cpuLimitMs: limits.cpuLimitMs,
      memoryModel: MEMORY_MODEL,
      avifEffortCaps: publishedCaps(AVIF_EFFORT_CAPS),
      pngEffortCaps: publishedCaps(PNG_EFFORT_CAPS),
      webpEffortCaps: publishedCaps(WEBP_EFFORT_CAPS),
      webpAnimationEffortCaps: { lossy: publishedCaps(WEBP_ANIMATION_EFFORT_CAPS.lossy), lossless: publishedCaps(WEBP_ANIMATION_EFFORT_CAPS.lossless) },
      // What converted and what was refused, by input format and size, measured at the default limits.
      measuredMatrix: measuredMatrix(),
    },
    rateLimits: {
      windowSeconds: limits.quotas.windowSeconds,
      anonymousPerMinute: limits.quotas.anonymousPerMinute,
      plans: limits.quotas.plans,
      requireApiKey: limits.quotas.requireApiKey,
      headers: ['RateLimit-Policy', 'RateLimit', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'],
    },
    // What a page may put in unsigned GET /img URLs, so tools can build ones that pass.
    delivery: { presets, unsignedUrls: unsigned.mode, unsignedWidths: unsigned.widths, unsignedQualities: unsigned.qualities },
  })
})
