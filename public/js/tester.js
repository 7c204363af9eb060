// The API tester: choose an endpoint, set options, send a real request, show the answer.
import { curlCommand } from './curl.js'
import { $, copyText, formatBytes, h } from './dom.js'
import { buildOptionControls } from './options.js'
import { showAnswer } from './result.js'
import { jsSnippet, pythonSnippet } from './snippets.js'
import { samplePicture } from './sample.js'

let file = null

function setFile(next) {
  file = next
  const info = $('#file-info')
  info.textContent = file ? `${file.name} · ${file.type || 'unknown type'} · ${formatBytes(file.size)}` : ''
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
    return { method: 'GET', url: `${location.origin}${imgPath(params, source)}`, headers, snippet: srcsetSnippet(params, source) }
  }
  if ($('#multipart').checked) {
    // The browser writes the Content-Type with its boundary; the options travel as fields, not in the query.
    const fields = [...(options?.read() ?? [])]
    const body = new FormData()
    if (file) body.append('image', file, file.name)
    for (const [field, value] of fields) body.append(field, value)
    return { method: 'POST', url: `${location.origin}/api/compress`, headers, body, fileName: file?.name, form: fields }
  }
  if (file) headers['Content-Type'] = file.type.startsWith('image/') ? file.type : 'application/octet-stream'
  return {
    method: 'POST',
    url: `${location.origin}/api/compress${query ? `?${query}` : ''}`,
    headers,
    body: file ?? undefined,
    fileName: file?.name,
  }
}

/** The answer's file name for curl's -o: the chosen file's name with the answer's extension (a raw body has no name). */
function outputName(fileName, answered) {
  if (!fileName || !answered) return answered
  const extension = answered.slice(answered.lastIndexOf('.'))
  return `${fileName.replace(/\.[^.]*$/, '')}${extension}`
}

/**
 * Wire the tester. `formats` is GET /api/formats (or null when it failed to load), `openapi` the
 * OpenAPI document (or null); `onAnswer(res, request)` is told about every answer (the rate-limit area).
 */
export function setupTester({ formats, openapi, onAnswer }) {
  const options = formats ? buildOptionControls($('#option-controls'), formats, openapi) : null
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
  // "Try it" in the documentation: this endpoint, in view, its first field focused.
  document.addEventListener('imgedge:try', (event) => {
    const radio = document.querySelector(`input[name="endpoint"][value="${event.detail.endpoint}"]`)
    if (!radio) return
    radio.checked = true
    showFieldsFor(endpoint())
    $('#tester').scrollIntoView({ block: 'start' })
    radio.focus()
  })

  const form = $('#tester-form')
  const send = $('#send')
  const line = $('#request-line')
  let curl = ''
  let busy = false

  form.addEventListener('submit', async (event) => {
    event.preventDefault()
    if (busy) return
    busy = true
    const request = describeRequest(options)
    // aria-disabled rather than disabled: a disabled button drops the keyboard focus.
    send.setAttribute('aria-disabled', 'true')
    send.textContent = 'Sending…'
    $('#result').setAttribute('aria-busy', 'true')
    line.textContent = `${request.method} ${new URL(request.url).pathname}${new URL(request.url).search}`
    const started = performance.now()
    try {
      // no-store: the browser's own cache would otherwise answer a repeated GET /img, and hide the worker's Cache-Status.
      const res = await fetch(request.url, { method: request.method, headers: request.headers, body: request.body, cache: 'no-store' })
      const ms = performance.now() - started
      const { summary, output } = await showAnswer({ res, ms, file: request.method === 'POST' ? file : null })
      if (request.snippet && res.ok) {
        $('#srcset').textContent = request.snippet
        $('#delivered').hidden = false
      }
      line.textContent = `${line.textContent}: ${summary}`
      const described = { ...request, output: outputName(request.fileName, output) }
      curl = curlCommand(described)
      $('#curl').textContent = curl
      $('#snippet-js').textContent = jsSnippet(described)
      $('#snippet-py').textContent = pythonSnippet(described)
      for (const id of ['#copy-status', '#copy-js-status', '#copy-py-status']) $(id).textContent = ''
      onAnswer?.(res, request)
    } catch (error) {
      line.textContent = `The request failed: ${error.message}`
    } finally {
      $('#result').setAttribute('aria-busy', 'false')
      send.removeAttribute('aria-disabled')
      send.textContent = 'Send request'
      busy = false
    }
  })

  $('#copy-js').addEventListener('click', async () => {
    $('#copy-js-status').textContent = await copyText($('#snippet-js').textContent, $('#snippet-js'))
  })
  $('#copy-py').addEventListener('click', async () => {
    $('#copy-py-status').textContent = await copyText($('#snippet-py').textContent, $('#snippet-py'))
  })
  $('#copy-curl').addEventListener('click', async () => {
    $('#copy-status').textContent = await copyText(curl, $('#curl'))
  })
}
