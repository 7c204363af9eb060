import { z } from '@hono/zod-openapi'
import { OUTPUT_FORMATS } from '../codecs/registry'

const flag = z
  .enum(['true', 'false', '1', '0'])
  .transform((value) => value === 'true' || value === '1')

const dimension = z.coerce.number().int().min(1).max(16384)

/**
 * The options of POST /api/compress, as query parameters or multipart form fields of the same names.
 * Unknown names are an error: an option a client misspells must not be silently ignored.
 * This schema validates requests and generates the OpenAPI document, so the two cannot drift.
 */
export const CompressOptionsSchema = z.strictObject({
  format: z
    .enum([...OUTPUT_FORMATS, 'jpg', 'auto'])
    .transform((value) => (value === 'jpg' ? 'jpeg' : value))
    .optional()
    .openapi({ description: "Output format; default: the input's (GIF becomes PNG). `auto` picks from Accept: AVIF, WebP, then the input's family, the first that fits the limits." }),
  quality: z
    .union([z.literal('auto'), z.coerce.number().int().min(1).max(100)])
    .optional()
    .openapi({
      description:
        "Lossy quality 1-100; defaults per format in /api/formats. With format=png: the palette's target (lossy PNG: the fewest colours that reach it). `auto`: the lowest quality whose output reaches a perceptual `target` (SSIMULACRA 2), searched per image on a sample of it (up to 6 trial encodes), then the answer checked whole and encoded again where it misses (up to 3 more encodes); `X-Quality` and `X-Score` say what was chosen.",
    }),
  target: z.coerce
    .number()
    .min(10)
    .max(95)
    .optional()
    .openapi({ type: 'number', minimum: 10, maximum: 95, description: 'With quality=auto: the SSIMULACRA 2 score to reach (90 visually lossless, 80 very high, 70 high, 50 medium quality). Default per format in /api/formats (`autoQuality.target`): for JPEG, WebP and AVIF calibrated to cost on average no more bytes than the default quality over a mixed set of photos and graphics, spent where the image needs them.' }),
  lossless: flag.optional().openapi({ description: 'Lossless encoding (PNG always; WebP and AVIF on request).' }),
  effort: z.coerce.number().int().min(0).max(9).optional().openapi({ type: 'integer', minimum: 0, maximum: 9, description: 'CPU effort 0-9, one scale over every encoder (default 4; AVIF capped by size).' }),
  width: dimension.optional().openapi({ description: 'Target width in pixels; resampled with Lanczos3 (colour weighted by alpha).' }),
  height: dimension.optional().openapi({ description: 'Target height in pixels.' }),
  fit: z.enum(['inside', 'cover', 'contain', 'fill', 'crop']).default('inside').openapi({ description: 'How to fit width x height. `crop` (Cloudflare\'s): as `cover`, never enlarged, and an image smaller than the box on a side keeps that side whole instead of being cropped to the box\'s aspect ratio.' }),
  enlarge: flag.default(false).openapi({ default: 'false', description: 'Allow output larger than the input.' }),
  background: z
    .string()
    .regex(/^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/, 'must be a hex colour such as ffffff or #fff')
    .default('#ffffff')
    .openapi({ description: 'Colour behind transparent pixels when the output has no alpha (JPEG) and for `contain` padding.' }),
  colors: z.coerce
    .number()
    .int()
    .min(2)
    .max(256)
    .optional()
    .openapi({ type: 'integer', minimum: 2, maximum: 256, description: 'PNG only: a palette of at most this many colours (lossy PNG; with `quality`, the fewest that reach it).' }),
  max_bytes: z.coerce
    .number()
    .int()
    .min(100)
    .max(100 * 1024 * 1024)
    .optional()
    .openapi({ type: 'integer', minimum: 100, description: 'Largest answer in bytes: the quality (given or default) is lowered to the highest that fits, by bisection (up to 7 more encodes, none started that would take the conversion past 80 % of CPU_LIMIT_MS); 422 max_bytes_unreachable when none tried fits. Lossy outputs only; `X-Quality` says the quality used.' }),
  animated: flag
    .default(true)
    .openapi({ default: 'true', description: 'An animated GIF or WebP to WebP keeps every frame, its delay and the loop count (an animated WebP; a flat-colour GIF at the default quality comes back lossless where that is smaller); `false` keeps the first frame only, as JPEG, PNG and AVIF output always do (`X-Frames-Dropped`).' }),
  metadata: z
    .enum(['none', 'copyright', 'keep'])
    .default('none')
    .openapi({ description: "What the answer carries besides pixels: `none`; `copyright` (EXIF Artist and Copyright); `keep` (EXIF with orientation 1, XMP, and an RGB ICC profile, the pixels then left in its colours). Read from JPEG, PNG and still WebP inputs." }),
  response: z.enum(['image', 'json']).optional().openapi({ description: 'json: a JSON answer with the image base64-encoded.' }),
})

export type CompressOptions = z.output<typeof CompressOptionsSchema>
export type RequestedFormat = NonNullable<CompressOptions['format']>
