import type { Context } from 'hono'
import { CODECS, type OutputFormat } from '../codecs/registry'

export interface Outcome {
  bytes: Uint8Array
  format: OutputFormat
  input: { format: string; bytes: number; width: number; height: number }
  output: { width: number; height: number }
  /** True when the never-bigger rule answered with the input itself. */
  original: boolean
  /** Animation frames that were not converted (GIF/animated input: only the first frame is kept). */
  framesDropped: number
  timings: Record<'decode' | 'transform' | 'encode', number>
  /** Effort used after per-size caps, when a cap lowered the requested one. */
  effort: number
  /** The memory model's estimate for this conversion (see src/pipeline/limits.ts). */
  memoryEstimateMiB: number
  vary: boolean
  filename?: string | undefined
}

const ratio = (o: Outcome) => Number((o.bytes.length / o.input.bytes).toFixed(4))

/** File name for Content-Disposition: the client's name (if any) with the output's extension. */
function fileName(o: Outcome): string {
  const base = (o.filename ?? 'image').replace(/\.[^.]*$/, '').replace(/[^\w.-]+/g, '_').slice(0, 100) || 'image'
  return `${base}.${CODECS[o.format].extensions[0]}`
}

/**
 * The statistics headers every successful answer carries, in both binary and JSON form.
 * Names are listed in README "Answer headers".
 */
function statsHeaders(o: Outcome): Record<string, string> {
  const headers: Record<string, string> = {
    'X-Input-Format': o.input.format,
    'X-Input-Size': String(o.input.bytes),
    'X-Input-Width': String(o.input.width),
    'X-Input-Height': String(o.input.height),
    'X-Output-Format': o.format,
    'X-Output-Size': String(o.bytes.length),
    'X-Output-Width': String(o.output.width),
    'X-Output-Height': String(o.output.height),
    'X-Compression-Ratio': String(ratio(o)),
    'X-Effort': String(o.effort),
    'X-Memory-Estimate': `${o.memoryEstimateMiB} MiB`,
    'Server-Timing': Object.entries(o.timings)
      .map(([name, ms]) => `${name};dur=${ms.toFixed(1)}`)
      .join(', '),
    'Cache-Control': 'no-store',
  }
  if (o.original) headers['X-Original-Returned'] = 'true'
  if (o.framesDropped > 0) headers['X-Frames-Dropped'] = String(o.framesDropped)
  if (o.vary) headers['Vary'] = 'Accept'
  return headers
}

/**
 * Step 7: the answer. The image bytes with their type and statistics headers, or with
 * `Accept: application/json` / `response=json`, a JSON body with the same numbers and the image in base64.
 */
export function respond(c: Context, o: Outcome, json: boolean): Response {
  const headers = statsHeaders(o)
  const mime = CODECS[o.format].mime
  if (json) {
    return c.json(
      {
        format: o.format,
        mime,
        filename: fileName(o),
        input: o.input,
        output: { bytes: o.bytes.length, width: o.output.width, height: o.output.height },
        ratio: ratio(o),
        saved: o.input.bytes - o.bytes.length,
        original: o.original,
        framesDropped: o.framesDropped,
        effort: o.effort,
        timings: o.timings,
        image: toBase64(o.bytes),
      },
      200,
      headers,
    )
  }
  return new Response(o.bytes, {
    status: 200,
    headers: {
      ...headers,
      'Content-Type': mime,
      'Content-Length': String(o.bytes.length),
      'Content-Disposition': `inline; filename="${fileName(o)}"`,
    },
  })
}

function toBase64(bytes: Uint8Array): string {
  let binary = ''
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  }
  return btoa(binary)
}
