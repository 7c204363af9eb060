import { HTTPException } from 'hono/http-exception'
import type { ContentfulStatusCode } from 'hono/utils/http-status'

/**
 * Every error the API can answer with. The `code` is the stable, documented identifier clients
 * branch on; `title` is the short public text; the status is fixed per code so a code always
 * means the same HTTP answer; `when` says what causes it. /api/openapi.json (and so the reference page)
 * publishes this map; a test checks docs/guide/limits-errors.md lists every code.
 */
export const ERRORS = {
  missing_image: { status: 400, title: 'No image in the request', when: 'empty body, or multipart without an `image` field (or with an empty one)' },
  invalid_option: { status: 400, title: 'Invalid option', when: 'unknown option, option given twice, value out of range, or an option the output format cannot use' },
  unsupported_option: { status: 400, title: 'Option not supported', when: 'GET /cdn-cgi/image: a Cloudflare option imgedge does not map (yet); has `option` and `status` (`not mapped yet` or `refused`), listed in /api/formats `cloudflare`' },
  invalid_request: { status: 400, title: 'Malformed request', when: 'a multipart body that cannot be parsed, more than one `image` field, or a body cut off before its end' },
  api_key_required: { status: 401, title: 'API key required', when: '`REQUIRE_API_KEY=true` and the call has no key; has `WWW-Authenticate`' },
  invalid_api_key: { status: 401, title: 'Invalid API key', when: 'the key in `Authorization: Bearer` or `X-API-Key` matches no configured key; has `WWW-Authenticate`' },
  signature_required: { status: 403, title: 'Signature required', when: 'GET /img without `sig` under `UNSIGNED_URLS=none` (the default once the secret `SIGNING_KEY` is set)' },
  invalid_signature: { status: 403, title: 'Invalid signature', when: 'GET /img whose `sig` is not the HMAC of its path (and `exp`) under `SIGNING_KEY`: the URL was changed or signed with another key' },
  unsigned_not_allowed: { status: 403, title: 'Unsigned URL not allowed', when: 'GET /img without `sig` under `UNSIGNED_URLS=presets` names an option other than `preset`, `format`, a `width` of `UNSIGNED_WIDTHS` or a `quality` of `UNSIGNED_QUALITIES`; has `option`, `presets`, `widths` and `qualities`' },
  source_not_allowed: { status: 403, title: 'Source not allowed', when: 'GET /img names an absolute URL whose host is not on `ALLOWED_SOURCES`; nothing is fetched; has `host`' },
  signature_expired: { status: 403, title: 'Signed URL expired', when: 'GET /img with a valid `sig` whose `exp` (Unix time) has passed; has `expires`' },
  not_found: { status: 404, title: 'Not found', when: 'no such route' },
  source_not_found: { status: 404, title: 'Source image not found', when: 'GET /img names a key that is not in the `IMAGES` bucket, or an origin answered 404 or 410' },
  method_not_allowed: { status: 405, title: 'Method not allowed', when: 'a known path with another method; has `Allow`' },
  body_timeout: { status: 408, title: 'Request body too slow', when: 'the body did not finish arriving within `BODY_TIMEOUT_MS` once the request\'s turn to convert came (a request holds the isolate\'s conversion slot while its body is read)' },
  payload_too_large: { status: 413, title: 'Request body too large', when: 'body over `MAX_INPUT_BYTES` (a PNG read as it arrives: `MAX_STREAMED_INPUT_BYTES`), counted while streaming (with or without Content-Length)' },
  unsupported_media_type: { status: 415, title: 'Unsupported request Content-Type', when: 'a Content-Type other than `image/*`, `application/octet-stream` or `multipart/form-data`' },
  unsupported_format: { status: 415, title: 'Unsupported image format', when: 'the bytes are not JPEG, PNG, WebP, AVIF or GIF (`detected` names what they are)' },
  image_too_large: { status: 422, title: 'Image dimensions over the limit', when: 'header dimensions over `MAX_INPUT_PIXELS` (`fits`: the largest `width` and `height` of its aspect ratio under it), a planned output over `MAX_OUTPUT_PIXELS`, an output side over the format\'s maximum (WebP 16383, JPEG 65500), or an animation kept animated with more frames than `MAX_ANIMATION_FRAMES` or more pixels in all than `MAX_ANIMATION_PIXELS`' },
  max_bytes_unreachable: { status: 422, title: 'Size target unreachable', when: 'no quality makes the answer `max_bytes` or smaller (quality 1 is still larger, the output is lossless, or none of the qualities tried before the CPU limit fits); has `limit`' },
  operation_too_large: { status: 422, title: 'Operation over the memory budget', when: 'the conversion\'s estimated memory is over `MEMORY_BUDGET_MIB`; has `limit`, `estimateMiB` and `fits`, what would fit instead (`maxWidth`, other `formats` at the size asked for, `asBaselineJpeg`, `notInterlaced`, `lossy`), also named in `detail`' },
  corrupt_image: { status: 422, title: 'Image could not be decoded', when: 'the header is broken, a PNG chunk\'s CRC-32 checksum does not match, a JPEG ends before its end-of-image marker or has more than 1000 scans, a GIF frame is larger than its screen (or, kept animated, lies outside it), an animation\'s frame is truncated, or the decoder rejected the data or needed more than the memory budget' },
  rate_limited: { status: 429, title: 'Rate limit exceeded', when: 'over the client\'s compress quota; has `Retry-After` and the RateLimit headers' },
  codec_failed: { status: 500, title: 'Codec failure', when: 'an encoder failed on valid pixels (a bug: please report it)' },
  internal_error: { status: 500, title: 'Internal error', when: 'anything else unexpected' },
  source_unavailable: { status: 502, title: 'Source unavailable', when: 'GET /img: the origin could not be reached, answered neither 200 nor 404/410, did not send its headers or its body within `ORIGIN_TIMEOUT_MS` each, cut its answer off, answered an empty body (or the bucket object is empty), or redirected to another origin or more than 3 times; has `source`' },
  busy: { status: 503, title: 'Worker busy', when: 'the conversions queued before this one are expected to take longer than `QUEUE_TIMEOUT_MS` (answered at once), or the turn did not come within it; has `Retry-After` (the expected wait, in seconds)' },
  rate_limiter_unavailable: { status: 503, title: 'Rate limiter unavailable', when: 'the rate-limit Durable Object could not be reached or failed (unless `RATE_LIMIT_FAIL_OPEN=true`); has `Retry-After`' },
} as const satisfies Record<string, { status: ContentfulStatusCode; title: string; when: string }>

export type ErrorCode = keyof typeof ERRORS

/** RFC 9457 problem details, plus our stable `code` and optional extension members. */
export interface Problem {
  type: string
  title: string
  status: number
  detail: string
  code: ErrorCode
  [extension: string]: unknown
}

/**
 * An HTTP error with a stable `code`, rendered as `application/problem+json`.
 *
 * @example
 * throw new ApiError('invalid_option', 'quality must be between 1 and 100', { option: 'quality' })
 */
export class ApiError extends HTTPException {
  readonly code: ErrorCode
  readonly extensions: Record<string, unknown>
  readonly headers: Record<string, string>

  constructor(
    code: ErrorCode,
    detail: string,
    extensions: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    super(ERRORS[code].status, { message: detail })
    this.code = code
    // every invalid_option lists its errors, as the schema's do, also where one check found one
    const listed = code === 'invalid_option' && typeof extensions.option === 'string' && extensions.errors === undefined
    this.extensions = listed ? { ...extensions, errors: [{ option: extensions.option, message: detail }] } : extensions
    this.headers = headers
  }

  toProblem(instance?: string): Problem {
    return problemOf(this.code, this.message, { ...this.extensions, ...(instance ? { instance } : {}) })
  }

  override getResponse(): Response {
    return problemResponse(this.toProblem(), this.headers)
  }
}

/** `type` is a relative URI to the error's entry on the reference page served at `/`. */
export const problemType = (code: ErrorCode): string => `/#error-${code}`

export function problemOf(code: ErrorCode, detail: string, extensions: Record<string, unknown> = {}): Problem {
  const { status, title } = ERRORS[code]
  return { type: problemType(code), title, status, detail, code, ...extensions }
}

/** An error is never stored: not by the Cache API, a CDN or a browser (a 503 cached for a day is a broken image for a day). */
export function problemResponse(problem: Problem, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(problem), {
    status: problem.status,
    headers: { 'Content-Type': 'application/problem+json', 'Cache-Control': 'no-store', ...headers },
  })
}
