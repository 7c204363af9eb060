import { ApiError } from '../errors'
import type { PendingBody } from '../pipeline/body'
import { openBody, readBody, tooLarge } from '../pipeline/parse'

/** Redirects followed, each within the origin (scheme, host and port) of the URL asked for. */
const MAX_REDIRECTS = 3

export interface OriginFetch {
  /** Longest wait for the answer's status and headers (redirects included); its body is timed where it is read. */
  timeoutMs: number
  /** MAX_INPUT_BYTES: a declared Content-Length over it is refused before the body is read. */
  maxBytes: number
}

const unavailable = (url: URL, why: string) =>
  new ApiError('source_unavailable', `The origin did not give the image (${url.href}): ${why}.`, { source: url.href })

/** Refuse an answer: its body is given back first, so the connection does not wait for the timeout. */
async function refuse(answer: Response, error: ApiError): Promise<never> {
  await answer.body?.cancel().catch(() => {})
  throw error
}

/**
 * GET an image from an untrusted origin: no cookies or credentials, a timeout until its headers, redirects
 * followed only within the same origin and at most MAX_REDIRECTS, 404 and 410 as `source_not_found`, any other
 * failure (unreachable, 5xx, timeout, a redirect elsewhere) as `source_unavailable`. The body is left unread: the
 * caller reads it when its conversion's turn comes, with a timeout of its own (`readOriginBody`), so that a wait in
 * the queue is never blamed on the origin.
 *
 * @example
 * const answer = await fetchOrigin(new URL('https://images.example.com/cat.jpg'), { timeoutMs: 10_000, maxBytes })
 */
export async function fetchOrigin(url: URL, { timeoutMs, maxBytes }: OriginFetch): Promise<Response> {
  // Aborted only while waiting for headers: the signal stays on the body, which is read later.
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), timeoutMs)
  try {
    return await follow(url, controller.signal, timeoutMs, maxBytes)
  } finally {
    clearTimeout(timer)
  }
}

async function follow(url: URL, signal: AbortSignal, timeoutMs: number, maxBytes: number): Promise<Response> {
  let current = url
  for (let redirects = 0; ; redirects++) {
    let answer: Response
    try {
      answer = await fetch(current, { redirect: 'manual', signal, headers: { Accept: 'image/*' } })
    } catch (error) {
      throw unavailable(current, signal.aborted ? `no answer within ${timeoutMs} ms (ORIGIN_TIMEOUT_MS)` : `unreachable (${(error as Error).message})`)
    }
    const location = answer.headers.get('location')
    if (answer.status >= 300 && answer.status < 400 && location !== null) {
      await answer.body?.cancel().catch(() => {})
      let next: URL
      try {
        next = new URL(location, current)
      } catch {
        throw unavailable(url, `it redirects to an invalid URL (${location})`)
      }
      if (next.origin !== url.origin) throw unavailable(url, `it redirects to another origin (${next.origin})`)
      if (redirects >= MAX_REDIRECTS) throw unavailable(url, `more than ${MAX_REDIRECTS} redirects`)
      current = next
      continue
    }
    if (answer.status === 404 || answer.status === 410) {
      return refuse(answer, new ApiError('source_not_found', `The origin has no image at ${current.href} (${answer.status}).`, { source: current.href }))
    }
    if (answer.status !== 200) return refuse(answer, unavailable(current, `it answered ${answer.status}`))
    if (Number(answer.headers.get('content-length') ?? Number.NaN) > maxBytes) return refuse(answer, tooLarge(maxBytes, 'The source image'))
    return answer
  }
}

/** An origin's version of what it answered, for the ETag: its ETag, else its Last-Modified; undefined without either. */
export const versionOf = (answer: Response): string | undefined => answer.headers.get('etag') ?? answer.headers.get('last-modified') ?? undefined

/**
 * An origin's body, read within `timeoutMs` from now and counted against MAX_INPUT_BYTES as it arrives. A body cut
 * off, too slow or empty is the origin's fault (`source_unavailable`, 502), never the client's.
 *
 * @example
 * const bytes = await readOriginBody(answer, url, { timeoutMs: 10_000, maxBytes })
 */
export async function readOriginBody(answer: Response, url: URL, { timeoutMs, maxBytes }: OriginFetch): Promise<Uint8Array> {
  let bytes: Uint8Array
  try {
    bytes = await readBody(answer, maxBytes, timeoutMs)
  } catch (error) {
    throw originFailure(url, timeoutMs)(error)
  }
  if (bytes.length === 0) throw unavailable(url, 'it answered an empty body')
  return bytes
}

/**
 * An origin's body to read as the conversion asks for it (a PNG read as it arrives, else held: PendingBody), within
 * `timeoutMs` from now, its failures the origin's as readOriginBody's are.
 *
 * @example
 * const body = await openOriginBody(answer, url, { timeoutMs, maxBytes: maxInputBytes }, maxStreamedInputBytes)
 */
export async function openOriginBody(answer: Response, url: URL, { timeoutMs, maxBytes }: OriginFetch, maxStreamedBytes: number): Promise<PendingBody> {
  const failure = originFailure(url, timeoutMs)
  const body = openBody(answer, { maxHeldBytes: maxBytes, maxStreamedBytes, timeoutMs, what: 'The source image', failure })
  if (!body || (await body.head(1)).length === 0) throw unavailable(url, 'it answered an empty body')
  return body
}

/** An origin's body that failed: too large as it is, anything else the origin's (`source_unavailable`). */
const originFailure = (url: URL, timeoutMs: number) => (error: unknown): ApiError => {
  if (error instanceof ApiError && error.code === 'payload_too_large') return error
  return unavailable(url, error instanceof ApiError && error.code === 'body_timeout' ? `its body did not arrive within ${timeoutMs} ms (ORIGIN_TIMEOUT_MS)` : 'its answer was cut off')
}
