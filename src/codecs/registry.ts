import { avif } from './avif'
import { gif } from './gif'
import { jpeg } from './jpeg'
import { png } from './png'
import type { Codec, FormatId, OutputFormat } from './types'
import { webp } from './webp'

/**
 * Every format the service knows, in the order /api/formats lists them. This is the one list:
 * the option schema, /api/formats, health checks and the docs are all generated from it.
 */
export const CODECS: Readonly<Record<FormatId, Codec>> = { jpeg, png, webp, avif, gif }

export const OUTPUT_FORMATS = Object.values(CODECS)
  .filter((codec) => codec.encode)
  .map((codec) => codec.id as OutputFormat)

/** The format an input becomes when the client does not choose: its own, except GIF becomes PNG. */
export function defaultOutputFor(input: FormatId): OutputFormat {
  return CODECS[input].encode ? (input as OutputFormat) : 'png'
}

export type { Codec, FormatId, OutputFormat } from './types'
