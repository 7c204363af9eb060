import { Hono } from 'hono'
import { createMiddleware } from 'hono/factory'
import { withLeanSession } from '../../wasm'
import { LEAN_BUILD } from '../../wasm/build-id'
import { decoderMemoryCap } from '../codecs/types'
import { deliveryOf } from '../delivery/config'
import { checkSignature } from '../delivery/sign'
import { parseImagePath } from '../delivery/url'
import { matchesIfNoneMatch, type Variant, variantOf } from '../delivery/variant'
import { limitsOf } from '../env'
import { ApiError } from '../errors'
import { endBodyBuffer } from '../lib/body-buffer'
import { conversionSlot } from '../lib/slot'
import { convertImage } from '../pipeline/convert'
import type { CompressOptions } from '../pipeline/options'
import { readBody } from '../pipeline/parse'
import { respond } from '../pipeline/respond'
import { type ClientVariables, identifyClient } from '../ratelimit/identify'
import { rateLimit } from '../ratelimit/limit'

interface Requested {
  options: CompressOptions
  key: string
  variant: Variant
}

type ImgEnv = { Bindings: Env; Variables: { requested: Requested } } & ClientVariables

/** The headers every answer of a variant carries, 200 and 304 alike. */
function variantHeaders(variant: Variant, maxAgeSeconds: number): Record<string, string> {
  return { ETag: variant.etag, 'Cache-Control': `public, max-age=${maxAgeSeconds}`, ...(variant.varies ? { Vary: 'Accept' } : {}) }
}

/**
 * What is answered without converting, and without counting against the client's quota: the signature, the path,
 * the source's existence and size (R2's head, no bytes read), then 304 for a matching If-None-Match and the cached
 * answer for a variant converted before.
 */
const lookUp = createMiddleware<ImgEnv>(async (c, next) => {
  const url = new URL(c.req.url)
  const { maxAgeSeconds, signingKey } = deliveryOf(c.env)
  await checkSignature(url, signingKey, Date.now() / 1000)
  const extra = [...url.searchParams.keys()].find((name) => name !== 'sig' && name !== 'exp')
  if (extra !== undefined) throw new ApiError('invalid_option', `GET /img takes its options in the path (/img/${extra}=.../<key>), not the query.`, { option: extra })
  const { options, key } = parseImagePath(url.pathname)

  const head = await c.env.IMAGES.head(key)
  if (head === null) throw new ApiError('source_not_found', `No object ${JSON.stringify(key)} in the IMAGES bucket.`, { key })
  const { maxInputBytes } = limitsOf(c.env)
  if (head.size > maxInputBytes) throw new ApiError('payload_too_large', `The source image is larger than the limit of ${maxInputBytes} bytes.`, { limit: maxInputBytes })

  const variant = await variantOf(options, key, head.etag, c.req.header('accept') ?? '', LEAN_BUILD)
  if (matchesIfNoneMatch(c.req.header('if-none-match'), variant.etag)) {
    return c.body(null, 304, variantHeaders(variant, maxAgeSeconds))
  }
  const cached = await caches.default.match(variant.cacheKey)
  if (cached) {
    const hit = new Response(cached.body, cached)
    for (const [name, value] of Object.entries(variantHeaders(variant, maxAgeSeconds))) hit.headers.set(name, value)
    hit.headers.set('Cache-Status', 'imgedge; hit')
    return hit
  }
  c.set('requested', { options, key, variant })
  await next()
})

/**
 * GET (and HEAD) /img/<options>/<key>: the image `key` of the R2 bucket `IMAGES`, converted as POST /api/compress
 * would with the same options, for `<img src>` and CDNs. The pipeline, top to bottom:
 * look up (signature -> path -> R2 head -> 304 / cache hit, none counted) -> identify the client -> rate limit ->
 * (wait for the conversion slot) -> read the object -> convert (src/pipeline/convert.ts) -> respond, with ETag,
 * Cache-Control and Cache-Status -> store in the Cache API.
 */
export const img = new Hono<ImgEnv>().get('/*', lookUp, identifyClient(), rateLimit(), async (c) => {
  const limits = limitsOf(c.env)
  const { maxAgeSeconds } = deliveryOf(c.env)
  const { options, key, variant } = c.get('requested')

  const outcome = await conversionSlot.run(() => withLeanSession(decoderMemoryCap(), async () => {
    const object = await c.env.IMAGES.get(key)
    if (object === null) throw new ApiError('source_not_found', `No object ${JSON.stringify(key)} in the IMAGES bucket.`, { key })
    const bytes = await readBody({ headers: new Headers({ 'content-length': String(object.size) }), body: object.body }, limits.maxInputBytes)
    const filename = key.slice(key.lastIndexOf('/') + 1)
    return convertImage({ bytes, options, accept: c.req.header('accept') ?? '', filename }, limits)
  }).finally(endBodyBuffer), limits.queueTimeoutMs)

  const answer = respond(c, { ...outcome, vary: variant.varies }, options.response === 'json')
  for (const [name, value] of Object.entries(variantHeaders(variant, maxAgeSeconds))) answer.headers.set(name, value)
  answer.headers.set('Cache-Status', 'imgedge; fwd=miss; stored')
  c.executionCtx.waitUntil(caches.default.put(variant.cacheKey, answer.clone()).catch((error: Error) => console.error(`cache put failed: ${error.message}`)))
  return answer
})
