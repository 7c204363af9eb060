import { HTTPException } from 'hono/http-exception'
import type { ContentfulStatusCode } from 'hono/utils/http-status'

/**
 * Every error the API can answer with. The `code` is the stable, documented identifier clients
 * branch on; `title` is the short public text; the status is fixed per code so a code always
 * means the same HTTP answer.
 */
export const ERRORS = {
  missing_image: { status: 400, title: 'No image in the request' },
  invalid_option: { status: 400, title: 'Invalid option' },
  invalid_request: { status: 400, title: 'Malformed request' },
  unsupported_media_type: { status: 415, title: 'Unsupported request Content-Type' },
  unsupported_format: { status: 415, title: 'Unsupported image format' },
  payload_too_large: { status: 413, title: 'Request body too large' },
  image_too_large: { status: 422, title: 'Image dimensions over the limit' },
  operation_too_large: { status: 422, title: 'Operation over the memory budget' },
  corrupt_image: { status: 422, title: 'Image could not be decoded' },
  api_key_required: { status: 401, title: 'API key required' },
  invalid_api_key: { status: 401, title: 'Invalid API key' },
  not_found: { status: 404, title: 'Not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  rate_limited: { status: 429, title: 'Rate limit exceeded' },
  busy: { status: 503, title: 'Worker busy' },
  rate_limiter_unavailable: { status: 503, title: 'Rate limiter unavailable' },
  codec_failed: { status: 500, title: 'Codec failure' },
  internal_error: { status: 500, title: 'Internal error' },
} as const satisfies Record<string, { status: ContentfulStatusCode; title: string }>

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
    this.extensions = extensions
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

export function problemResponse(problem: Problem, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(problem), {
    status: problem.status,
    headers: { 'Content-Type': 'application/problem+json', ...headers },
  })
}
