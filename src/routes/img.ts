import { Hono } from 'hono'
import type { Context } from 'hono'
import { createMiddleware } from 'hono/factory'
import { canStreamInput } from '../../wasm'
import { LEAN_BUILD } from '../../wasm/build-id'
import { deliveryOf } from '../delivery/config'
import { fetchOrigin, openOriginBody, readOriginBody, versionOf } from '../delivery/origin'
import { checkSignature } from '../delivery/sign'
import { resolveSource, type Source } from '../delivery/source'
import { parseImagePath } from '../delivery/url'
import { cacheKeyOf, etagOf, matchesIfNoneMatch, sha256Hex, type Variant, variantOf } from '../delivery/variant'
import { limitsOf } from '../env'
import { ApiError } from '../errors'
import { convertImage } from '../pipeline/convert'
import { acceptedModernFormats } from '../pipeline/negotiate'
import { type Described, describedResponse, describeImage } from '../pipeline/describe'
import type { CompressOptions } from '../pipeline/options'
import type { PendingBody } from '../pipeline/body'
import { openBody, readBody, tooLarge } from '../pipeline/parse'
import { streamedInputCap } from '../pipeline/stream'
import { type Outcome, respond } from '../pipeline/respond'
import { conversionQueue, inConversionTurn, type Shared, SingleFlight } from '../queue'
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
  /** The bucket object's size, for the queue's admission estimate. */
  size?: number
  cacheKey: Request
  onError: 'redirect' | undefined
  /** format=json: the image's facts instead of an image. */
  json: boolean
}

type ImgEnv = { Bindings: Env; Variables: { requested: Requested; missingKey: string | undefined } } & ClientVariables

/** The headers every answer of a variant carries, 200 and 304 alike (a stand-in's fresh for STAND_IN_MAX_AGE only). */
function variantHeaders(c: Context<ImgEnv>, variant: Variant, etag: string, standIn = false): Record<string, string> {
  const maxAge = standIn ? Math.min(STAND_IN_MAX_AGE, maxAgeOf(c)) : maxAgeOf(c)
  return { ETag: etag, 'Cache-Control': `public, max-age=${maxAge}`, ...(variant.varies ? { Vary: 'Accept' } : {}) }
}

/**
 * `format=auto` gives a browser that takes AVIF an AVIF, which costs several times WebP's time to make. While other
 * conversions wait in the queue (a page's first view), a WebP stands in for it: fresh for STAND_IN_MAX_AGE seconds,
 * with an ETag of its own, and the AVIF is made after, in the background, when no client's conversion waits.
 */
const STAND_IN_MAX_AGE = 60
const STAND_IN = 'detail=stand-in'
const isStandIn = (headers: Headers) => headers.get('cache-status')?.includes(STAND_IN) ?? false

function standsIn(options: CompressOptions, accept: string): boolean {
  if (options.format !== 'auto' || !acceptedModernFormats(accept).includes('avif')) return false
  const { running, waitingForClients } = conversionQueue.stats()
  return running + waitingForClients > 0
}

/** Accept without AVIF: what the stand-in is negotiated from. */
const withoutAvif = (accept: string) => accept.split(',').filter((type) => !/^\s*image\/avif\s*(;|$)/i.test(type)).join(',')

/** IMG_MAX_AGE, but never past a signed URL's `exp`: a cache must not serve it after the signature would refuse it. */
function maxAgeOf(c: Context<ImgEnv>): number {
  const { maxAgeSeconds } = deliveryOf(c.env)
  const exp = Number(new URL(c.req.url).searchParams.get('exp') ?? Number.NaN)
  return Number.isFinite(exp) ? Math.max(0, Math.min(maxAgeSeconds, Math.floor(exp - Date.now() / 1000))) : maxAgeSeconds
}

const notModified = (c: Context<ImgEnv>, variant: Variant, etag: string) => c.body(null, 304, variantHeaders(c, variant, etag))

/** A stored answer, with this request's caching headers. */
function fromCache(c: Context<ImgEnv>, cached: Response, variant: Variant, collapsed = false): Response {
  const hit = new Response(cached.body, cached)
  const standIn = isStandIn(cached.headers)
  for (const [name, value] of Object.entries(variantHeaders(c, variant, cached.headers.get('etag') ?? '', standIn))) hit.headers.set(name, value)
  hit.headers.set('Cache-Status', `imgedge; hit${collapsed ? '; collapsed' : ''}${standIn ? `; ${STAND_IN}` : ''}`)
  return hit
}

/** `onerror=redirect`: the original instead of a problem, never cached. */
const redirectToOriginal = (url: URL) => new Response(null, { status: 302, headers: { Location: url.href, 'Cache-Control': 'no-store' } })

/**
 * What is answered without converting, and without counting against the client's quota: the signature, the path
 * and its source (a host not on ALLOWED_SOURCES is refused here, before any fetch), then for a bucket key R2's head
 * (size, version: no bytes read) and 304 for a matching If-None-Match, and the stored answer of a variant converted
 * before. A missing key and an origin wait for the rate limit.
 */
const lookUp = createMiddleware<ImgEnv>(async (c, next) => {
  const url = new URL(c.req.url)
  const delivery = deliveryOf(c.env)
  const signed = await checkSignature(url, delivery, Date.now() / 1000)
  const extra = [...url.searchParams.keys()].find((name) => name !== 'sig' && name !== 'exp')
  if (extra !== undefined) throw new ApiError('invalid_option', `GET /img takes its options in the path (/img/${extra}=.../<source>), not the query.`, { option: extra })
  const { options, onError, rawSource, json } = parseImagePath(url.pathname, { presets: delivery.presets, unsigned: signed ? undefined : delivery.unsigned })
  const named = json ? { ...options, format: 'json' } : options
  const source = resolveSource(rawSource, delivery)
  if (onError !== undefined && source.kind !== 'origin') throw new ApiError('invalid_option', 'onerror=redirect needs an origin source (ORIGIN_URL or an absolute URL).', { option: 'onerror' })
  // (a PNG source that one pass converts is read as it arrives, not held: its cap is MAX_STREAMED_INPUT_BYTES)
  const maxInputBytes = streamedInputCap(limitsOf(c.env))
  const accept = c.req.header('accept') ?? ''
  const ifNoneMatch = c.req.header('if-none-match')

  if (source.kind === 'bucket') {
    const head = await bucketCall(() => c.env.IMAGES.head(source.key))
    // Refused after the rate limit (refuseMissing), so nobody can probe the bucket's keys without limit.
    if (head === null) {
      c.set('missingKey', source.key)
      return next()
    }
    if (head.size > maxInputBytes) throw tooLarge(maxInputBytes, 'The source image')
    const variant = await variantOf(named, `bucket:${source.key}`, accept, LEAN_BUILD)
    const etag = await etagOf(variant, head.etag)
    if (matchesIfNoneMatch(ifNoneMatch, etag)) return notModified(c, variant, etag)
    const cacheKey = cacheKeyOf(etag)
    const cached = await caches.default.match(cacheKey)
    if (cached) return fromCache(c, cached, variant)
    c.set('requested', { options, source, variant, etag, version: head.etag, size: head.size, cacheKey, onError, json })
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

/** A key lookUp found missing, answered 404 once the request has been counted like any other miss. */
const refuseMissing = createMiddleware<ImgEnv>(async (c, next) => {
  const key = c.get('missingKey')
  if (key !== undefined) throw notInBucket(key)
  return next()
})

/** An R2 call whose failure (R2 down, a key it refuses) is the source's, not ours. */
async function bucketCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (error) {
    throw new ApiError('source_unavailable', `The IMAGES bucket could not be read: ${(error as Error).message}.`, {})
  }
}

/**
 * The source's bytes, counted against MAX_INPUT_BYTES as they arrive, into the isolate's body buffer; or, where
 * `streamable`, the body still to be read (convertImage reads a PNG that one pass converts as it arrives, and holds
 * anything else, under MAX_INPUT_BYTES).
 */
async function readSource(c: Context<ImgEnv>, { source, version }: Requested, answer: Response | undefined, streamable: boolean): Promise<Uint8Array | PendingBody> {
  const limits = limitsOf(c.env)
  if (source.kind === 'origin') {
    const fetching = { timeoutMs: deliveryOf(c.env).originTimeoutMs, maxBytes: limits.maxInputBytes }
    return streamable ? openOriginBody(answer!, source.url, fetching, limits.maxStreamedInputBytes) : readOriginBody(answer!, source.url, fetching)
  }
  // Only the version the ETag was made from: an upload between the head and here is the next request's.
  const object = await bucketCall(() => c.env.IMAGES.get(source.key, version ? { onlyIf: { etagMatches: version } } : {}))
  if (object === null) throw notInBucket(source.key)
  if (!('body' in object)) throw new ApiError('source_unavailable', `The object ${JSON.stringify(source.key)} changed while it was read; ask again.`, { key: source.key })
  if (object.size === 0) throw new ApiError('source_unavailable', `The object ${JSON.stringify(source.key)} is empty.`, { key: source.key })
  const body = { headers: new Headers({ 'content-length': String(object.size) }), body: object.body }
  if (!streamable) return readBody(body, limits.maxInputBytes)
  const failure = (error: ApiError) => new ApiError('source_unavailable', `The object ${JSON.stringify(source.key)} could not be read to its end: ${error.message}`, { key: source.key })
  return openBody(body, { maxHeldBytes: limits.maxInputBytes, maxStreamedBytes: limits.maxStreamedInputBytes, timeoutMs: Number.POSITIVE_INFINITY, what: 'The source image', failure })!
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

/**
 * Under REQUIRE_API_KEY, a signed URL (checked in lookUp) stands in for the key, and so does an unsigned one limited to
 * presets; an unsigned URL that may ask for anything (UNSIGNED_URLS=all) still needs a key.
 */
const keylessUrls = (env: Env) => {
  const { signingKey, unsigned } = deliveryOf(env)
  return unsigned.mode === 'presets' || (unsigned.mode === 'none' && signingKey !== undefined)
}

/** What one conversion of a variant gives every request that asked for it meanwhile. */
type Made =
  /** `standIn`: a WebP made in place of format=auto's AVIF while the queue was busy. */
  | { kind: 'converted'; outcome: Outcome | Described; etag: string; standIn: boolean }
  /** Stored by another request while this one waited for its turn. */
  | { kind: 'stored'; body: ArrayBuffer; headers: Headers }
  /** The origin's validators match the request's If-None-Match: nothing converted. */
  | { kind: 'unchanged'; etag: string }

/** Variants being made in this isolate, by cache key and If-None-Match: asked for again meanwhile, they are made once. */
const flights = new SingleFlight<Made>()

/**
 * One variant, made: the origin's headers (fetched now, within ORIGIN_TIMEOUT_MS) -> the conversion turn -> the cache
 * looked at again (another request may have stored it during the wait) -> the source's bytes (an origin's body within
 * ORIGIN_TIMEOUT_MS from here) -> convert. `background`: the AVIF a stand-in stood in for, after every client's turn.
 */
async function make(c: Context<ImgEnv>, requested: Requested, background = false): Promise<Made> {
  const limits = limitsOf(c.env)
  const { options, source, variant, cacheKey } = requested
  const accept = c.req.header('accept') ?? ''
  let { etag } = requested
  let answer: Response | undefined
  try {
    let declaredBytes = requested.size
    if (source.kind === 'origin') {
      answer = await fetchOrigin(source.url, { timeoutMs: deliveryOf(c.env).originTimeoutMs, maxBytes: streamedInputCap(limits) })
      declaredBytes = Number(answer.headers.get('content-length') ?? Number.NaN)
      const version = versionOf(answer)
      if (version !== undefined) {
        etag = await etagOf(variant, version)
        if (matchesIfNoneMatch(c.req.header('if-none-match'), etag)) return { kind: 'unchanged', etag }
      }
    }
    // Decided once the origin has answered: a burst of origin requests all wait for headers first, with the queue empty.
    const standIn = !background && standsIn(options, accept)
    return await inConversionTurn(async (): Promise<Made> => {
      const stored = await caches.default.match(cacheKey)
      if (stored && !(background && isStandIn(stored.headers))) return { kind: 'stored', body: await stored.arrayBuffer(), headers: stored.headers }
      // An origin without validators: the ETag comes from its bytes (so a changed image is never a 304), which are then
      // held; so are the bytes format=json describes.
      const bytes = await readSource(c, requested, answer, etag !== undefined && !requested.json && canStreamInput())
      if (etag === undefined && bytes instanceof Uint8Array) etag = await etagOf(variant, `sha256:${await sha256Hex(bytes)}`)
      if (etag === undefined) throw new Error('a source without validators was not held')
      const outcome = requested.json && bytes instanceof Uint8Array ? await describeImage(bytes, options, limits) : await convertImage({ bytes, options, accept: standIn ? withoutAvif(accept) : accept, filename: nameOf(source) }, limits)
      // A stand-in's ETag is its own: revalidating it must not renew it as the AVIF.
      return { kind: 'converted', outcome, etag: standIn ? etag.replace(/"$/, '-stand-in"') : etag, standIn }
    }, { timeoutMs: limits.queueTimeoutMs, declaredBytes, background }, (made) => (made.kind === 'converted' && 'input' in made.outcome ? made.outcome.input.bytes : undefined))
  } finally {
    await answer?.body?.cancel().catch(() => {})
  }
}

/**
 * GET (and HEAD) /img/<options>/<source>: an image from the R2 bucket `IMAGES` or an origin, converted as POST
 * /api/compress would with the same options, for `<img src>` and CDNs. The pipeline, top to bottom:
 * identify the client (a key, or under REQUIRE_API_KEY a signed or presets-only URL) -> look up (signature -> path and
 * source -> R2 head -> 304 / stored answer, none counted) -> rate limit -> 404 for a missing key -> make the variant
 * once for every request asking for it meanwhile (`make`: origin headers -> conversion turn -> cache again -> read ->
 * convert) -> respond, with ETag, Cache-Control and Cache-Status -> store in the Cache API.
 */
export const img = new Hono<ImgEnv>().get('/*', identifyClient({ authorisedWithoutKey: keylessUrls }), lookUp, rateLimit(), refuseMissing, async (c) => {
  const limits = limitsOf(c.env)
  const requested = c.get('requested')
  const { options, source, variant, cacheKey, onError } = requested
  const ifNoneMatch = c.req.header('if-none-match')

  let made: Shared<Made>
  try {
    // Followers wait as long as the leader may: its turn in the queue, then its conversion.
    made = await flights.run(`${cacheKey.url} ${ifNoneMatch ?? ''}`, () => make(c, requested), { maxWaitMs: limits.queueTimeoutMs + limits.cpuLimitMs })
  } catch (error) {
    if (onError === 'redirect' && source.kind === 'origin' && error instanceof ApiError) return redirectToOriginal(source.url)
    throw error
  }
  const { value, collapsed } = made
  if (value.kind === 'stored') return fromCache(c, new Response(value.body, { headers: value.headers }), variant, collapsed)
  if (value.kind === 'unchanged' || matchesIfNoneMatch(ifNoneMatch, value.etag)) return notModified(c, variant, value.etag)

  const response = answerOf(c, value, collapsed)
  if (!collapsed) c.executionCtx.waitUntil(store(cacheKey, response.clone()))
  if (!collapsed && value.standIn) c.executionCtx.waitUntil(makeInBackground(c, requested))
  return response
})

/** A converted variant's answer, with its caching headers. */
function answerOf(c: Context<ImgEnv>, made: Extract<Made, { kind: 'converted' }>, collapsed: boolean): Response {
  const { options, variant } = c.get('requested')
  const { outcome } = made
  const response = 'facts' in outcome ? describedResponse(outcome) : respond(c, { ...outcome, vary: variant.varies }, options.response === 'json', { shared: true })
  for (const [name, value] of Object.entries(variantHeaders(c, variant, made.etag, made.standIn))) response.headers.set(name, value)
  response.headers.set('Cache-Status', `imgedge; fwd=miss; ${collapsed ? 'collapsed' : 'stored'}${made.standIn ? `; ${STAND_IN}` : ''}`)
  return response
}

const store = (key: Request, response: Response) => caches.default.put(key, response).catch((error: Error) => console.error(`cache put failed: ${error.message}`))

/**
 * The AVIF a stand-in stood in for, made once no client's conversion waits and stored in its place. It gives up
 * quietly (the next request after the stand-in expires tries again) if that does not come within the time workerd
 * gives work after an answer.
 */
async function makeInBackground(c: Context<ImgEnv>, requested: Requested): Promise<void> {
  try {
    const { value } = await flights.run(`${requested.cacheKey.url} background`, () => make(c, requested, true), { maxWaitMs: BACKGROUND_MS })
    if (value.kind === 'converted') await store(requested.cacheKey, answerOf(c, value, false))
  } catch {
    /* busy all along: the stand-in stays until it expires */
  }
}

/** Under the 30 s that workerd lets a request's waitUntil work run after its answer. */
const BACKGROUND_MS = 25_000
