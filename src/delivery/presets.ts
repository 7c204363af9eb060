// No imports: scripts/doctor.mjs loads this file in Node as it is.

/** Named option sets: a preset's name to its option fields (`{ width: '320', fit: 'cover' }`), not yet validated. */
export type Presets = Record<string, Record<string, string>>

/**
 * Read `PRESETS`: `name=option:value,option:value;name=...` (whitespace and newlines around the parts are ignored).
 * Throws on a part that does not follow the grammar or a name given twice; the option names and values are checked
 * against the options schema by the caller (src/delivery/config.ts).
 *
 * @example
 * parsePresets('thumb=width:320,height:320,fit:cover;hero=width:1600')
 * // { thumb: { width: '320', height: '320', fit: 'cover' }, hero: { width: '1600' } }
 */
export function parsePresets(text: string): Presets {
  const presets: Presets = {}
  for (const entry of text.split(';').map((part) => part.trim()).filter(Boolean)) {
    const match = /^([a-z0-9_-]+)\s*=(.*)$/i.exec(entry)
    if (!match) throw new Error(`PRESETS: "${entry}" is not name=option:value,...`)
    const name = match[1]!
    if (Object.hasOwn(presets, name)) throw new Error(`PRESETS: "${name}" is defined twice`)
    const fields: Record<string, string> = {}
    for (const pair of match[2]!.split(',').map((part) => part.trim()).filter(Boolean)) {
      const at = pair.indexOf(':')
      const option = pair.slice(0, at).trim()
      if (at <= 0 || option === 'preset' || Object.hasOwn(fields, option)) throw new Error(`PRESETS: "${pair}" in ${name} is not option:value, or repeats an option`)
      fields[option] = pair.slice(at + 1).trim()
    }
    presets[name] = fields
  }
  return presets
}
