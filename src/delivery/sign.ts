import { signatureMatches } from '../../signers/js/imgedge-sign.mjs'
import { ApiError } from '../errors'
import type { Delivery } from './config'

export { signPath } from '../../signers/js/imgedge-sign.mjs'

/**
 * Check a /img URL's signature: true when it carries a valid one (anything may then be asked for); false when it
 * carries none and UNSIGNED_URLS lets it through (`all`, or `presets` for the caller to check its options against).
 * A missing signature under `none` (the default with SIGNING_KEY set), a wrong one or an expired one is a 403.
 *
 * @example
 * const signed = await checkSignature(new URL(c.req.url), deliveryOf(c.env), Date.now() / 1000)
 */
export async function checkSignature(url: URL, { signingKey: secret, unsigned }: Delivery, nowSeconds: number): Promise<boolean> {
  const sig = url.searchParams.get('sig')
  if (sig === null || secret === undefined) {
    if (unsigned.mode !== 'none') return false
    throw new ApiError('signature_required', 'This service signs its image URLs: add the sig parameter (npm run sign), or use a preset where UNSIGNED_URLS=presets.')
  }
  const expText = url.searchParams.get('exp')
  const exp = expText === null ? undefined : Number(expText)
  const valid = (exp === undefined || (Number.isSafeInteger(exp) && String(exp) === expText)) && (await signatureMatches(url.pathname, exp, sig, secret))
  if (!valid) throw new ApiError('invalid_signature', 'The sig parameter does not match this path (and exp): the URL was changed or signed with another key.')
  if (exp !== undefined && exp < nowSeconds) throw new ApiError('signature_expired', `This signed URL expired at ${new Date(exp * 1000).toISOString()}.`, { expires: exp })
  return true
}
