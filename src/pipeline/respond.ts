import { z } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { CODECS, type OutputFormat } from '../codecs/registry'
import { joinParts, PART_BYTES, release } from '../lib/bytes'

/** An encoded image: whole, or in the parts a row sink wrote it out in (never joined, to hold it once). */
export type Encoded = Uint8Array | Uint8Array[]

export const byteLength = (bytes: Encoded): number => (Array.isArray(bytes) ? bytes.reduce((sum, part) => sum + part.length, 0) : bytes.length)

/** The parts as one array (for the JSON answer's base64). */
export const joined = (bytes: Encoded): Uint8Array => (Array.isArray(bytes) ? joinParts(bytes) : bytes)

export interface Outcome {
  bytes: Encoded
  format: OutputFormat
  input: { format: string; bytes: number; width: number; height: number }
  output: { width: number; height: number }
  /** True when the never-bigger rule answered with the input itself. */
  original: boolean
  /** Frames in the answer: an animated WebP's, else 1. */
  frames: number
  /** Animation frames that were not converted (an animation to JPEG, PNG, AVIF, or with animated=false: the first frame is kept). */
  framesDropped: number
  timings: Record<'decode' | 'transform' | 'encode', number>
  /** Effort used after per-size caps, when a cap lowered the requested one. */
  effort: number
  /** The quality quality=auto chose or max_bytes settled on (undefined without either). */
  quality?: number | undefined
  /** quality=auto: the SSIMULACRA 2 score of the output's sample at that quality. */
  score?: number | undefined
  /** Lossy PNG: the palette's size and the quality it reached (still images). */
  palette?: { colours: number; quality: number } | undefined
  /** gravity=auto: the window kept, in pixels of the image after trim and rotation. */
  crop?: { x: number; y: number; width: number; height: number } | undefined
  /** The memory model's estimate for this conversion (see src/pipeline/limits.ts). */
  memoryEstimateMiB: number
  vary: boolean
  filename?: string | undefined
}

const Dimensions = { width: z.number().int(), height: z.number().int() }

/** The JSON answer of POST /api/compress (`Accept: application/json` or `response=json`). */
export const CompressJsonSchema = z
  .object({
    format: z.string().openapi({ description: 'Output format id.' }),
    mime: z.string(),
    filename: z.string().openapi({ description: "The client's file name (multipart) or `image`, with the output's extension." }),
    input: z.object({ format: z.string(), bytes: z.number().int(), ...Dimensions }),
    output: z.object({ bytes: z.number().int(), ...Dimensions }),
    ratio: z.number().openapi({ description: 'Output bytes / input bytes.' }),
    saved: z.number().int().openapi({ description: 'Input bytes minus output bytes.' }),
    original: z.boolean().openapi({ description: 'True when the never-bigger rule returned the input itself.' }),
    frames: z.number().int().openapi({ description: 'Frames in the answer: an animated WebP\'s (every frame of an animated GIF or WebP), else 1.' }),
    framesDropped: z.number().int().openapi({ description: 'Frames of an animation not converted (only its first frame is in the answer).' }),
    effort: z.number().int(),
    quality: z.number().int().optional().openapi({ description: 'With `quality=auto` or `max_bytes`: the quality the answer was encoded at.' }),
    score: z.number().optional().openapi({ description: "With `quality=auto`: the SSIMULACRA 2 score (0-100) of the answer at that quality, scored whole where it was checked, else of its sample." }),
    palette: z.object({ colours: z.number().int(), quality: z.number().int() }).optional().openapi({ description: 'Lossy PNG: the palette\'s size and the quality it reached.' }),
    crop: z.object({ x: z.number().int(), y: z.number().int(), ...Dimensions }).optional().openapi({ description: 'With `gravity=auto` or `face`: the window kept, in pixels of the image after EXIF orientation, trim, flip and rotate.' }),
    timings: z.object({ decode: z.number(), transform: z.number(), encode: z.number() }).openapi({ description: 'Milliseconds per step.' }),
    image: z.string().openapi({ description: 'The output image, base64-encoded.' }),
  })
  .openapi('CompressAnswer')

/**
 * Every header a successful compress answer can carry, with what it means. statsHeaders() sets only these
 * (its type says so), and /api/openapi.json documents them from this list.
 */
export const ANSWER_HEADERS = {
  'X-Input-Format': 'Format sniffed from the input bytes (jpeg, png, webp, avif, gif).',
  'X-Input-Size': 'Input size in bytes.',
  'X-Input-Width': 'Input width in pixels, after EXIF orientation.',
  'X-Input-Height': 'Input height in pixels, after EXIF orientation.',
  'X-Output-Format': 'Output format.',
  'X-Output-Size': 'Output size in bytes.',
  'X-Output-Width': 'Output width in pixels.',
  'X-Output-Height': 'Output height in pixels.',
  'X-Compression-Ratio': 'Output bytes / input bytes (0.25 = 75% smaller).',
  'X-Effort': 'Effort used, after the per-size caps (AVIF).',
  'X-Quality': 'With `quality=auto`: the quality chosen (the lowest that reaches `target`); with `max_bytes`: the highest that fits.',
  'X-Score': "With `quality=auto`: the SSIMULACRA 2 score (0-100) of the answer at X-Quality, scored whole where it was checked, else of its sample, e.g. `71.42`.",
  'X-Palette-Colors': 'Lossy PNG: the colours in its palette.',
  'X-Palette-Quality': 'Lossy PNG: the quality its palette reached (0-100, from the PSNR of a sample: (dB - 20) x 10 / 3).',
  'X-Crop': 'With `gravity=auto` or `face`: the window kept, `x,y,width,height` in pixels of the image after EXIF orientation, trim, flip and rotate (before resizing).',
  'X-Memory-Estimate': "The memory model's estimate for this conversion, e.g. `42 MiB`.",
  'X-Original-Returned': '`true` when the never-bigger rule answered with the input itself.',
  'X-Frames': 'An animated answer (an animated GIF or WebP to WebP): its frame count.',
  'X-Frames-Dropped': 'Animation frames not converted (only the first frame is kept: JPEG, PNG or AVIF output, or `animated=false`).',
  'Server-Timing': 'Milliseconds spent in `decode`, `transform` and `encode`.',
  'Cache-Control': 'Always `no-store`.',
  Vary: '`Accept` when the answer depended on it (`format=auto`, or JSON chosen by Accept).',
} as const

type AnswerHeader = keyof typeof ANSWER_HEADERS

const ratio = (o: Outcome) => Number((byteLength(o.bytes) / o.input.bytes).toFixed(4))

/** File name for Content-Disposition: the client's name (if any) with the output's extension. */
function fileName(o: Outcome): string {
  const base = (o.filename ?? 'image').replace(/\.[^.]*$/, '').replace(/[^\w.-]+/g, '_').slice(0, 100) || 'image'
  return `${base}.${CODECS[o.format].extensions[0]}`
}

/**
 * The statistics headers every successful answer carries, in both binary and JSON form.
 * Names are listed in docs/guide/endpoints.md, "Answer headers".
 */
function statsHeaders(o: Outcome): Partial<Record<AnswerHeader, string>> {
  const headers: Partial<Record<AnswerHeader, string>> = {
    'X-Input-Format': o.input.format,
    'X-Input-Size': String(o.input.bytes),
    'X-Input-Width': String(o.input.width),
    'X-Input-Height': String(o.input.height),
    'X-Output-Format': o.format,
    'X-Output-Size': String(byteLength(o.bytes)),
    'X-Output-Width': String(o.output.width),
    'X-Output-Height': String(o.output.height),
    'X-Compression-Ratio': String(ratio(o)),
    'X-Effort': String(o.effort),
    ...(o.quality !== undefined ? { 'X-Quality': String(o.quality) } : {}),
    ...(o.score !== undefined ? { 'X-Score': o.score.toFixed(2) } : {}),
    ...(o.palette ? { 'X-Palette-Colors': String(o.palette.colours), 'X-Palette-Quality': String(o.palette.quality) } : {}),
    ...(o.crop ? { 'X-Crop': `${o.crop.x},${o.crop.y},${o.crop.width},${o.crop.height}` } : {}),
    'X-Memory-Estimate': `${o.memoryEstimateMiB} MiB`,
    'Server-Timing': Object.entries(o.timings)
      .map(([name, ms]) => `${name};dur=${ms.toFixed(1)}`)
      .join(', '),
    'Cache-Control': 'no-store',
  }
  if (o.original) headers['X-Original-Returned'] = 'true'
  if (o.frames > 1) headers['X-Frames'] = String(o.frames)
  if (o.framesDropped > 0) headers['X-Frames-Dropped'] = String(o.framesDropped)
  if (o.vary) headers['Vary'] = 'Accept'
  return headers
}

/**
 * Step 7: the answer. The image bytes with their type and statistics headers, or with
 * `Accept: application/json` / `response=json`, a JSON body with the same numbers and the image in base64.
 * `shared`: other requests answer from the same outcome (GET /img's single flight), so its bytes are left whole.
 */
export function respond(c: Context, o: Outcome, json: boolean, { shared = false }: { shared?: boolean } = {}): Response {
  const headers = statsHeaders(o)
  const mime = CODECS[o.format].mime
  if (json) {
    return c.json(
      {
        format: o.format,
        mime,
        filename: fileName(o),
        input: o.input,
        output: { bytes: byteLength(o.bytes), width: o.output.width, height: o.output.height },
        ratio: ratio(o),
        saved: o.input.bytes - byteLength(o.bytes),
        original: o.original,
        frames: o.frames,
        framesDropped: o.framesDropped,
        effort: o.effort,
        ...(o.quality !== undefined ? { quality: o.quality } : {}),
        ...(o.score !== undefined ? { score: o.score } : {}),
        ...(o.palette ? { palette: o.palette } : {}),
        ...(o.crop ? { crop: o.crop } : {}),
        timings: o.timings,
        image: toBase64(joined(o.bytes)),
      } satisfies z.input<typeof CompressJsonSchema>,
      200,
      headers,
    )
  }
  const response = new Response(body(o.bytes, shared), {
    status: 200,
    headers: {
      ...headers,
      'Content-Type': mime,
      'Content-Length': String(byteLength(o.bytes)),
      'Content-Disposition': `inline; filename="${fileName(o)}"`,
    },
  })
  // The Response has its own copy of a whole array.
  if (!Array.isArray(o.bytes) && !shared) release(o.bytes)
  return response
}

/**
 * The answer's body. An image a row sink wrote out in parts (a large PNG) is streamed part by part with a
 * fixed length, so it is never joined into one array (joined, and then copied by the Response, a 21 MiB
 * PNG was held twice more). A whole array is handed to the Response as it is: streaming those too cost
 * 22 MiB more with 12 clients at once (npm run memory:steady: 140 against 118), in buffers of the stream.
 */
function body(bytes: Encoded, shared: boolean): Uint8Array | ReadableStream {
  if (!Array.isArray(bytes)) return bytes
  const { readable, writable } = new FixedLengthStream(byteLength(bytes))
  const writer = writable.getWriter()
  void (async () => {
    for (const part of bytes) {
      for (let at = 0; at < part.length; at += PART_BYTES) await writer.write(part.subarray(at, at + PART_BYTES))
      if (!shared) release(part)
    }
    await writer.close()
  })().catch(() => writer.abort().catch(() => {}))
  return readable
}

function toBase64(bytes: Uint8Array): string {
  let binary = ''
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  }
  return btoa(binary)
}
