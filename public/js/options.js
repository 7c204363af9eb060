// The tester's option controls for POST /api/compress, generated from GET /api/formats: which options
// exist (`options`), the output formats and, per format, the ranges and defaults of quality, lossless and
// effort. Value lists of the other options (fit, response) come from /api/openapi.json when it loaded.
import { fill, h, prose } from './dom.js'

const FALLBACK_ENUMS = { fit: ['inside', 'cover', 'contain', 'fill'], response: ['image', 'json'] }

/** Shown unfolded; every other option (and any the server adds) sits under "More options". */
const PRIMARY = ['format', 'quality', 'target', 'width', 'height', 'fit']

/** The output family of an input's MIME type when no format is asked for (GIF becomes PNG). */
export const SAME_AS_INPUT = { 'image/jpeg': 'jpeg', 'image/png': 'png', 'image/gif': 'png', 'image/webp': 'webp', 'image/avif': 'avif' }

/** The query parameters of POST /api/compress in the OpenAPI document, by name. */
function compressParameters(openapi) {
  const list = openapi?.paths?.['/api/compress']?.post?.parameters ?? []
  return Object.fromEntries(list.filter((p) => p.in === 'query').map((p) => [p.name, p]))
}

function field(name, label, control, hintText = '') {
  const hint = h('p', { class: 'hint', id: `hint-${name}` }, prose(hintText))
  control.setAttribute('aria-describedby', hint.id)
  return { wrap: h('div', { class: 'field' }, h('label', { for: control.id }, label), control, hint), control, hint }
}

function checkField(name, label, control, hintText = '') {
  const hint = h('p', { class: 'hint', id: `hint-${name}` }, prose(hintText))
  control.setAttribute('aria-describedby', hint.id)
  return { wrap: h('div', { class: 'field' }, h('label', { class: 'check' }, control, label), hint), control, hint }
}

/** A control differing from its default (what read() would send). */
const isSet = (control) => (control.type === 'checkbox' ? control.checked !== (control.dataset.default === 'true') : control.value.trim() !== '')

const numberInput = (name, min, max) => h('input', { type: 'number', id: `opt-${name}`, name, min, max, step: 1, inputmode: 'numeric' })

/**
 * Build the controls into `container` and return { read(): URLSearchParams, set(pairs), update() }: read for the
 * request, set to take an example's options ("Try it"), update after the input file changed. `inputType()` is the
 * chosen file's MIME type, which decides the output format when none is asked for. Empty controls are not sent, so
 * the server's defaults apply, and what is sent is exactly what was set.
 */
export function buildOptionControls(container, formats, openapi, { inputType = () => '' } = {}) {
  const params = compressParameters(openapi)
  const encoders = formats.formats.filter((f) => f.encode)
  const byId = Object.fromEntries(formats.formats.map((f) => [f.id, f]))
  const maxDimension = formats.limits?.maxDimension ?? 16384
  const controls = {}

  const makers = {
    format() {
      const select = h(
        'select',
        { id: 'opt-format', name: 'format' },
        h('option', { value: '' }, "(the input's format)"),
        encoders.map((f) => h('option', { value: f.id }, `${f.id}: ${f.label}`)),
        h('option', { value: 'auto' }, 'auto: from the Accept header'),
      )
      return field('format', 'format', select, 'Output format.')
    },
    // a number or `auto` (the perceptual search; `target` then sets its score)
    quality: () => {
      const input = h('input', { type: 'text', id: 'opt-quality', name: 'quality', pattern: 'auto|[0-9]{1,3}', list: 'quality-values', autocomplete: 'off', spellcheck: 'false' })
      const entry = field('quality', 'quality', input)
      entry.wrap.append(h('datalist', { id: 'quality-values' }, h('option', { value: 'auto' })))
      return entry
    },
    lossless: () => checkField('lossless', 'lossless', h('input', { type: 'checkbox', id: 'opt-lossless', name: 'lossless' })),
    effort: () => field('effort', 'effort', numberInput('effort', 0, 9)),
    width: () => field('width', 'width', numberInput('width', 1, maxDimension), `1–${maxDimension} px`),
    height: () => field('height', 'height', numberInput('height', 1, maxDimension), `1–${maxDimension} px`),
    // on by default: unchecked sends animated=false
    animated: () => checkField('animated', 'animated', h('input', { type: 'checkbox', id: 'opt-animated', name: 'animated', checked: '', 'data-default': 'true' }), 'An animated GIF or WebP to WebP keeps every frame; unchecked, the first frame only.'),
    enlarge: () => checkField('enlarge', 'enlarge', h('input', { type: 'checkbox', id: 'opt-enlarge', name: 'enlarge' }), 'Allow output larger than the input.'),
    background: () =>
      field(
        'background',
        'background',
        h('input', { type: 'text', id: 'opt-background', name: 'background', placeholder: '#ffffff', pattern: '#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})', spellcheck: 'false', autocomplete: 'off' }),
        'Hex colour behind transparency (JPEG) and for contain padding.',
      ),
  }

  /** Options with a list of values and nothing format-specific: a select with "(default)" first. */
  const enumField = (name) => {
    const schema = params[name]?.schema ?? {}
    const values = schema.enum ?? FALLBACK_ENUMS[name]
    if (!values) return field(name, name, h('input', { type: 'text', id: `opt-${name}`, name, autocomplete: 'off' }), params[name]?.description)
    const fallbackDefault = name === 'fit' ? 'inside' : name === 'response' ? 'image' : undefined
    const def = schema.default ?? fallbackDefault
    const select = h(
      'select',
      { id: `opt-${name}`, name },
      h('option', { value: '' }, def ? `(default: ${def})` : '(default)'),
      values.map((value) => h('option', { value }, value)),
    )
    return field(name, name, select, params[name]?.description ?? '')
  }

  container.replaceChildren()
  const more = h('div', { class: 'grid' })
  for (const name of formats.options) {
    controls[name] = (makers[name] ?? (() => enumField(name)))()
    ;(PRIMARY.includes(name) ? container : more).append(controls[name].wrap)
  }
  const folded = Object.keys(controls).filter((name) => !PRIMARY.includes(name))
  const summary = h('summary', {})
  const details = folded.length ? h('details', { class: 'more-options' }, summary, more) : null
  if (details) container.after(details)

  // Per-format ranges, defaults and descriptions; options the chosen format cannot take are disabled,
  // because the server answers 400 to them rather than ignoring them.
  function update() {
    const asked = controls.format?.control.value ?? ''
    const chosen = byId[asked === 'jpg' ? 'jpeg' : asked] ?? (asked === '' ? byId[SAME_AS_INPUT[inputType()]] : undefined)
    const spec = (option) => (chosen ? chosen.options?.[option] : encoders.find((f) => f.options?.[option])?.options[option])
    const lossless = controls.lossless?.control
    if (lossless) {
      const usable = !chosen || Boolean(chosen.options?.lossless)
      lossless.disabled = !usable
      if (!usable) lossless.checked = false
      fill(controls.lossless.hint, prose(usable ? spec('lossless')?.description ?? '' : `${chosen.id} has no lossless option.`))
    }
    for (const option of ['quality', 'effort']) {
      const entry = controls[option]
      if (!entry) continue
      const s = spec(option)
      const blocked = option === 'quality' && lossless?.checked
      entry.control.disabled = !s || blocked
      if (entry.control.disabled) entry.control.value = ''
      if (!s) {
        fill(entry.hint, `${chosen.id} has no ${option} option.`)
        continue
      }
      entry.control.min = s.min
      entry.control.max = s.max
      entry.control.placeholder = chosen ? String(s.default) : ''
      const range = `${s.min}–${s.max}, default ${chosen ? s.default : 'per format'}`
      const auto = option === 'quality' && chosen?.autoQuality ? ` Or auto: the lowest quality that reaches target (default ${chosen.autoQuality.target}).` : option === 'quality' && !chosen ? ' Or auto: searched for a perceptual target.' : ''
      fill(entry.hint, prose(blocked ? 'Not used with lossless.' : `${range}. ${chosen ? s.description : ''}${auto}`))
    }
    // Options the server refuses (400) rather than ignores when they cannot apply: disabled, and the hint says why.
    const quality = controls.quality?.control.value.trim()
    const outputPng = chosen?.id === 'png'
    const rules = {
      colors: [outputPng, `PNG output only: choose format png${asked === '' ? ' (or send a PNG or GIF)' : ''}.`],
      target: [quality === 'auto', 'Only with quality=auto: the score its search aims for.'],
      max_bytes: [!lossless?.checked, 'Lossy output only: not with lossless.'],
    }
    for (const [name, [usable, why]] of Object.entries(rules)) {
      const entry = controls[name]
      if (!entry) continue
      entry.original ??= [...entry.hint.childNodes]
      entry.control.disabled = !usable
      if (!usable) entry.control.value = ''
      fill(entry.hint, usable ? entry.original : why)
    }
    if (details) {
      const set = folded.filter((name) => !controls[name].control.disabled && isSet(controls[name].control)).length
      summary.textContent = `More options (${folded.length}${set ? `, ${set} set` : ''})`
    }
    if (controls.format) {
      controls.format.hint.textContent = asked !== '' && chosen
        ? `${chosen.mime}; ${chosen.lossy ? 'lossy' : 'lossless'}${chosen.lossless && chosen.lossy ? ' or lossless' : ''}${chosen.alpha ? ', keeps transparency' : ', no transparency'}.`
        : controls.format.control.value === 'auto'
          ? 'AVIF or WebP when the Accept header lists it, else the input\'s family.'
          : "Same as the input (GIF becomes PNG)."
    }
  }
  controls.format?.control.addEventListener('change', update)
  controls.lossless?.control.addEventListener('change', update)
  controls.quality?.control.addEventListener('input', update)
  more.addEventListener('change', update)
  update()

  return {
    update,
    set(pairs) {
      for (const { control } of Object.values(controls)) {
        if (control.type === 'checkbox') control.checked = control.dataset.default === 'true'
        else control.value = ''
      }
      for (const [name, value] of pairs) {
        const control = controls[name]?.control
        if (!control) continue
        if (control.type === 'checkbox') control.checked = value === 'true' || value === '1'
        else {
          if (control.tagName === 'SELECT' && ![...control.options].some((option) => option.value === value)) control.append(h('option', { value }, value))
          control.value = value
        }
      }
      update()
      if (details && folded.some((name) => isSet(controls[name].control))) details.open = true
    },
    read() {
      const query = new URLSearchParams()
      for (const [name, { control }] of Object.entries(controls)) {
        if (control.disabled) continue
        if (control.type === 'checkbox') {
          if (control.dataset.default === 'true') {
            if (!control.checked) query.set(name, 'false')
          } else if (control.checked) query.set(name, 'true')
        } else if (control.value.trim() !== '') {
          query.set(name, control.value.trim())
        }
      }
      return query
    },
  }
}
