import { ApiError } from '../errors'
import type { CompressOptions } from '../pipeline/options'
import { collectFields, parseOptions } from '../pipeline/parse'
import type { UnsignedRules } from './config'
import type { Presets } from './presets'
import { checkUnsigned } from './unsigned'

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

export interface PathRules {
  /** PRESETS: `preset=<name>` stands for its options; the URL's own options override them. */
  presets: Presets
  /** Given for an unsigned URL: what it may name (UNSIGNED_URLS), checked before its values are. */
  unsigned?: UnsignedRules
}

/**
 * Parse `/img/<options>/<source>`: `<options>` is `name=value` pairs joined by commas, with the names, values and
 * validation of POST /api/compress's query (`_` for none), `preset=<name>`, `onerror=redirect` and `format=json`;
 * `<source>` is the rest of the path.
 *
 * @example
 * parseImagePath('/img/width=800,format=auto/photos/cat.jpg') // { options: { width: 800, format: 'auto', ... }, rawSource: 'photos/cat.jpg' }
 * parseImagePath('/img/preset=thumb/cat.jpg', { presets: { thumb: { width: '320' } } }) // { options: { width: 320, ... }, ... }
 */
export function parseImagePath(pathname: string, { presets, unsigned }: PathRules = { presets: {} }): ImagePath {
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
  if (unsigned) checkUnsigned(fields, unsigned, presets)
  const { onerror, preset, ...compressFields } = fields
  if (onerror !== undefined && onerror !== 'redirect') throw new ApiError('invalid_option', 'onerror: the only value is redirect.', { option: 'onerror' })
  if (preset !== undefined && !Object.hasOwn(presets, preset)) {
    throw new ApiError('invalid_option', `preset: no preset ${JSON.stringify(preset)} (PRESETS has ${Object.keys(presets).join(', ') || 'none'}).`, { option: 'preset' })
  }
  const presetFields = preset === undefined ? {} : presets[preset]
  const merged: Record<string, string> = { ...presetFields, ...compressFields }
  const json = merged.format === 'json'
  if (json) delete merged.format
  return { options: parseOptions(merged), onError: onerror, json, rawSource: match[2]! }
}

/** A part of a /img path percent-decoded; `what` (an option, the source) names it when it is not valid percent-encoding. */
export function decodePart(text: string, what = 'An option'): string {
  try {
    return decodeURIComponent(text)
  } catch {
    throw new ApiError('invalid_request', `${what} in the path is not valid percent-encoding: ${text}`)
  }
}
