import type { Context } from 'hono'
import { z } from 'zod'
import { ApiError } from '../errors'
import { type BodyLimits, PendingBody, tooLarge } from './body'
import { type CompressOptions, CompressOptionsSchema } from './options'

export interface ParsedRequest {
  /** The image: held (a multipart field), or a raw body still to be read (convertImage reads it held or streamed). */
  bytes: Uint8Array | PendingBody
  options: CompressOptions
  /** How the image arrived: raw body or a multipart field. */
  source: 'raw' | 'multipart'
  /** The client's file name, when multipart gave one; used to name the answer. */
  filename?: string
}

/** What a body is read from: a request, or a source's answer (an R2 object, an origin's response). */
export interface BodySource {
  headers: Headers
  body: ReadableStream<Uint8Array> | null
}

/**
 * Read a request body, counting bytes as they stream in and stopping at `maxBytes`, into the isolate's
 * body buffer: the bytes are a view of it, valid until the next conversion reads its body.
 *
 * Hono's bodyLimit trusts a Content-Length when one is present; we count regardless, so neither a
 * missing nor a lying Content-Length lets a larger body through.
 */
export async function readBody(request: BodySource, maxBytes: number, timeoutMs = Number.POSITIVE_INFINITY): Promise<Uint8Array> {
  await refuseDeclaredTooLarge(request, maxBytes)
  const body = openBody(request, { maxHeldBytes: maxBytes, maxStreamedBytes: maxBytes, timeoutMs })
  return body ? body.all() : new Uint8Array(0)
}

/**
 * A body to read into the isolate's body buffer (PendingBody: its start, then all of it held or the rest streamed);
 * undefined when there is none. A declared size over `maxStreamedBytes` is refused by the caller first.
 *
 * @example
 * const body = openBody(c.req.raw, { maxHeldBytes, maxStreamedBytes, timeoutMs })
 */
export function openBody(request: BodySource, limits: BodyLimits): PendingBody | undefined {
  if (!request.body) return undefined
  const declared = Number(request.headers.get('content-length') ?? Number.NaN)
  return new PendingBody(readerInto(request.body), { ...limits, declared })
}

/**
 * A reader that fills the caller's buffer: a BYOB reader where the stream is a byte stream (a body from the
 * network), so no chunk is allocated; otherwise (a stream made in JavaScript) chunks copied in, a rest kept.
 */
function readerInto(body: ReadableStream<Uint8Array>) {
  try {
    const byob = body.getReader({ mode: 'byob' })
    return { read: (room: Uint8Array) => byob.read(room), cancel: () => byob.cancel() }
  } catch {
    const chunks = body.getReader()
    let rest: Uint8Array = new Uint8Array(0)
    return {
      async read(room: Uint8Array): Promise<ReadableStreamReadResult<Uint8Array>> {
        if (rest.length === 0) {
          const chunk = await chunks.read()
          if (chunk.done) return chunk
          rest = chunk.value
        }
        const length = Math.min(room.length, rest.length)
        room.set(rest.subarray(0, length))
        rest = rest.subarray(length)
        return { done: false, value: room.subarray(0, length) }
      },
      cancel: () => chunks.cancel(),
    }
  }
}

/** 413 for a Content-Length over the limit, before any of the body is read. */
async function refuseDeclaredTooLarge(request: BodySource, maxBytes: number): Promise<void> {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN)
  if (declared > maxBytes) {
    // Say at once that the body will not be read: wrangler dev otherwise drains it (all of it,
    // or forever if the client waits for an answer before sending) before the 413 goes out.
    await request.body?.cancel().catch(() => {})
    throw tooLarge(maxBytes)
  }
}

export { tooLarge }

/** Collect option names/values, refusing an option given twice (which of the two would win is a guess). */
export function collectFields(entries: Iterable<[string, string]>, into: Record<string, string>): void {
  for (const [name, value] of entries) {
    if (Object.hasOwn(into, name)) throw new ApiError('invalid_option', `Option "${name}" is given more than once.`, { option: name })
    into[name] = value
  }
}

/**
 * Validate option fields against the schema, turning zod's issues into one invalid_option answer. An empty value is
 * refused too: a number would read it as 0 (`brightness=` a black image, `saturation=` a grey one).
 */
export function parseOptions(fields: Record<string, string>): CompressOptions {
  const empty = Object.keys(fields).filter((name) => fields[name]!.trim() === '')
  const result = CompressOptionsSchema.safeParse(fields)
  if (result.success && empty.length === 0) return result.data
  const errors = [
    ...empty.map((option) => ({ option, message: 'an empty value (leave the option out for its default)' })),
    ...(result.success ? [] : result.error.issues.filter((issue) => !empty.includes(String(issue.path[0]))).map((issue) => describeIssue(issue))),
  ]
  throw new ApiError('invalid_option', errors.map((e) => `${e.option}: ${e.message}`).join('; '), {
    option: errors[0]?.option,
    errors,
  })
}

/** An issue as a client reads it: the option, and what its value must be (zod's own words where they are plain). */
function describeIssue(issue: z.core.$ZodIssue): { option: string; message: string } {
  if (issue.code === 'unrecognized_keys') {
    return { option: issue.keys.join(', '), message: `unknown option (known: ${Object.keys(CompressOptionsSchema.shape).join(', ')})` }
  }
  const option = issue.path.join('.') || '(options)'
  if (issue.code === 'invalid_value') return { option, message: `must be one of ${issue.values.map(String).join(', ')}` }
  if (issue.code === 'invalid_type' && issue.expected === 'number') return { option, message: 'must be a number' }
  if (issue.code === 'too_big' && issue.origin === 'number') return { option, message: `must be at most ${issue.maximum}` }
  if (issue.code === 'too_small' && issue.origin === 'number') return { option, message: `must be at least ${issue.minimum}` }
  return { option, message: issue.message }
}

/** Content types a PNG may be sent as (none is a hint too). */
const MAY_BE_PNG = /^(|image\/png|image\/apng|application\/octet-stream)$/

const RAW_TYPES = /^(image\/[a-z0-9.+-]+|application\/octet-stream)$/i

/**
 * Step 1, from the headers alone, before the request waits for its turn: a declared Content-Length over
 * the limit, a Content-Type that is neither an image nor a form, and, for a raw body, the options in
 * the query string. Anything it refuses is refused without queuing and without reading the body.
 *
 * @example
 * await checkRequestHead(c, limits.maxInputBytes, limits.maxStreamedInputBytes)
 */
export async function checkRequestHead(c: Context, maxBytes: number, maxStreamedBytes = maxBytes): Promise<void> {
  const type = contentTypeOf(c)
  // A raw body that may be a PNG (its first bytes say; the type is not trusted for that) may be read as it arrives, so
  // its cap is the larger one; a body typed as another image is refused at once over the held cap, as before.
  await refuseDeclaredTooLarge(c.req.raw, MAY_BE_PNG.test(type) ? maxStreamedBytes : maxBytes)
  if (type !== 'multipart/form-data') {
    refuseType(type)
    parseOptions(queryFields(c))
  }
}

const contentTypeOf = (c: Context) => (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase()

function queryFields(c: Context): Record<string, string> {
  const fields: Record<string, string> = {}
  collectFields(new URL(c.req.url).searchParams.entries(), fields)
  return fields
}

function refuseType(type: string): void {
  if (type !== '' && !RAW_TYPES.test(type)) {
    throw new ApiError(
      'unsupported_media_type',
      `Content-Type ${type} is not accepted: send the image as the raw body (image/* or application/octet-stream) or as multipart/form-data field "image".`,
    )
  }
}

/**
 * Step 1 of the pipeline: the image bytes and the validated options, from either a raw body
 * (`Content-Type: image/*` or `application/octet-stream`) or `multipart/form-data` field `image`.
 *
 * @example
 * const { bytes, options } = await parseRequest(c, limits.maxInputBytes, limits.bodyTimeoutMs, limits.maxStreamedInputBytes)
 */
export async function parseRequest(c: Context, maxBytes: number, timeoutMs?: number, maxStreamedBytes = maxBytes): Promise<ParsedRequest> {
  const fields = queryFields(c)
  const type = contentTypeOf(c)

  if (type === 'multipart/form-data') {
    const body = await readBody(c.req.raw, maxBytes, timeoutMs)
    let form: FormData
    try {
      form = await new Request(c.req.url, { method: 'POST', headers: c.req.raw.headers, body }).formData()
    } catch {
      throw new ApiError('invalid_request', 'The multipart/form-data body could not be parsed.')
    }
    const images = form.getAll('image')
    if (images.length > 1) throw new ApiError('invalid_request', 'Send exactly one "image" field.')
    const file = images[0]
    if (file === undefined) throw new ApiError('missing_image', 'The multipart body has no "image" field.')
    const rest: Array<[string, string]> = []
    for (const [name, value] of form.entries()) {
      if (name === 'image') continue
      if (typeof value !== 'string') throw new ApiError('invalid_option', `Field "${name}" must be text, not a file.`, { option: name })
      rest.push([name, value])
    }
    collectFields(rest, fields)
    const bytes = typeof file === 'string' ? new TextEncoder().encode(file) : new Uint8Array(await file.arrayBuffer())
    if (bytes.length === 0) throw new ApiError('missing_image', 'The "image" field is empty.')
    return {
      bytes,
      options: parseOptions(fields),
      source: 'multipart',
      ...(typeof file !== 'string' && file.name ? { filename: file.name } : {}),
    }
  }

  refuseType(type)
  const options = parseOptions(fields)
  const body = openBody(c.req.raw, { maxHeldBytes: maxBytes, maxStreamedBytes, timeoutMs: timeoutMs ?? Number.POSITIVE_INFINITY })
  if (!body || (await body.head(1)).length === 0) throw new ApiError('missing_image', 'The request body is empty: send the image bytes.')
  return { bytes: body, options, source: 'raw' }
}
