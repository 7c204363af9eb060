import { cors } from 'hono/cors'
import { limitsOf } from '../env'
import { ANSWER_HEADERS } from '../pipeline/respond'
import { RATE_LIMIT_HEADERS } from '../ratelimit/limit'

/**
 * The API's CORS policy: browser pages of the origins in `CORS_ORIGINS` (default `*`, any) may call every
 * `/api/*` endpoint, send the headers a client needs (an API key included) and read every answer header
 * we document. No credentials mode: keys travel in headers, never cookies, so `*` exposes nothing a page
 * could not already send itself. Preflights are answered here, before rate limiting, and never counted.
 *
 * @example
 * app.use('/api/*', apiCors())
 */
export const apiCors = () =>
  cors({
    origin: (origin, c) => {
      const allowed = limitsOf(c.env).corsOrigins
      if (allowed.includes('*')) return '*'
      return allowed.includes(origin) ? origin : null
    },
    allowMethods: ['GET', 'HEAD', 'POST', 'OPTIONS'],
    allowHeaders: ['Content-Type', 'Accept', 'Authorization', 'X-API-Key'],
    exposeHeaders: [...Object.keys(ANSWER_HEADERS), ...Object.keys(RATE_LIMIT_HEADERS), 'Retry-After', 'Content-Disposition', 'Content-Length', 'ETag', 'Cache-Status'],
    maxAge: 86_400,
  })
