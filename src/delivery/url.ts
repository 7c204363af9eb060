import { ApiError } from '../errors'
import type { CompressOptions } from '../pipeline/options'
import { collectFields, parseOptions } from '../pipeline/parse'

/** What a /img path names: the conversion's options and, still percent-encoded, its source. */
export interface ImagePath {
  options: CompressOptions
  /** `onerror=redirect` (origin sources only): a source that cannot be served answers 302 to it instead. */
  onError: 'redirect' | undefined
  /** `format=json`: the image's facts (src/pipeline/describe.ts) instead of an image; `options` then has no format. */
  json: boolean
  /** The path after the options: a bucket key, a path under ORIGIN_URL, or an absolute URL (see resolveSource). */
  rawSource: string
}

/**
 * Parse `/img/<options>/<source>`: `<options>` is `name=value` pairs joined by commas, with the names, values and
 * validation of POST /api/compress's query (`_` for none), `onerror=redirect` and `format=json`; `<source>` is the rest of the path.
 *
 * @example
 * parseImagePath('/img/width=800,format=auto/photos/cat.jpg') // { options: { width: 800, format: 'auto', ... }, rawSource: 'photos/cat.jpg' }
 */
export function parseImagePath(pathname: string): ImagePath {
  const match = /^\/img\/([^/]*)\/(.+)$/.exec(pathname)
  if (!match) throw new ApiError('not_found', `No image in ${pathname}: use /img/<options>/<source>, with _ for no options.`)
  const optionsText = match[1]!
  const fields: Record<string, string> = {}
  if (optionsText !== '_' && optionsText !== '') {
    const pairs = optionsText.split(',').map((pair): [string, string] => {
      const at = pair.indexOf('=')
      if (at <= 0) throw new ApiError('invalid_option', `"${decodePart(pair)}" is not name=value (options are name=value pairs joined by commas, or _ for none).`, { option: decodePart(pair) })
      return [decodePart(pair.slice(0, at)), decodePart(pair.slice(at + 1))]
    })
    collectFields(pairs, fields)
  }
  const { onerror, ...compressFields } = fields
  if (onerror !== undefined && onerror !== 'redirect') throw new ApiError('invalid_option', 'onerror: the only value is redirect.', { option: 'onerror' })
  const json = compressFields.format === 'json'
  if (json) delete compressFields.format
  return { options: parseOptions(compressFields), onError: onerror, json, rawSource: match[2]! }
}

/** A part of a /img path percent-decoded; `what` (an option, the source) names it when it is not valid percent-encoding. */
export function decodePart(text: string, what = 'An option'): string {
  try {
    return decodeURIComponent(text)
  } catch {
    throw new ApiError('invalid_request', `${what} in the path is not valid percent-encoding: ${text}`)
  }
}
