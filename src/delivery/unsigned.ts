import { ApiError } from '../errors'
import type { UnsignedRules } from './config'
import type { Presets } from './presets'

/** The options an unsigned URL may name under UNSIGNED_URLS=presets, and which of their values. */
const ALLOWED: Record<string, (value: string, rules: UnsignedRules) => boolean> = {
  preset: () => true,
  format: () => true,
  width: (value, { widths }) => widths.includes(Number(value)),
  quality: (value, { qualities }) => qualities.includes(Number(value)),
}

/**
 * Refuse (403 `unsigned_not_allowed`) an unsigned URL's option that UNSIGNED_URLS=presets does not allow: anything
 * but a preset, `format`, a width of UNSIGNED_WIDTHS and a quality of UNSIGNED_QUALITIES. A public site's pages then
 * need no signatures, and nobody can make the worker convert at sizes or settings the site never uses.
 *
 * @example
 * checkUnsigned({ preset: 'thumb', format: 'auto' }, delivery.unsigned, delivery.presets) // passes
 * checkUnsigned({ width: '333' }, delivery.unsigned, delivery.presets) // throws unsigned_not_allowed
 */
export function checkUnsigned(fields: Record<string, string>, rules: UnsignedRules, presets: Presets): void {
  if (rules.mode !== 'presets') return
  for (const [name, value] of Object.entries(fields)) {
    if (Object.hasOwn(ALLOWED, name) && ALLOWED[name]!(value, rules)) continue
    const names = Object.keys(presets)
    throw new ApiError(
      'unsigned_not_allowed',
      `Unsigned URLs may name only a preset (${names.join(', ') || 'none defined'}), format, a width of UNSIGNED_WIDTHS ` +
        `(${rules.widths.join(', ')}) and a quality of UNSIGNED_QUALITIES (${rules.qualities.join(', ')}): ${name}=${value} is ` +
        'none of them. Sign the URL for anything else.',
      { option: name, presets: names, widths: rules.widths, qualities: rules.qualities },
    )
  }
}
