import { Hono } from 'hono'
import type { Context } from 'hono'
import { createMiddleware } from 'hono/factory'
import { withLeanSession } from '../../wasm'
import { LEAN_BUILD } from '../../wasm/build-id'
import { decoderMemoryCap } from '../codecs/types'
import { deliveryOf } from '../delivery/config'
import { fetchOrigin, versionOf } from '../delivery/origin'
import { checkSignature } from '../delivery/sign'
import { resolveSource, type Source } from '../delivery/source'
import { parseImagePath } from '../delivery/url'
import { cacheKeyOf, etagOf, matchesIfNoneMatch, sha256Hex, type Variant, variantOf } from '../delivery/variant'
import { limitsOf } from '../env'
import { ApiError } from '../errors'
import { endBodyBuffer } from '../lib/body-buffer'
import { conversionSlot } from '../lib/slot'
import { convertImage } from '../pipeline/convert'
import { describedResponse, describeImage } from '../pipeline/describe'
import type { CompressOptions } from '../pipeline/options'
import { readBody, tooLarge } from '../pipeline/parse'
import { respond } from '../pipeline/respond'
import { type ClientVariables, identifyClient } from '../ratelimit/identify'
import { rateLimit } from '../ratelimit/limit'

interface Requested {
  options: CompressOptions
  source: Source
  variant: Variant
  /** Known before reading for a bucket key (R2's etag); for an origin, from its answer's validators, else from its bytes. */
  etag?: string
  /** R2's etag, to read exactly the version the ETag was made from. */
  version?: string
  cacheKey: Request
  onError: 'redirect' | undefined
  /** format=json: the image's facts instead of an image. */
  json: boolean
}

type ImgEnv = { Bindings: Env; Variables: { requested: Requested } } & ClientVariables

/** The headers every answer of a variant carries, 200 and 304 alike. */
function variantHeaders(c: Context<ImgEnv>, variant: Variant, etag: string): Record<string, string> {
  const { maxAgeSeconds } = deliveryOf(c.env)
  return { ETag: etag, 'Cache-Control': `public, max-age=${maxAgeSeconds}`, ...(variant.varies ? { Vary: 'Accept' } : {}) }
}

const notModified = (c: Context<ImgEnv>, variant: Variant, etag: string) => c.body(null, 304, variantHeaders(c, variant, etag))

/** A stored answer, with this request's caching headers. */
function fromCache(c: Context<ImgEnv>, cached: Response, variant: Variant): Response {
  const hit = new Response(cached.body, cached)
  for (const [name, value] of Object.entries(variantHeaders(c, variant, cached.headers.get('etag') ?? ''))) hit.headers.set(name, value)
  hit.headers.set('Cache-Status', 'imgedge; hit')
  return hit
}

/** `onerror=redirect`: the original instead of a problem, never cached. */
const redirectToOriginal = (url: URL) => new Response(null, { status: 302, headers: { Location: url.href, 'Cache-Control': 'no-store' } })

/**
 * What is answered without converting, and without counting against the client's quota: the signature, the path
 * and its source (a host not on ALLOWED_SOURCES is refused here, before any fetch), then for a bucket key R2's head
 * (existence, size, version: no bytes read) and 304 for a matching If-None-Match, and the stored answer of a
 * variant converted before. An origin is not asked here: that waits for the rate limit.
 */
const lookUp = createMiddleware<ImgEnv>(async (c, next) => {
  const url = new URL(c.req.url)
  const delivery = deliveryOf(c.env)
  await checkSignature(url, delivery.signingKey, Date.now() / 1000)
  const extra = [...url.searchParams.keys()].find((name) => name !== 'sig' && name !== 'exp')
  if (extra !== undefined) throw new ApiError('invalid_option', `GET /img takes its options in the path (/img/${extra}=.../<source>), not the query.`, { option: extra })
  const { options, onError, rawSource, json } = parseImagePath(url.pathname)
  const named = json ? { ...options, format: 'json' } : options
  const source = resolveSource(rawSource, delivery)
  if (onError !== undefined && source.kind !== 'origin') throw new ApiError('invalid_option', 'onerror=redirect needs an origin source (ORIGIN_URL or an absolute URL).', { option: 'onerror' })
  const { maxInputBytes } = limitsOf(c.env)
  const accept = c.req.header('accept') ?? ''
  const ifNoneMatch = c.req.header('if-none-match')

  if (source.kind === 'bucket') {
    const head = await bucketCall(() => c.env.IMAGES.head(source.key))
    if (head === null) throw notInBucket(source.key)
    if (head.size > maxInputBytes) throw tooLarge(maxInputBytes, 'The source image')
    const variant = await variantOf(named, `bucket:${source.key}`, accept, LEAN_BUILD)
    const etag = await etagOf(variant, head.etag)
    if (matchesIfNoneMatch(ifNoneMatch, etag)) return notModified(c, variant, etag)
    const cacheKey = cacheKeyOf(etag)
    const cached = await caches.default.match(cacheKey)
    if (cached) return fromCache(c, cached, variant)
    c.set('requested', { options, source, variant, etag, version: head.etag, cacheKey, onError, json })
    return next()
  }

  // An origin's version is known only from its answer: stored answers are keyed by the variant and kept for max-age.
  const variant = await variantOf(named, `origin:${source.url.href}`, accept, LEAN_BUILD)
  const cacheKey = cacheKeyOf(variant.id)
  const cached = await caches.default.match(cacheKey)
  if (cached) return matchesIfNoneMatch(ifNoneMatch, cached.headers.get('etag')) ? notModified(c, variant, cached.headers.get('etag')!) : fromCache(c, cached, variant)
  c.set('requested', { options, source, variant, cacheKey, onError, json })
  return next()
})

const notInBucket = (key: string) => new ApiError('source_not_found', `No object ${JSON.stringify(key)} in the IMAGES bucket.`, { key })

/** An R2 call whose failure (R2 down, a key it refuses) is the source's, not ours. */
async function bucketCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (error) {
    throw new ApiError('source_unavailable', `The IMAGES bucket could not be read: ${(error as Error).message}.`, {})
  }
}

/** The source's bytes, counted against MAX_INPUT_BYTES as they arrive, into the isolate's body buffer. */
async function readSource(c: Context<ImgEnv>, { source, version }: Requested, answer: Response | undefined): Promise<Uint8Array> {
  const limits = limitsOf(c.env)
  if (source.kind === 'origin') {
    try {
      return await readBody(answer!, limits.maxInputBytes, limits.bodyTimeoutMs)
    } catch (error) {
      if (error instanceof ApiError && error.code === 'payload_too_large') throw error
      throw new ApiError('source_unavailable', `The origin's answer was cut off or too slow (${source.url.href}).`, { source: source.url.href })
    }
  }
  // Only the version the ETag was made from: an upload between the head and here is the next request's.
  const object = await bucketCall(() => c.env.IMAGES.get(source.key, version ? { onlyIf: { etagMatches: version } } : {}))
  if (object === null) throw notInBucket(source.key)
  if (!('body' in object)) throw new ApiError('source_unavailable', `The object ${JSON.stringify(source.key)} changed while it was read; ask again.`, { key: source.key })
  return readBody({ headers: new Headers({ 'content-length': String(object.size) }), body: object.body }, limits.maxInputBytes)
}

const nameOf = (source: Source) => {
  const path = source.kind === 'bucket' ? source.key : source.url.pathname
  const name = path.slice(path.lastIndexOf('/') + 1)
  try {
    return source.kind === 'bucket' ? name : decodeURIComponent(name)
  } catch {
    return name
  }
}

/** Under REQUIRE_API_KEY, a signed URL (checked in lookUp) stands in for the key. */
const signedUrls = (env: Env) => deliveryOf(env).signingKey !== undefined

/**
 * GET (and HEAD) /img/<options>/<source>: an image from the R2 bucket `IMAGES` or an origin, converted as POST
 * /api/compress would with the same options, for `<img src>` and CDNs. The pipeline, top to bottom:
 * identify the client (a key, or under REQUIRE_API_KEY a signed URL) -> look up (signature -> path and source -> R2
 * head -> 304 / stored answer, none counted) -> rate limit -> fetch the origin (304 when its validators match) ->
 * (wait for the conversion slot) -> read the source -> convert (src/pipeline/convert.ts) -> respond, with ETag,
 * Cache-Control and Cache-Status -> store in the Cache API.
 */
export const img = new Hono<ImgEnv>().get('/*', identifyClient({ authorisedWithoutKey: signedUrls }), lookUp, rateLimit(), async (c) => {
  const limits = limitsOf(c.env)
  const delivery = deliveryOf(c.env)
  const requested = c.get('requested')
  const { options, source, variant, cacheKey, onError, json } = requested
  let { etag } = requested

  let answer: Response | undefined
  if (source.kind === 'origin') {
    try {
      answer = await fetchOrigin(source.url, { timeoutMs: delivery.originTimeoutMs, maxBytes: limits.maxInputBytes })
    } catch (error) {
      if (onError === 'redirect') return redirectToOriginal(source.url)
      throw error
    }
    const version = versionOf(answer)
    if (version !== undefined) {
      etag = await etagOf(variant, version)
      if (matchesIfNoneMatch(c.req.header('if-none-match'), etag)) {
        await answer.body?.cancel().catch(() => {})
        return notModified(c, variant, etag)
      }
    }
  }

  let outcome
  try {
    outcome = await conversionSlot.run(() => withLeanSession(decoderMemoryCap(), async () => {
      const bytes = await readSource(c, requested, answer)
      // An origin without validators: the ETag comes from its bytes, so a changed image is never a 304.
      etag ??= await etagOf(variant, `sha256:${await sha256Hex(bytes)}`)
      return json ? describeImage(bytes, options, limits) : convertImage({ bytes, options, accept: c.req.header('accept') ?? '', filename: nameOf(source) }, limits)
    }).finally(endBodyBuffer), limits.queueTimeoutMs)
  } catch (error) {
    if (onError === 'redirect' && source.kind === 'origin' && error instanceof ApiError) return redirectToOriginal(source.url)
    throw error
  } finally {
    await answer?.body?.cancel().catch(() => {})
  }

  const response = 'facts' in outcome ? describedResponse(outcome) : respond(c, { ...outcome, vary: variant.varies }, options.response === 'json')
  for (const [name, value] of Object.entries(variantHeaders(c, variant, etag!))) response.headers.set(name, value)
  response.headers.set('Cache-Status', 'imgedge; fwd=miss; stored')
  c.executionCtx.waitUntil(caches.default.put(cacheKey, response.clone()).catch((error: Error) => console.error(`cache put failed: ${error.message}`)))
  return response
})
