// The API tester: choose an endpoint, set options, send a real request, show the answer.
import { codeTabs } from './code-tabs.js'
import { curlCommand } from './curl.js'
import { $, formatBytes, h } from './dom.js'
import { outputName } from './names.js'
import { buildOptionControls, SAME_AS_INPUT } from './options.js'
import { clearAnswer, showAnswer } from './result.js'
import { jsSnippet, pythonSnippet } from './snippets.js'
import { samplePicture } from './sample.js'

let file = null
let maxInputBytes
let fileChanged = () => {}

function setFile(next) {
  file = next
  const info = $('#file-info')
  const over = file && maxInputBytes && file.size > maxInputBytes ? ` · over the ${formatBytes(maxInputBytes)} limit: it will not be sent` : ''
  info.textContent = file ? `${file.name} · ${file.type || 'unknown type'} · ${formatBytes(file.size)}${over}` : ''
  fileChanged()
}

function setupFileInput() {
  const input = $('#file')
  const drop = $('#drop')
  input.addEventListener('change', () => setFile(input.files[0] ?? null))
  drop.addEventListener('dragover', (event) => {
    event.preventDefault()
    drop.classList.add('over')
  })
  drop.addEventListener('dragleave', () => drop.classList.remove('over'))
  drop.addEventListener('drop', (event) => {
    event.preventDefault()
    drop.classList.remove('over')
    const dropped = event.dataTransfer?.files?.[0]
    if (!dropped) return
    input.files = event.dataTransfer.files
    setFile(dropped)
  })
  $('#sample').addEventListener('click', async () => {
    const picture = await samplePicture()
    const transfer = new DataTransfer()
    transfer.items.add(picture)
    input.files = transfer.files
    setFile(picture)
  })
}

const endpoint = () => $('input[name="endpoint"]:checked').value

function showFieldsFor(name) {
  $('#compress-fields').hidden = name !== 'compress' && name !== 'img'
  $('#drop').hidden = name !== 'compress'
  $('#img-fields').hidden = name !== 'img'
  $('#health-fields').hidden = name !== 'health'
}

/** `/img/<options>/<source>`: the options as comma-joined pairs (`_` for none), a key's segments percent-encoded. */
export function imgPath(params, source) {
  const options = [...params].map(([name, value]) => `${name}=${encodeURIComponent(value)}`).join(',') || '_'
  const trimmed = source.trim().replace(/^\/+/, '')
  const path = /^https?:\/\//i.test(trimmed) ? trimmed : trimmed.split('/').map(encodeURIComponent).join('/')
  return `/img/${options}/${path}`
}

/** An <img> with a srcset of three widths for the same options, to paste into a page. */
function srcsetSnippet(params, source) {
  const at = (width) => {
    const copy = new URLSearchParams(params)
    copy.set('width', String(width))
    return `${location.origin}${imgPath(copy, source)}`
  }
  return [
    `<img src="${at(800)}"`,
    `     srcset="${[400, 800, 1200].map((w) => `${at(w)} ${w}w`).join(',\n             ')}"`,
    `     sizes="(max-width: 600px) 400px, 800px" alt="">`,
  ].join('\n')
}

/** The request the form describes: method, URL, headers and body. */
function describeRequest(options) {
  const headers = {}
  const key = $('#api-key').value.trim()
  const name = endpoint()
  if (name === 'health') {
    const query = $('#opt-deep').checked ? '?deep=1' : ''
    return { method: 'GET', url: `${location.origin}/api/health${query}`, headers }
  }
  if (name === 'formats') return { method: 'GET', url: `${location.origin}/api/formats`, headers }
  const query = options?.read().toString()
  const accept = $('#accept').value
  if (accept) headers.Accept = accept
  if (key) headers['X-API-Key'] = key
  if (name === 'img') {
    const params = options?.read() ?? new URLSearchParams()
    const source = $('#img-source').value
    return { method: 'GET', url: `${location.origin}${imgPath(params, source)}`, headers, source, snippet: srcsetSnippet(params, source) }
  }
  if ($('#multipart').checked) {
    // The browser writes the Content-Type with its boundary; the options travel as fields, not in the query.
    const fields = [...(options?.read() ?? [])]
    const body = new FormData()
    if (file) body.append('image', file, file.name)
    for (const [field, value] of fields) body.append(field, value)
    return { method: 'POST', url: `${location.origin}/api/compress`, headers, body, file, fileName: file?.name, form: fields }
  }
  if (file) headers['Content-Type'] = file.type.startsWith('image/') ? file.type : 'application/octet-stream'
  return {
    method: 'POST',
    url: `${location.origin}/api/compress${query ? `?${query}` : ''}`,
    headers,
    body: file ?? undefined,
    file,
    fileName: file?.name,
  }
}

/**
 * Why the page will not send a request it could only lose: a file over the server's published MAX_INPUT_BYTES (the
 * server would refuse it, and locally the connection is reset before its 413 arrives), or an API key a header cannot
 * carry (fetch throws before sending). Null when it may be sent.
 */
function refusal(request) {
  const sent = request.file
  if (sent && maxInputBytes && sent.size > maxInputBytes) {
    return `Not sent: ${sent.name} is ${formatBytes(sent.size)}, over this server's limit of ${formatBytes(maxInputBytes)} per file (MAX_INPUT_BYTES).`
  }
  const key = request.headers['X-API-Key']
  if (key && /[^\x21-\x7e]/.test(key)) {
    return 'Not sent: the API key has characters an HTTP header cannot carry (keys are printable ASCII, no spaces).'
  }
  return null
}

/** `width=800,format=auto` (a path's options segment) as pairs; `_` is none. */
const optionPairs = (segment = '') =>
  segment === '_' ? [] : segment.split(',').filter(Boolean).map((pair) => [pair.slice(0, pair.indexOf('=')), decodeURIComponent(pair.slice(pair.indexOf('=') + 1))])

/**
 * Wire the tester. `formats` is GET /api/formats (or null when it failed to load), `openapi` the
 * OpenAPI document (or null); `onAnswer(res, request)` is told about every answer (the rate-limit area).
 */
export function setupTester({ formats, openapi, onAnswer }) {
  maxInputBytes = formats?.limits?.maxInputBytes
  const options = formats ? buildOptionControls($('#option-controls'), formats, openapi, { inputType: () => file?.type ?? '' }) : null
  fileChanged = () => options?.update()
  if (!formats) {
    $('#option-controls').replaceChildren(
      h('p', { class: 'notice' }, 'The options could not be loaded from /api/formats; requests are sent without options.'),
    )
  }
  setupFileInput()
  for (const radio of document.querySelectorAll('input[name="endpoint"]')) {
    radio.addEventListener('change', () => showFieldsFor(endpoint()))
  }
  showFieldsFor(endpoint())
  // "Try it" in the documentation: this endpoint with the example's options, source and Accept header, in view,
  // the endpoint focused. The example's file cannot travel: the one chosen (if any) stays.
  document.addEventListener('imgedge:try', (event) => {
    const { endpoint: name, example = {} } = event.detail
    const radio = document.querySelector(`input[name="endpoint"][value="${name}"]`)
    if (!radio) return
    radio.checked = true
    showFieldsFor(endpoint())
    if (name === 'compress' || name === 'img') {
      options?.set(name === 'img' ? optionPairs(example.params?.options) : Object.entries(example.query ?? {}))
      if (example.params?.source) $('#img-source').value = example.params.source
      const accept = $('#accept')
      const wanted = example.headers?.Accept ?? ''
      if (![...accept.options].some((option) => option.value === wanted)) accept.append(h('option', { value: wanted }, wanted))
      accept.value = wanted
    }
    if (name === 'health') $('#opt-deep').checked = example.query?.deep === '1'
    $('#tester').scrollIntoView({ block: 'start' })
    radio.focus()
  })

  const form = $('#tester-form')
  const send = $('#send')
  const line = $('#request-line')
  const problem = $('#request-error')
  let controller = null
  const byId = Object.fromEntries((formats?.formats ?? []).map((f) => [f.id, f]))

  /**
   * The name an image answer would be written to, before it came back: the asked format's extension (the input's
   * when none is asked; none for format=auto). No name for a JSON answer, which the code prints instead.
   */
  const expectedOutput = (request) => {
    const name = endpoint()
    const params = options?.read() ?? new URLSearchParams()
    if ((name !== 'compress' && name !== 'img') || request.headers.Accept === 'application/json' || params.get('response') === 'json') return undefined
    const asked = params.get('format') ?? ''
    const same = name === 'img' ? /\.(\w+)$/.exec(request.source ?? '')?.[1] : byId[SAME_AS_INPUT[file?.type ?? '']]?.extensions?.[0]
    const extension = asked === '' ? same : asked === 'auto' ? '' : byId[asked === 'jpg' ? 'jpeg' : asked]?.extensions?.[0] ?? asked
    return outputName(request.fileName ?? request.source, extension ? `.${extension}` : '')
  }

  const code = codeTabs({ id: 'request-code', label: 'Language of the request as code', pre: { curl: { id: 'curl' }, js: { id: 'snippet-js' }, py: { id: 'snippet-py' } } })
  $('#request-code').append(code.element)
  /** The code for the form as it is; after an answer, with the name that answer is written to (`output`). */
  const showCode = (answered) => {
    const request = describeRequest(options)
    const described = { ...request, output: answered ? answered.output : expectedOutput(request) }
    code.set({ curl: curlCommand(described), js: jsSnippet(described), py: pythonSnippet(described) })
  }
  for (const type of ['input', 'change']) form.addEventListener(type, () => showCode())
  const wasChanged = fileChanged
  fileChanged = () => {
    wasChanged()
    showCode()
  }
  document.addEventListener('imgedge:try', () => showCode())
  showCode()

  /** After a refusal, a network failure or a cancel: nothing of the answer before stays on screen. */
  const failed = (text) => {
    clearAnswer()
    problem.textContent = text
    problem.hidden = false
  }

  /** The progress line while a request is out: elapsed seconds and a cancel button. */
  const progress = (started) => {
    const box = $('#progress')
    const text = $('#progress-text')
    const tick = () => (text.textContent = `Waiting for the answer: ${Math.floor((performance.now() - started) / 1000)} s`)
    tick()
    box.hidden = false
    const timer = setInterval(tick, 1000)
    return () => {
      clearInterval(timer)
      box.hidden = true
    }
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault()
    if (controller) return
    const request = describeRequest(options)
    problem.hidden = true
    line.textContent = `${request.method} ${new URL(request.url).pathname}${new URL(request.url).search}`
    const refused = refusal(request)
    if (refused) {
      failed(refused)
      return
    }
    controller = new AbortController()
    // aria-disabled rather than disabled: a disabled button drops the keyboard focus.
    send.setAttribute('aria-disabled', 'true')
    send.textContent = 'Sending…'
    $('#result').setAttribute('aria-busy', 'true')
    const started = performance.now()
    const stop = progress(started)
    try {
      // no-store: the browser's own cache would otherwise answer a repeated GET /img, and hide the worker's Cache-Status.
      const res = await fetch(request.url, { method: request.method, headers: request.headers, body: request.body, cache: 'no-store', signal: controller.signal })
      const ms = performance.now() - started
      const nameFor = (answered) => outputName(request.fileName ?? request.source, answered)
      const { summary, output } = await showAnswer({ res, ms, file: request.method === 'POST' ? file : null, nameFor })
      if (request.snippet && res.ok) {
        $('#srcset').textContent = request.snippet
        $('#delivered').hidden = false
      }
      line.textContent = `${line.textContent}: ${summary}`
      showCode({ output })
      onAnswer?.(res, request)
    } catch (error) {
      const seconds = ((performance.now() - started) / 1000).toFixed(1)
      failed(
        error.name === 'AbortError'
          ? `Cancelled after ${seconds} s: the page stopped waiting (a conversion already under way may still finish on the server, and counts).`
          : `No answer: ${error.message}. Nothing came back, so nothing is shown; check the address, the file and the connection.`,
      )
    } finally {
      stop()
      $('#result').setAttribute('aria-busy', 'false')
      send.removeAttribute('aria-disabled')
      send.textContent = 'Send request'
      controller = null
    }
  })
  $('#cancel').addEventListener('click', () => controller?.abort())
  form.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && controller) controller.abort()
  })
}
