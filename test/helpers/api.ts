import { SELF } from 'cloudflare:test'
import { expect } from 'vitest'

export const BASE = 'https://imgedge.test'

/** MIME type per output format, as the API must label it. */
export const MIME = { jpeg: 'image/jpeg', png: 'image/png', webp: 'image/webp', avif: 'image/avif', gif: 'image/gif' } as const

const CONTENT_TYPES: Record<string, string> = {
  jpg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
  avif: 'image/avif',
  gif: 'image/gif',
  svg: 'image/svg+xml',
  txt: 'text/plain',
}

/** The Content-Type a client would send for a fixture name (by extension); octet-stream otherwise. */
export function contentTypeFor(name: string): string {
  return CONTENT_TYPES[name.split('.').pop() ?? ''] ?? 'application/octet-stream'
}

export type Query = Record<string, string | number | boolean> | string

function queryString(query: Query | undefined): string {
  if (query === undefined) return ''
  const qs = typeof query === 'string' ? query : new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)])).toString()
  return qs ? `?${qs}` : ''
}

/** POST raw bytes to /api/compress. */
export function compress(
  body: BodyInit | null,
  query?: Query,
  init: { contentType?: string; headers?: Record<string, string> } = {},
): Promise<Response> {
  const headers: Record<string, string> = { ...(init.headers ?? {}) }
  if (init.contentType !== undefined) headers['Content-Type'] = init.contentType
  else if (body instanceof Uint8Array) headers['Content-Type'] = 'application/octet-stream'
  return SELF.fetch(`${BASE}/api/compress${queryString(query)}`, { method: 'POST', body, headers })
}

/** POST a multipart/form-data body (the fetch implementation writes the boundary). */
export function compressForm(form: FormData, query?: Query, headers: Record<string, string> = {}): Promise<Response> {
  return SELF.fetch(`${BASE}/api/compress${queryString(query)}`, { method: 'POST', body: form, headers })
}

export const get = (path: string, headers: Record<string, string> = {}): Promise<Response> =>
  SELF.fetch(`${BASE}${path}`, { headers })

/** The body as bytes, after asserting a 200 (the problem detail is shown when it is not). */
export async function okBytes(res: Response): Promise<Uint8Array> {
  if (res.status !== 200) expect.fail(`expected 200, got ${res.status}: ${await res.text()}`)
  return new Uint8Array(await res.arrayBuffer())
}

export interface ProblemBody {
  type: string
  title: string
  status: number
  detail: string
  code: string
  [extension: string]: unknown
}

/** Assert an RFC 9457 problem answer with `code` and `status`, and return its body. */
export async function expectProblem(res: Response, code: string, status: number): Promise<ProblemBody> {
  const text = await res.text()
  expect(res.status, text).toBe(status)
  expect(res.headers.get('content-type')).toBe('application/problem+json')
  const body = JSON.parse(text) as ProblemBody
  expect(body).toMatchObject({ status, code })
  expect(body.type).toBe(`/#error-${code}`)
  expect(typeof body.title).toBe('string')
  expect(body.title.length).toBeGreaterThan(0)
  expect(typeof body.detail).toBe('string')
  expect(body.detail.length).toBeGreaterThan(0)
  return body
}

export function base64ToBytes(b64: string): Uint8Array {
  const binary = atob(b64)
  const bytes = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
  return bytes
}
