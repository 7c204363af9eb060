import { type ExecutionContext, Hono } from 'hono'
import { deliveryOf } from '../delivery/config'
import { checkSignature, signPath } from '../delivery/sign'
import { cloudflareToImg } from '../dialects/cloudflare'
import { ApiError } from '../errors'

/** Where the translated request goes: the app that serves /img (so its middleware and error handling apply). */
export type Dispatch = (request: Request, env: Env, ctx: ExecutionContext) => Response | Promise<Response>

/**
 * The /img path a Cloudflare URL names: its options translated (src/dialects/cloudflare.ts), its source as it is.
 *
 * @example
 * imgPathOf('/cdn-cgi/image/w=800,f=webp/photos/cat.jpg') // '/img/width=800,format=webp/photos/cat.jpg'
 */
export function imgPathOf(pathname: string): string {
  const match = /^\/cdn-cgi\/image\/([^/]*)\/(.+)$/.exec(pathname)
  if (!match) throw new ApiError('not_found', `No image in ${pathname}: use /cdn-cgi/image/<options>/<source>.`)
  return `/img/${cloudflareToImg(match[1]!)}/${match[2]!}`
}

/**
 * GET (and HEAD) /cdn-cgi/image/<options>/<source>: Cloudflare's URL form, answered exactly as GET /img answers the
 * equivalent /img URL (same cache entry, ETag, quotas and bytes). A signed URL is signed over the /cdn-cgi path as
 * requested (`npm run sign -- /cdn-cgi/image/...`); once that is checked here, the /img URL is signed again inside
 * the worker with the same key and `exp`, so /img's own check passes and nothing else in /img changes.
 *
 * @example
 * app.route('/cdn-cgi/image', cdnCgi((request, env, ctx) => app.fetch(request, env, ctx)))
 */
export const cdnCgi = (dispatch: Dispatch) =>
  new Hono<{ Bindings: Env }>().get('/*', async (c) => {
    const url = new URL(c.req.url)
    const delivery = deliveryOf(c.env)
    const { signingKey } = delivery
    // An unsigned URL (where UNSIGNED_URLS allows one) goes on unsigned: /img applies what it may name.
    const verified = await checkSignature(url, delivery, Date.now() / 1000)
    const extra = [...url.searchParams.keys()].find((name) => name !== 'sig' && name !== 'exp')
    if (extra !== undefined) throw new ApiError('invalid_option', `GET /cdn-cgi/image takes its options in the path, not the query (${extra}).`, { option: extra })
    const path = imgPathOf(url.pathname)
    const exp = url.searchParams.get('exp')
    const signed = !verified || signingKey === undefined ? path : await signPath(path, signingKey, exp === null ? undefined : Number(exp))
    return dispatch(new Request(new URL(signed, url), c.req.raw), c.env, c.executionCtx)
  })
