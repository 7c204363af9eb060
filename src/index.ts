import { Hono } from 'hono'
import { secureHeaders } from 'hono/secure-headers'
import { ApiError, problemOf, problemResponse } from './errors'
import { apiCors } from './lib/cors'
import { cdnCgi } from './routes/cdn-cgi'
import { compress } from './routes/compress'
import { formats } from './routes/formats'
import { health } from './routes/health'
import { img } from './routes/img'
import { openapi } from './routes/openapi'

/**
 * imgedge: the Hono app. Middleware order: security headers, CORS (answers preflights), then routes;
 * every error, ours or not, leaves as application/problem+json.
 */
export const app = new Hono<{ Bindings: Env }>()

app.use('*', secureHeaders({ crossOriginResourcePolicy: 'cross-origin', crossOriginOpenerPolicy: false }))
app.use('/api/*', apiCors())
app.use('/img/*', apiCors())
// (a /cdn-cgi answer is /img's, CORS headers included: only its preflight is answered here)
app.on('OPTIONS', '/cdn-cgi/*', apiCors())

app.route('/api/health', health)
app.route('/api/formats', formats)
app.route('/api/compress', compress)
app.route('/api/openapi.json', openapi)
app.route('/img', img)
// Cloudflare's URL form, translated and answered by /img through the whole app (its middleware and onError)
app.route('/cdn-cgi/image', cdnCgi((request, env, ctx) => app.fetch(request, env, ctx)))

/** Known paths with another method: 405 with the allowed one, rather than a misleading 404. */
for (const [path, allow] of [
  ['/api/health', 'GET, HEAD'],
  ['/api/formats', 'GET, HEAD'],
  ['/api/compress', 'POST'],
  ['/api/openapi.json', 'GET, HEAD'],
  ['/img/*', 'GET, HEAD'],
  ['/cdn-cgi/image/*', 'GET, HEAD'],
] as const) {
  app.all(path, (c) => {
    throw new ApiError('method_not_allowed', `${c.req.method} is not allowed on ${path}; use ${allow}.`, {}, { Allow: allow })
  })
}

app.notFound((c) => problemResponse(problemOf('not_found', `No route for ${c.req.method} ${new URL(c.req.url).pathname}.`)))

app.onError((error, c) => {
  if (error instanceof ApiError) return error.getResponse()
  console.error(`unhandled error on ${c.req.method} ${new URL(c.req.url).pathname}: ${(error as Error).stack ?? error}`)
  return problemResponse(problemOf('internal_error', 'The server failed to handle this request.'))
})

export default app
export { RateLimiter } from './ratelimit/limiter'
