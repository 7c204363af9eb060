import { Hono } from 'hono'
import { limitsOf } from '../env'
import { convertImage } from '../pipeline/convert'
import { checkRequestHead, parseRequest } from '../pipeline/parse'
import { streamedInputCap } from '../pipeline/stream'
import { respond } from '../pipeline/respond'
import { inConversionTurn } from '../queue'
import { type ClientVariables, identifyClient } from '../ratelimit/identify'
import { rateLimit } from '../ratelimit/limit'

/**
 * POST /api/compress. The pipeline, top to bottom:
 * identify the client -> rate limit (its Durable Object decides; no body is read before) -> check the request's headers -> (wait for
 * the isolate's conversion turn, src/queue; the body stays unread meanwhile) -> parse -> sniff -> check limits and choose the format and
 * route -> decode -> transform -> encode (or, for a JPEG kept at its size, the three as one pass of the lean codec) -> never-bigger -> respond.
 * Everything before decode works on header data only, so bad or oversized input is refused before any pixel is touched; the lean
 * codec's steps share one instance over the isolate's one lean memory (wasm/session.ts).
 */
export const compress = new Hono<{ Bindings: Env } & ClientVariables>().post('/', identifyClient(), rateLimit(), async (c) => {
  const limits = limitsOf(c.env)

  // 0. what the headers alone can refuse is refused before queuing: a declared size over the limit, the content type, query options
  // (a PNG that one pass converts is read as it arrives, not held: its cap is MAX_STREAMED_INPUT_BYTES)
  const maxStreamedBytes = streamedInputCap(limits)
  await checkRequestHead(c, limits.maxInputBytes, maxStreamedBytes)

  // Queued requests wait here with their bodies unread, so a queue of uploads holds no image bytes.
  const declaredBytes = Number(c.req.header('content-length') ?? Number.NaN)
  const { outcome, wantsJson } = await inConversionTurn(async () => {
    // 1. parse: body (byte limit and BODY_TIMEOUT_MS enforced while streaming) and validated options
    const { bytes, options, filename } = await parseRequest(c, limits.maxInputBytes, limits.bodyTimeoutMs, maxStreamedBytes)
    const wantsJson = options.response === 'json' || (options.response === undefined && /application\/json/i.test(c.req.header('accept') ?? ''))

    // 2-6. sniff, plan, decode, transform, encode, never-bigger (src/pipeline/convert.ts)
    const outcome = await convertImage({ bytes, options, accept: c.req.header('accept') ?? '', filename }, limits)
    return { outcome, wantsJson }
    // A large body's buffer is freed as the turn ends (src/lib/body-buffer.ts).
  }, { timeoutMs: limits.queueTimeoutMs, declaredBytes }, ({ outcome }) => outcome.input.bytes)

  // 7. respond
  return respond(c, outcome, wantsJson)
})
