import { ApiError } from '../errors'
import { signatureMatches } from './signature'

export { signPath } from './signature'

/**
 * Refuse a /img URL whose signature is missing, wrong or expired (403), when a signing secret is set; with none,
 * every URL is served.
 *
 * @example
 * await checkSignature(new URL(c.req.url), deliveryOf(c.env).signingKey, Date.now() / 1000)
 */
export async function checkSignature(url: URL, secret: string | undefined, nowSeconds: number): Promise<void> {
  if (secret === undefined) return
  const sig = url.searchParams.get('sig')
  if (sig === null) throw new ApiError('signature_required', 'This service signs its image URLs: add the sig parameter (npm run sign).')
  const expText = url.searchParams.get('exp')
  const exp = expText === null ? undefined : Number(expText)
  const valid = (exp === undefined || (Number.isSafeInteger(exp) && String(exp) === expText)) && (await signatureMatches(url.pathname, exp, sig, secret))
  if (!valid) throw new ApiError('invalid_signature', 'The sig parameter does not match this path (and exp): the URL was changed or signed with another key.')
  if (exp !== undefined && exp < nowSeconds) throw new ApiError('signature_expired', `This signed URL expired at ${new Date(exp * 1000).toISOString()}.`, { expires: exp })
}
