import { OpenAPIHono, z } from '@hono/zod-openapi'
import pkg from '../../package.json'
import { CODECS } from '../codecs/registry'
import { ERRORS, type ErrorCode } from '../errors'
import { CompressOptionsSchema } from '../pipeline/options'
import { ANSWER_HEADERS, CompressJsonSchema } from '../pipeline/respond'
import { RATE_LIMIT_HEADERS } from '../ratelimit/limit'

/**
 * GET /api/openapi.json: the OpenAPI 3.1 description of the API, generated from the objects the worker
 * runs on: the zod schema that validates compress options, the error map, the answer-header lists and the
 * codec registry. The reference page renders its documentation from this document.
 */
export const openapi = new OpenAPIHono<{ Bindings: Env }>()
const registry = openapi.openAPIRegistry

const codes = Object.keys(ERRORS) as ErrorCode[]

const Problem = registry.register(
  'Problem',
  z
    .object({
      type: z.string().openapi({ description: 'URI of the error on the reference page: `/#error-<code>`.' }),
      title: z.string(),
      status: z.number().int(),
      detail: z.string().openapi({ description: 'What was wrong with this request, for people.' }),
      code: z.enum(codes as [ErrorCode, ...ErrorCode[]]).openapi({ description: 'Stable identifier to branch on.' }),
    })
    .catchall(z.unknown())
    .openapi({ description: 'RFC 9457 problem details with a stable `code`; some codes add members (`option`, `limit`, ...).' }),
)

const headerObjects = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).map(([name, description]) => [name, { description, schema: { type: 'string' as const } }]))

/** A problem as the API writes one for `code` (the detail is this code's cause, not a real request's). */
const problemExample = (code: ErrorCode) => ({ type: `/#error-${code}`, title: ERRORS[code].title, status: ERRORS[code].status, detail: `${ERRORS[code].title}: ${ERRORS[code].when.replace(/`/g, '')}.`, code })

/** One response per status that `allowed` codes can produce, listing those codes. */
function problems(allowed: ErrorCode[]) {
  const byStatus = new Map<number, ErrorCode[]>()
  for (const code of allowed) byStatus.set(ERRORS[code].status, [...(byStatus.get(ERRORS[code].status) ?? []), code])
  return Object.fromEntries(
    [...byStatus].map(([status, list]) => [
      String(status),
      {
        description: list.map((code) => `\`${code}\`: ${ERRORS[code].when}`).join('; '),
        content: { 'application/problem+json': { schema: Problem, example: problemExample(list[0]!) } },
      },
    ]),
  )
}

const ALWAYS: ErrorCode[] = ['method_not_allowed', 'internal_error']

// API keys (docs/guide/rate-limits.md): either header; without one a call is anonymous, unless REQUIRE_API_KEY.
registry.registerComponent('securitySchemes', 'bearerKey', { type: 'http', scheme: 'bearer', description: 'An API key as `Authorization: Bearer <key>`.' })
registry.registerComponent('securitySchemes', 'apiKeyHeader', { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'An API key as `X-API-Key`.' })
/** A key is optional (`{}`: anonymous, counted by IP) unless REQUIRE_API_KEY is set. */
const OPTIONAL_KEY: Array<Record<string, string[]>> = [{}, { bearerKey: [] }, { apiKeyHeader: [] }]

registry.registerPath({
  method: 'get',
  path: '/api/health',
  operationId: 'getHealth',
  security: [{}],
  'x-example': {},
  summary: 'Liveness, version and codecs',
  description: 'Status, version, the codecs loaded and the conversion queue: `queue` (waiting or running), `queueWaiting`, `queueOldestWaitMs`, `queueExpectedWaitMs`; 503 `degraded` when the queue has not moved for longer than a conversion can take. `deep=1` round-trips a 16x16 image through every codec.',
  request: { query: z.object({ deep: z.enum(['1', 'true']).optional().openapi({ description: 'Round-trip every codec and report each one.' }) }) },
  responses: {
    200: { description: 'Healthy.', content: { 'application/json': { schema: z.object({ status: z.literal('ok'), version: z.string() }).catchall(z.unknown()) } } },
    503: { description: 'A codec failed its round trip (`status: "degraded"`).', content: { 'application/json': { schema: z.object({ status: z.literal('degraded') }).catchall(z.unknown()) } } },
    ...problems(ALWAYS),
  },
})

registry.registerPath({
  method: 'get',
  path: '/api/formats',
  operationId: 'getFormats',
  security: [{}],
  'x-example': {},
  summary: 'Formats, options, limits and quotas',
  description: 'Generated from the codec registry and the configuration in force: every format with its MIME type, extensions, decode/encode support and encoder options (type, range, default); what colours are converted to sRGB; the service limits; the rate-limit quotas.',
  responses: {
    200: { description: 'The registry and limits.', content: { 'application/json': { schema: z.object({ formats: z.array(z.unknown()), colour: z.object({ output: z.string(), converted: z.record(z.string(), z.string()), intent: z.string(), metadata: z.string() }).openapi({ description: 'Colour management: outputs are sRGB without a profile; what each input format has converted to sRGB.' }), limits: z.unknown(), rateLimits: z.unknown(), delivery: z.unknown().openapi({ description: 'GET /img: the presets (`PRESETS`, each option set as name: value), and what an unsigned URL may name (`unsignedUrls`: all, presets or none; `unsignedWidths`, `unsignedQualities`).' }) }) } } },
    ...problems(ALWAYS),
  },
})

const binary = { schema: { type: 'string' as const, format: 'binary' } }
/** Codes only GET /img answers with. */
const DELIVERY_ONLY: ErrorCode[] = ['signature_required', 'unsigned_not_allowed', 'invalid_signature', 'signature_expired', 'source_not_allowed', 'source_not_found', 'source_unavailable']
const compressErrors = codes.filter((code) => code !== 'not_found' && code !== 'unsupported_option' && !DELIVERY_ONLY.includes(code))
const cloudflareErrors = codes.filter((code) => !['not_found', 'missing_image', 'unsupported_media_type', 'body_timeout'].includes(code))
const deliveryErrors = cloudflareErrors.filter((code) => code !== 'unsupported_option')

registry.registerPath({
  method: 'post',
  path: '/api/compress',
  operationId: 'compressImage',
  security: OPTIONAL_KEY,
  'x-example': { query: { format: 'webp', width: '800', quality: '75' }, body: 'photo.jpg', contentType: 'image/jpeg' },
  summary: 'Compress or convert one image',
  description:
    'The image as the raw body or as multipart field `image`; options as query parameters or form fields of the same names. ' +
    'The input format is sniffed from the bytes. Unknown or out-of-range options are 400. Counted against the client\'s rate limit before the body is read. ' +
    'Send `Authorization: Bearer <key>` or `X-API-Key` to use an API key.',
  request: {
    query: CompressOptionsSchema,
    body: {
      required: true,
      content: {
        'image/*': binary,
        'application/octet-stream': binary,
        'multipart/form-data': {
          schema: { type: 'object', required: ['image'], properties: { image: { type: 'string', format: 'binary' } }, additionalProperties: { type: 'string' } },
        },
      },
    },
  },
  responses: {
    200: {
      description: 'The converted image, or with `Accept: application/json` / `response=json` the JSON answer.',
      headers: headerObjects({ ...ANSWER_HEADERS, ...RATE_LIMIT_HEADERS, 'Content-Disposition': 'inline, with a file name carrying the output extension.' }),
      content: {
        ...Object.fromEntries(Object.values(CODECS).filter((codec) => codec.encode).map((codec) => [codec.mime, binary])),
        'application/json': {
          schema: CompressJsonSchema,
          example: {
            format: 'webp', mime: 'image/webp', filename: 'photo.webp',
            input: { format: 'jpeg', bytes: 412_345, width: 1600, height: 1000 },
            output: { bytes: 61_234, width: 800, height: 500 },
            ratio: 0.1485, saved: 351_111, original: false, frames: 1, framesDropped: 0, effort: 4,
            timings: { decode: 21.4, transform: 0, encode: 96.2 },
            image: 'UklGRl4AAABXRUJQVlA4...',
          },
        },
      },
    },
    ...problems(compressErrors),
  },
})

/** What GET /img and /cdn-cgi/image answer: an image, or with `format=json` the image's facts. */
const deliveredContent = {
  ...Object.fromEntries(Object.values(CODECS).filter((codec) => codec.encode).map((codec) => [codec.mime, binary])),
  'application/json': {
    schema: z.object({}).passthrough().openapi({ description: "format=json: `width` and `height` the options would give; `original` (`file_size`, `width`, `height` upright, `format` as a MIME type, `frames`, `orientation`, `colour`, `alpha`, `bit_depth`, `progressive`); `placeholder` (`thumbhash` base64, `data_url` a PNG of it); `dominant_colour` (#rrggbb)." }),
    example: { width: 800, height: 600, original: { file_size: 823_260, width: 4032, height: 3024, format: 'image/jpeg', frames: 1, orientation: 1, colour: 'srgb', alpha: false, bit_depth: 8, progressive: false }, placeholder: { thumbhash: 'F+cNFYKCh3dfeHiHhod4eZmAagrH', data_url: 'data:image/png;base64,...' }, dominant_colour: '#354b67' },
  },
}

registry.registerPath({
  method: 'get',
  path: '/img/{options}/{source}',
  operationId: 'deliverImage',
  security: OPTIONAL_KEY,
  'x-example': { params: { options: 'width=800,format=auto', source: 'photos/cat.jpg' }, headers: { Accept: 'image/avif,image/webp,*/*' } },
  summary: 'Deliver an image from R2 or an origin, converted and cached',
  description:
    'For `<img src>`, `srcset` and CDNs (HEAD too): the image `source` (a key in the R2 bucket `IMAGES`; with `ORIGIN_URL` set, a path under it; ' +
    'or an absolute URL on a host of `ALLOWED_SOURCES`) converted as `POST /api/compress` converts it with the same `options`. ' +
    'A strong `ETag`, `304` for `If-None-Match`, `Cache-Control: public, max-age=IMG_MAX_AGE`, `Vary: Accept` only with `format=auto`, ' +
    'and `Cache-Status` (RFC 9211): answers are stored in the Cache API. With the secret `SIGNING_KEY` set, every URL carries `sig` ' +
    '(base64url HMAC-SHA256 of the path, then `?exp=<exp>` when given) and may carry `exp`; under `UNSIGNED_URLS=presets` an unsigned URL may name ' +
    'only a preset, `format`, a width of `UNSIGNED_WIDTHS` and a quality of `UNSIGNED_QUALITIES`. Conversions and missing keys count against the rate limit; cache hits and 304s do not.',
  request: {
    params: z.object({
      options: z.string().openapi({ param: { name: 'options', in: 'path' }, example: 'width=800,format=auto', description: 'Comma-separated `name=value` pairs with the names and values of the compress options, plus `preset=<name>` (a set of options from `PRESETS`, the URL\'s own laid over it), `onerror=redirect` (origin sources: a 302 to the original instead of an error) and `format=json` (the image\'s facts instead of the image); `_` for none.' }),
      source: z.string().openapi({ param: { name: 'source', in: 'path' }, example: 'photos/cat.jpg', description: 'The rest of the path, slashes included: a bucket key, a path under ORIGIN_URL, or an absolute https:// URL.' }),
    }),
    query: z.object({
      sig: z.string().optional().openapi({ description: 'The signature, when `SIGNING_KEY` is set (`npm run sign`).' }),
      exp: z.string().optional().openapi({ description: 'Unix time after which the signed URL is refused.' }),
    }),
  },
  responses: {
    200: {
      description: 'The converted image.',
      headers: headerObjects({
        ...ANSWER_HEADERS,
        ...RATE_LIMIT_HEADERS,
        ETag: 'Strong: the options, the source and its version, the Accept class of `format=auto` and the build.',
        'Cache-Control': '`public, max-age=IMG_MAX_AGE`.',
        'Cache-Status': '`imgedge; hit` from the Cache API, or `imgedge; fwd=miss; stored`.',
      }),
      content: deliveredContent,
    },
    302: { description: '`onerror=redirect` and the origin image could not be served: `Location` is the original.' },
    304: { description: '`If-None-Match` names this ETag: nothing was read or converted.' },
    ...problems(deliveryErrors),
  },
})

registry.registerPath({
  method: 'get',
  path: '/cdn-cgi/image/{options}/{source}',
  operationId: 'deliverCloudflareImage',
  security: OPTIONAL_KEY,
  'x-example': { params: { options: 'width=800,fit=cover,quality=high,format=auto', source: 'photos/cat.jpg' }, headers: { Accept: 'image/avif,image/webp,*/*' } },
  summary: "Cloudflare's image URL form, answered as GET /img",
  description:
    "Cloudflare's `/cdn-cgi/image/<options>/<source>` (HEAD too), for sites and components (unpic, Nuxt Image, Next.js loaders) that build those URLs: " +
    "Cloudflare's option names, short names and values, each mapped onto the /img options (`/api/formats` `cloudflare` lists them: mapped, not mapped yet, refused), " +
    'then answered exactly as the equivalent `/img` URL: the same bytes, cache entry, ETag and quota. An option imgedge does not do is `400 unsupported_option`, never ignored. ' +
    'Signed URLs are signed over this path as requested (`npm run sign -- /cdn-cgi/image/...`).',
  request: {
    params: z.object({
      options: z.string().openapi({ param: { name: 'options', in: 'path' }, example: 'width=800,fit=cover,quality=high,format=auto', description: "Cloudflare's comma-separated options (`width`/`w`, `height`/`h`, `fit`, `quality`/`q`, `format`/`f`, `background`, `metadata`, `anim`, `onerror`, `compression`, ...)." }),
      source: z.string().openapi({ param: { name: 'source', in: 'path' }, example: 'photos/cat.jpg', description: 'As for /img: a bucket key, a path under ORIGIN_URL, or an absolute URL on ALLOWED_SOURCES, not percent-encoded.' }),
    }),
    query: z.object({
      sig: z.string().optional().openapi({ description: 'The signature of the /cdn-cgi path, when `SIGNING_KEY` is set.' }),
      exp: z.string().optional().openapi({ description: 'Unix time after which the signed URL is refused.' }),
    }),
  },
  responses: {
    200: { description: 'The converted image (or with `format=json` its facts), as GET /img answers it.', content: deliveredContent },
    302: { description: '`onerror=redirect` and the origin image could not be served: `Location` is the original.' },
    304: { description: '`If-None-Match` names this ETag.' },
    ...problems(cloudflareErrors),
  },
})

/** package.json's licence: an SPDX identifier, or npm's UNLICENSED (no licence granted: all rights reserved). */
const LICENSE = pkg.license === 'UNLICENSED' ? { name: 'UNLICENSED: no licence granted, all rights reserved', url: 'https://docs.npmjs.com/cli/v10/configuring-npm/package-json#license' } : { name: pkg.license, identifier: pkg.license }

let document: ReturnType<typeof openapi.getOpenAPI31Document> | undefined

openapi.get('/', (c) => {
  document ??= {
    ...openapi.getOpenAPI31Document({
      openapi: '3.1.0',
      info: { title: 'imgedge', version: pkg.version, description: pkg.description, license: LICENSE },
      servers: [{ url: '/' }],
    }),
    'x-error-codes': codes.map((code) => ({ code, ...ERRORS[code] })),
    'x-rate-limit-headers': { ...RATE_LIMIT_HEADERS, 'Retry-After': 'On 429 only: seconds until one call is allowed again.' },
  }
  return c.json(document, 200, { 'Cache-Control': 'no-cache' })
})
