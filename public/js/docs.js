// The documentation area, rendered from the OpenAPI 3.1 document at /api/openapi.json: every endpoint,
// its parameters, request body, answers and answer headers, the JSON answer's fields, and the error codes.
import { curlCommand } from './curl.js'
import { codeTabs } from './code-tabs.js'
import { fill, h, prose, table } from './dom.js'
import { outputName } from './names.js'
import { jsSnippet, pythonSnippet } from './snippets.js'

const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head']
const TIMING = /^server-timing$/i
const RATE = /^(ratelimit|ratelimit-policy|x-ratelimit-.*|retry-after)$/i

export const operationId = (method, path) => `op-${method}-${path.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '')}`

/** Resolve a local `$ref` (`#/components/schemas/Name`). */
function resolve(doc, schema) {
  if (!schema?.$ref?.startsWith('#/')) return schema
  return schema.$ref
    .slice(2)
    .split('/')
    .reduce((node, key) => node?.[key], doc)
}

/** Text with `code` spans; spans naming an error code link to its row in the error table. */
function describe(text, codes) {
  return prose(text).map((node) =>
    typeof node !== 'string' && codes.has(node.textContent) ? h('a', { href: `#error-${node.textContent}` }, node) : node,
  )
}

/** The values a schema allows, in a few words: an enum, a range, a type, a pattern; `anyOf` as its alternatives. */
function valuesOf(schema = {}) {
  const alternatives = schema.anyOf ?? schema.oneOf
  if (alternatives) return h('span', { class: 'values' }, alternatives.map((alternative, i) => [i ? ' or ' : '', valuesOf(alternative)]))
  if (schema.enum) return h('span', { class: 'values' }, schema.enum.map((value) => h('code', {}, String(value))))
  const types = [schema.type].flat().filter((type) => type && type !== 'null')
  let text = types.join(' or ') || 'any'
  const { minimum: min, maximum: max } = schema
  if (min !== undefined && max !== undefined) text += ` ${min}–${max}`
  else if (min !== undefined) text += ` ≥ ${min}`
  else if (max !== undefined) text += ` ≤ ${max}`
  if (schema.format) text += ` (${schema.format})`
  return schema.pattern ? [text, ' matching ', h('code', { class: 'pattern' }, schema.pattern)] : text
}

/** Parameters shown unfolded besides path and required ones; the other optional ones sit under a fold. */
const PRIMARY_PARAMETERS = ['format', 'quality', 'width', 'height', 'fit', 'deep']

function parametersTable(parameters, codes) {
  const rows = (list) =>
    table(
      ['name', 'values', 'meaning'],
      list.map((p) => [
        [h('code', {}, p.name), h('span', { class: 'param-in' }, p.required ? `${p.in}, required` : p.in)],
        [valuesOf(p.schema), p.schema?.default === undefined ? '' : [h('br'), 'default ', h('code', {}, String(p.schema.default))]],
        describe(p.description ?? p.schema?.description ?? '', codes),
      ]),
    )
  const shown = parameters.filter((p) => p.in === 'path' || p.required || PRIMARY_PARAMETERS.includes(p.name))
  const folded = parameters.filter((p) => !shown.includes(p))
  return [
    h('h4', {}, 'Parameters'),
    shown.length > 0 && rows(shown),
    folded.length > 0 && h('details', { class: 'more-parameters' }, h('summary', {}, `${shown.length ? 'More optional parameters' : 'Optional parameters'} (${folded.length})`), rows(folded)),
  ]
}

function headersTable(headers, codes) {
  return table(
    ['header', 'meaning'],
    Object.entries(headers).map(([name, header]) => {
      const kind = TIMING.test(name) ? 'timing' : RATE.test(name) ? 'rate' : ''
      return {
        cells: [h('code', {}, name), describe(header.description ?? '', codes)],
        attrs: { class: kind && `${kind}-row` },
      }
    }),
  )
}

/** The fields of an object schema, nested objects flattened to dotted names (`input.width`). */
function fieldRows(doc, schema, prefix = '') {
  const target = resolve(doc, schema)
  return Object.entries(target?.properties ?? {}).flatMap(([name, raw]) => {
    const property = resolve(doc, raw)
    const path = `${prefix}${name}`
    const row = [h('code', {}, path), valuesOf(property), prose(property.description ?? '')]
    return property.properties ? [row, ...fieldRows(doc, property, `${path}.`)] : [row]
  })
}

function requestBody(doc, body) {
  const types = Object.keys(body.content ?? {})
  const multipart = resolve(doc, body.content?.['multipart/form-data']?.schema)
  return h(
    'div',
    {},
    h('h4', {}, 'Request body', body.required ? ' (required)' : ''),
    h('p', {}, 'Content types: ', types.map((type, i) => [i ? ', ' : '', h('code', {}, type)])),
    multipart?.properties &&
      h(
        'p',
        {},
        'As multipart/form-data: ',
        Object.keys(multipart.properties).map((name, i) => [i ? ', ' : '', 'field ', h('code', {}, name)]),
        multipart.additionalProperties ? ', and the options as form fields of the same names.' : '.',
      ),
    body.description && h('p', {}, prose(body.description)),
  )
}

function responses(doc, list, codes) {
  const parts = [
    h('h4', {}, 'Answers'),
    table(
      ['status', 'meaning', 'content types'],
      Object.entries(list).map(([status, raw]) => {
        const answer = resolve(doc, raw)
        return [
          h('code', {}, status),
          describe(answer.description ?? '', codes),
          Object.keys(answer.content ?? {}).map((type, i) => [i ? ', ' : '', h('code', {}, type)]),
        ]
      }),
    ),
  ]
  for (const [status, raw] of Object.entries(list)) {
    const answer = resolve(doc, raw)
    if (answer.headers && Object.keys(answer.headers).length) {
      parts.push(h('h4', {}, `Headers of a ${status} answer`), headersTable(answer.headers, codes))
    }
    // Only named schemas (a $ref) describe their fields; inline ones here are placeholders.
    const json = answer.content?.['application/json']?.schema
    const rows = status.startsWith('2') && json?.$ref ? fieldRows(doc, json) : []
    if (rows.length) parts.push(h('h4', {}, `JSON body of a ${status} answer`), table(['field', 'type', 'meaning'], rows))
  }
  return parts
}

/** The tester's endpoint for each documented path ("Try it" selects it). */
const TESTER_ENDPOINTS = { '/api/compress': 'compress', '/api/formats': 'formats', '/api/health': 'health', '/img/{options}/{source}': 'img' }

/** The example call of the endpoint, from its `x-example` (path parameters, query, headers, the file sent). */
function exampleCall(path, method, op) {
  const example = op['x-example'] ?? {}
  const filled = path.replace(/\{(\w+)\}/g, (_, name) => example.params?.[name] ?? `{${name}}`)
  const query = new URLSearchParams(example.query ?? {}).toString()
  const url = `${location.origin}${filled}${query ? `?${query}` : ''}`
  const headers = { ...(example.contentType ? { 'Content-Type': example.contentType } : {}), ...example.headers }
  const format = example.query?.format ?? /(?:^|,)format=(\w+)/.exec(example.params?.options ?? '')?.[1]
  const image = example.body || /^\/img\//.test(path)
  // An image answer is written beside the file sent under another name (format=auto: the extension is not known yet).
  const output = image ? outputName(example.body ?? example.params?.source, format && format !== 'auto' ? `x.${format}` : '') : undefined
  return { example, request: { method: method.toUpperCase(), url, headers, fileName: example.body, output } }
}

/** The examples column: the call in curl, JavaScript and Python with copy buttons, "Try it", the example answers. */
function examplesColumn(doc, path, method, op) {
  const id = operationId(method, path)
  const { example, request } = exampleCall(path, method, op)
  const tabs = codeTabs({
    id,
    label: `Language of the ${method.toUpperCase()} ${path} example`,
    pre: { curl: { class: 'example-request' }, js: { class: 'example-js' }, py: { class: 'example-py' } },
  })
  tabs.set({ curl: curlCommand(request), js: jsSnippet(request), py: pythonSnippet(request) })
  const endpoint = TESTER_ENDPOINTS[path]
  const tryIt =
    endpoint &&
    h(
      'p',
      {},
      h('button', { type: 'button', class: 'try-it', 'data-endpoint': endpoint, onclick: () => document.dispatchEvent(new CustomEvent('imgedge:try', { detail: { endpoint, example } })) }, 'Try it'),
      ' ',
      h('span', { class: 'hint' }, 'in the tester above, with these parameters'),
    )
  return h('div', { class: 'op-examples' }, h('h4', {}, 'Example request'), tabs.element, tryIt, exampleAnswers(doc, op.responses))
}

/** The answers' examples: the JSON body of a 2xx, and one problem per error status. */
function exampleAnswers(doc, list) {
  const shown = []
  for (const [status, raw] of Object.entries(list ?? {})) {
    const answer = resolve(doc, raw)
    for (const [type, media] of Object.entries(answer.content ?? {})) {
      if (media.example === undefined) continue
      shown.push(h('p', { class: 'example-label' }, h('code', {}, status), ' ', h('code', {}, type)), h('pre', { class: 'code example-answer', tabindex: '0' }, JSON.stringify(media.example, null, 2)))
    }
  }
  return shown.length ? [h('details', { class: 'examples' }, h('summary', {}, `Example answers (${shown.length / 2})`), shown)] : null
}

/** One endpoint: its documentation, and beside it on wide screens (below on narrow ones) its examples. */
function operation(doc, path, method, op, codes) {
  return h(
    'article',
    { class: 'op', id: operationId(method, path), 'aria-labelledby': `${operationId(method, path)}-title` },
    h('h3', { id: `${operationId(method, path)}-title` }, h('span', { class: 'method' }, method.toUpperCase()), h('code', {}, path), op.summary ?? ''),
    h(
      'div',
      { class: 'op-body' },
      h(
        'div',
        { class: 'op-doc' },
        op.description && h('p', {}, describe(op.description, codes)),
        Boolean(op.parameters?.length) && parametersTable(op.parameters, codes),
        op.requestBody && requestBody(doc, resolve(doc, op.requestBody)),
        op.responses && responses(doc, op.responses, codes),
      ),
      examplesColumn(doc, path, method, op),
    ),
  )
}

/** The error table: one row per code, with the `id="error-<code>"` that problem `type` URIs point at. */
function errorTable(doc) {
  const problem = doc.components?.schemas?.Problem
  const list = doc['x-error-codes'] ?? (problem?.properties?.code?.enum ?? []).map((code) => ({ code }))
  return [
    h('h3', { id: 'errors' }, 'Error codes'),
    h(
      'p',
      { class: 'errors-intro' },
      'Every error is ',
      h('code', {}, 'application/problem+json'),
      ' (RFC 9457) with a stable ',
      h('code', {}, 'code'),
      ' to branch on; its ',
      h('code', {}, 'type'),
      ' links to the row below.',
    ),
    problem && h('div', { class: 'error-part' }, h('h4', {}, 'Fields of a problem'), table(['field', 'type', 'meaning'], fieldRows(doc, problem))),
    h('div', { class: 'error-part' }, h('h4', {}, 'Codes'), table(
      ['code', 'status', 'title', 'when'],
      list.map((entry) => ({
        cells: [
          h('a', { href: `#error-${entry.code}` }, h('code', {}, entry.code)),
          entry.status === undefined ? '' : String(entry.status),
          entry.title ?? '',
          prose(entry.when ?? ''),
        ],
        attrs: { id: `error-${entry.code}` },
      })),
      { class: 'errors' },
    )),
  ]
}

/**
 * Search: narrow the documentation to the endpoints, parameter and field rows and error codes whose text has every
 * word typed (case-insensitive); an endpoint stays whole when its heading matches. Empty: everything shown. The quick
 * links, the error area's headings and the side panel (told by an `imgedge:search` event) follow what is shown.
 */
function searchBox(container) {
  const input = h('input', { type: 'search', id: 'docs-search', autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'docs-search-count' })
  const count = h('p', { id: 'docs-search-count', class: 'hint', role: 'status' }, '')
  const matches = (el, words) => {
    const text = el.textContent.toLowerCase()
    return words.every((word) => text.includes(word))
  }
  input.addEventListener('input', () => {
    const words = input.value.toLowerCase().split(/\s+/).filter(Boolean)
    let found = 0
    for (const op of container.querySelectorAll('article.op')) {
      const whole = words.length === 0 || matches(op.querySelector('h3'), words)
      let inside = 0
      for (const row of op.querySelectorAll('tbody tr')) {
        const shown = whole || matches(row, words)
        row.hidden = !shown
        if (shown && !whole) inside++
      }
      // A folded table with a matching row opens, so the match is seen.
      for (const details of op.querySelectorAll('details.more-parameters')) if (inside && details.querySelector('tbody tr:not([hidden])')) details.open = true
      op.hidden = !(whole || inside > 0 || matches(op, words))
      if (!op.hidden) found++
    }
    for (const part of container.querySelectorAll('.error-part')) {
      let shown = 0
      for (const row of part.querySelectorAll('tbody tr')) {
        row.hidden = words.length > 0 && !matches(row, words)
        if (!row.hidden) shown++
      }
      part.hidden = shown === 0
      if (words.length) found += shown
    }
    const errors = [...container.querySelectorAll('.error-part')].some((part) => !part.hidden)
    for (const el of container.querySelectorAll('#errors, .errors-intro')) el.hidden = !errors
    for (const link of container.querySelectorAll('.quick-links a')) {
      link.parentElement.hidden = Boolean(document.getElementById(link.hash.slice(1))?.hidden)
    }
    count.textContent = words.length ? `${found} ${found === 1 ? 'match' : 'matches'} for "${input.value.trim()}"` : ''
    document.dispatchEvent(new CustomEvent('imgedge:search'))
  })
  return h('div', { class: 'field docs-search' }, h('label', { for: 'docs-search' }, 'Search the documentation'), input, count)
}

/** Render the whole documentation area into `container`. */
export function renderDocs(container, doc) {
  const codes = new Set((doc['x-error-codes'] ?? []).map((entry) => entry.code))
  const operations = Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method]).map((method) => ({ path, method, op: item[method] })),
  )
  fill(
    container,
    h('p', {}, `${doc.info?.title ?? 'API'} ${doc.info?.version ?? ''}, OpenAPI ${doc.openapi}. `, prose(doc.info?.description ?? '')),
    searchBox(container),
    h(
      'ul',
      { class: 'quick-links' },
      operations.map(({ path, method, op }) =>
        h('li', {}, h('a', { href: `#${operationId(method, path)}` }, `${method.toUpperCase()} ${path}`), op.summary ? `: ${op.summary}` : ''),
      ),
      h('li', {}, h('a', { href: '#errors' }, 'Error codes')),
    ),
    operations.map(({ path, method, op }) => operation(doc, path, method, op, codes)),
    errorTable(doc),
  )
}
