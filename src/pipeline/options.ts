import { z } from '@hono/zod-openapi'
import { OUTPUT_FORMATS } from '../codecs/registry'
import { isFound } from './found-gravity'

const flag = z
  .enum(['true', 'false', '1', '0'])
  .transform((value) => value === 'true' || value === '1')

const dimension = z.coerce.number().int().min(1).max(16384)

const SIDES = { center: [0.5, 0.5], centre: [0.5, 0.5], top: [0.5, 0], bottom: [0.5, 1], left: [0, 0.5], right: [1, 0.5], 'top-left': [0, 0], 'top-right': [1, 0], 'bottom-left': [0, 1], 'bottom-right': [1, 1] } as const
const FOCAL = /^(0(?:\.\d+)?|1(?:\.0*)?|\.\d+)x(0(?:\.\d+)?|1(?:\.0*)?|\.\d+)$/

/**
 * Where a crop is placed: a focal point as fractions of the image (0x0 its top left), `auto` (src/pipeline/smartcrop.ts)
 * or `face` (src/pipeline/faces.ts).
 */
export type Gravity = { x: number; y: number } | 'auto' | 'face'

const gravity = z
  .string()
  .refine((value) => isFound(value) || Object.hasOwn(SIDES, value) || FOCAL.test(value), 'must be center, a side (top, bottom, left, right), a corner (top-left, ...), auto, face, or a focal point XxY as fractions such as 0.5x0.2')
  .transform((value): Gravity => {
    if (isFound(value)) return value
    const side = SIDES[value as keyof typeof SIDES]
    const [x, y] = side ?? value.split('x').map(Number)
    return { x: x!, y: y! }
  })

/** `trim`: pixels cut from each edge (before any rotation), or a uniform border found in the pixels with a tolerance (0-255). */
export type Trim = { top: number; right: number; bottom: number; left: number } | { border: number }

const trim = z
  .string()
  .regex(/^(border(:(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))?|\d{1,5};\d{1,5};\d{1,5};\d{1,5})$/, 'must be top;right;bottom;left in pixels (such as 10;0;10;0), border, or border:<tolerance 0-255>')
  .transform((value): Trim => {
    if (value.startsWith('border')) return { border: Number(value.split(':')[1] ?? DEFAULT_BORDER_TOLERANCE) }
    const [top, right, bottom, left] = value.split(';').map(Number)
    return { top: top!, right: right!, bottom: bottom!, left: left! }
  })

/** A colour adjustment's factor, 1 for unchanged (Cloudflare's meaning), applied after resizing and filters. */
const factor = (description: string, min = 0) =>
  z.coerce.number().min(min).max(10).optional().openapi({ type: 'number', minimum: min, maximum: 10, description: `${description} Range ${min}-10.` })

/** trim=border's tolerance: how far (largest channel difference, 0-255) a pixel may be from the border's colour and still be border. */
export const DEFAULT_BORDER_TOLERANCE = 10

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
  gravity: gravity
    .default({ x: 0.5, y: 0.5 })
    .openapi({ type: 'string', default: 'center', description: 'With fit=cover: which part of the image the crop keeps. `center`, a side (`top`, `bottom`, `left`, `right`), a corner (`top-left`, `top-right`, `bottom-left`, `bottom-right`), a focal point `XxY` as fractions of the image (`0.5x0.2`: the middle, a fifth from the top; the crop is centred on it as far as the edges allow), `auto`: the window whose edges, saturated and skin-like colours draw the eye most, found on a small preview, or `face`: the window centred on the faces a face detector finds on that preview (as `auto` where it finds none). `X-Crop` says the window, in pixels of the image after trim and rotation.' }),
  trim: trim
    .optional()
    .openapi({ type: 'string', description: 'Cut before resizing and rotating (after EXIF orientation): `top;right;bottom;left` in pixels (`20;0;20;0`), or `border`: a uniform border, the colour of the top-left pixel within a tolerance (`border:<0-255>`, default 10), found in the pixels.' }),
  rotate: z
    .enum(['0', '90', '180', '270'])
    .transform(Number)
    .optional()
    .openapi({ type: 'string', enum: ['0', '90', '180', '270'], description: 'Turn clockwise by this many degrees, after EXIF orientation and `flip`; `width` and `height` are those of the turned image.' }),
  flip: z.enum(['h', 'v', 'hv']).optional().openapi({ description: 'Mirror: `h` left to right, `v` top to bottom, `hv` both; before `rotate`.' }),
  dpr: z.coerce
    .number()
    .min(1)
    .max(4)
    .optional()
    .openapi({ type: 'number', minimum: 1, maximum: 4, description: 'Device pixel ratio 1-4: multiplies `width` and `height` (still never larger than the input without `enlarge`).' }),
  enlarge: flag.default(false).openapi({ default: 'false', description: 'Allow output larger than the input.' }),
  sharpen: z.coerce
    .number()
    .min(0)
    .max(10)
    .optional()
    .openapi({ type: 'number', minimum: 0, maximum: 10, description: 'Sharpen 0-10 after resizing (an unsharp mask of 1 px; 1 suits a downscaled photo).' }),
  blur: z.coerce
    .number()
    .min(1)
    .max(250)
    .optional()
    .openapi({ type: 'number', minimum: 1, maximum: 250, description: 'Gaussian blur 1-250 after resizing, in output pixels (sigma = blur / 2, as Cloudflare\'s); `sharpen` is then ignored. A small image with blur makes a cheap placeholder.' }),
  brightness: factor('Brightness: each colour multiplied (1 unchanged, 0.5 half, 2 double).'),
  contrast: factor('Contrast: colours stretched away from mid-grey (1 unchanged, 0.5 flat, 2 strong).'),
  gamma: factor('Gamma: colours raised to 1 / gamma (1 unchanged, 0.5 darker, 2 lighter).', 0.1),
  saturation: factor('Saturation: colours moved away from their grey (1 unchanged, 0 grey, 2 double).'),
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
