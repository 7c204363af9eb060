import { ApiError } from '../errors'
import { collectFields, parseOptions } from '../pipeline/parse'
import type { CompressOptions } from '../pipeline/options'

/** What a /img path names: the conversion's options and the image's key in the bucket. */
export interface ImagePath {
  options: CompressOptions
  /** The options as written, `_` for none: what the ETag and the cache key are made from. */
  optionsText: string
  /** The object key in the IMAGES bucket, percent-decoded. */
  key: string
}

/**
 * Parse `/img/<options>/<key>`: `<options>` is `name=value` pairs joined by commas, with the names, values and
 * validation of POST /api/compress's query (`_` for none); `<key>` is the rest of the path, slashes included.
 *
 * @example
 * parseImagePath('/img/width=800,format=auto/photos/cat.jpg') // { options: { width: 800, format: 'auto', ... }, key: 'photos/cat.jpg' }
 */
export function parseImagePath(pathname: string): ImagePath {
  const match = /^\/img\/([^/]*)\/(.+)$/.exec(pathname)
  if (!match) throw new ApiError('not_found', `No image in ${pathname}: use /img/<options>/<key>, with _ for no options.`)
  const optionsText = match[1]!
  const key = decodePart(match[2]!, 'key')
  if (key.split('/').some((part) => part === '..' || part === '.')) throw new ApiError('invalid_request', 'The image key may not contain . or .. segments.')
  const fields: Record<string, string> = {}
  if (optionsText !== '_' && optionsText !== '') {
    const pairs = optionsText.split(',').map((pair): [string, string] => {
      const at = pair.indexOf('=')
      if (at <= 0) throw new ApiError('invalid_option', `"${decodePart(pair, 'option')}" is not name=value (options are name=value pairs joined by commas, or _ for none).`, { option: decodePart(pair, 'option') })
      return [decodePart(pair.slice(0, at), 'option'), decodePart(pair.slice(at + 1), 'option')]
    })
    collectFields(pairs, fields)
  }
  return { options: parseOptions(fields), optionsText, key }
}

function decodePart(text: string, what: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    throw new ApiError('invalid_request', `The ${what} in the path is not valid percent-encoding: ${text}`)
  }
}
