// Shows one answer of the tester: status, headers (timing and rate-limit ones marked), the body, and for
// an image the before/after comparison.
import { $, fill, formatBytes, h } from './dom.js'

const TIMING = /^server-timing$/
const RATE = /^(ratelimit|ratelimit-policy|x-ratelimit-.*|retry-after)$/

let urls = []
const objectUrl = (blob) => {
  const url = URL.createObjectURL(blob)
  urls.push(url)
  return url
}

/** Wait for an <img> to load and decode; resolves with its natural size (0x0 if it could not decode). */
async function loadImage(img, src) {
  img.src = src
  try {
    await img.decode()
  } catch {
    // Not decodable by this browser: the size stays 0x0 and the meta line says so.
  }
  return { width: img.naturalWidth, height: img.naturalHeight }
}

function base64ToBlob(base64, type) {
  const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))
  return new Blob([bytes], { type })
}

/** The answer's own file name (Content-Disposition), else `image.<subtype>` from its type. */
function fileNameOf(res, type) {
  const match = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')
  return match?.[1] ?? `image.${type.split('/')[1]?.replace('jpeg', 'jpg') ?? 'bin'}`
}

function headerRows(headers) {
  const tbody = $('#headers-table tbody')
  tbody.replaceChildren()
  for (const [name, value] of headers) {
    const kind = TIMING.test(name) ? 'timing' : RATE.test(name) ? 'rate' : ''
    const tag = kind && h('span', { class: `tag tag-${kind}` }, kind === 'timing' ? 'timing' : 'rate limit')
    tbody.append(h('tr', { class: kind && `${kind}-row`, role: 'row' }, h('td', { role: 'cell' }, h('code', {}, name), tag), h('td', { role: 'cell' }, value)))
  }
}

function timingChips(res, ms) {
  const box = $('#timing')
  const steps = (res.headers.get('server-timing') ?? '')
    .split(',')
    .map((entry) => /^\s*([\w-]+)\s*;\s*dur=([\d.]+)/.exec(entry))
    .filter(Boolean)
  fill(
    box,
    h('strong', {}, 'Time:'),
    h('span', {}, `round trip ${ms.toFixed(0)} ms`),
    steps.map(([, name, dur]) => h('span', {}, `${name} ${Number(dur).toFixed(0)} ms`)),
  )
  box.hidden = false
}

function showJson(value) {
  $('#body-json').textContent = JSON.stringify(value, null, 2)
  $('#body-block').hidden = false
}

/** The saving line: smaller, the input returned as it was, or bigger (possible when converting up). */
function savingText(inBytes, outBytes, res) {
  if (res.headers.get('x-original-returned') === 'true') {
    return { text: 'No saving: re-encoding would not have made it smaller, so the input came back unchanged.', worse: false }
  }
  const saved = inBytes - outBytes
  const exact = inBytes ? (Math.abs(saved) / inBytes) * 100 : 0
  // 99.6 % smaller is not "100% smaller": the output is not empty. Nor is 0.3 % "0%".
  const pct = exact > 99 && exact < 100 ? '>99' : exact > 0 && exact < 1 ? '<1' : String(Math.round(exact))
  return saved >= 0
    ? { text: `Saved ${formatBytes(saved)} (${pct}% smaller)`, worse: false }
    : { text: `${formatBytes(-saved)} larger (${pct}% more) than the input`, worse: true }
}

async function showCompare(file, blob, res, name) {
  const [before, after] = await Promise.all([
    loadImage($('#before-img'), objectUrl(file)),
    loadImage($('#after-img'), objectUrl(blob)),
  ])
  const size = ({ width, height }) => (width ? `${width}×${height}` : 'not decodable by this browser')
  $('#before-meta').textContent = `${res.headers.get('x-input-format') ?? file.type} · ${size(before)} · ${formatBytes(file.size)}`
  // quality=auto and max_bytes say which quality they chose (and auto, the sample's SSIMULACRA 2 score)
  const chosen = res.headers.get('x-quality') ? ` · quality ${res.headers.get('x-quality')}${res.headers.get('x-score') ? `, score ${res.headers.get('x-score')}` : ''}` : ''
  const frames = res.headers.get('x-frames') ? ` · ${res.headers.get('x-frames')} frames` : ''
  $('#after-meta').textContent = `${res.headers.get('x-output-format') ?? blob.type} · ${size(after)} · ${formatBytes(blob.size)}${frames}${chosen}`
  const saving = savingText(file.size, blob.size, res)
  $('#saving').textContent = saving.text
  $('#saving').classList.toggle('worse', saving.worse)
  const link = $('#download')
  link.href = objectUrl(blob)
  link.download = name
  $('#compare').hidden = false
  await setupSlider($('#before-img').src, $('#after-img').src, after)
}

/**
 * The overlaid view: the image sent (scaled to the output's size) left of the divider, the one returned right of it,
 * at the page's width or at 1, 2 or 4 screen pixels per output pixel (pixelated, so compression artefacts show).
 * The divider follows a pointer dragged anywhere on the images, and the arrow, Page and Home/End keys when focused.
 */
async function setupSlider(beforeSrc, afterSrc, outputSize) {
  const stage = $('#slider-stage')
  const frame = $('#slider-frame')
  const divider = $('#divider')
  await Promise.all([loadImage($('#split-before'), beforeSrc), loadImage($('#split-after'), afterSrc)])
  let split = 50
  const place = (value) => {
    split = Math.min(100, Math.max(0, Math.round(value * 10) / 10))
    stage.style.setProperty('--split', `${split}%`)
    divider.setAttribute('aria-valuenow', String(split))
    divider.setAttribute('aria-valuetext', `${split} % of the width shows the image sent`)
  }
  // Zoomed in, the frame opens on the divider (and the middle of the height), not on the top-left corner.
  const centre = () => {
    frame.scrollLeft = (stage.offsetWidth * split) / 100 - frame.clientWidth / 2
    frame.scrollTop = (stage.offsetHeight - frame.clientHeight) / 2
  }
  const zoom = () => {
    const value = $('#zoom').value
    // Fit: the output's own size, or the page's width when it is wider; never enlarged past 1:1.
    if (!outputSize.width) stage.style.width = '100%'
    else if (value === 'fit') stage.style.width = `min(100%, ${outputSize.width / devicePixelRatio}px)`
    else stage.style.width = `${(outputSize.width * Number(value)) / devicePixelRatio}px`
    centre()
  }
  const fromPointer = (event) => {
    const box = stage.getBoundingClientRect()
    place(((event.clientX - box.left) / box.width) * 100)
  }
  stage.onpointerdown = (event) => {
    if (event.button !== 0) return
    event.preventDefault()
    stage.setPointerCapture(event.pointerId)
    fromPointer(event)
    divider.focus({ preventScroll: true })
  }
  stage.onpointermove = (event) => {
    if (stage.hasPointerCapture(event.pointerId)) fromPointer(event)
  }
  divider.onkeydown = (event) => {
    const step = { ArrowLeft: -1, ArrowDown: -1, ArrowRight: 1, ArrowUp: 1, PageDown: -10, PageUp: 10 }[event.key]
    if (event.key === 'Home') place(0)
    else if (event.key === 'End') place(100)
    else if (step !== undefined) place(split + step * (event.shiftKey && Math.abs(step) === 1 ? 10 : 1))
    else return
    event.preventDefault()
  }
  $('#zoom').onchange = zoom
  place(50)
  zoom()
}

/** An image answered to a GET (GET /img): shown with its format, size and cache status; the caller adds the snippet. */
async function showDelivered(blob, res) {
  const { width, height } = await loadImage($('#delivered-img'), objectUrl(blob))
  const size = width ? `${width}×${height}` : 'not decodable by this browser'
  const cache = res.headers.get('cache-status') ?? 'no Cache-Status'
  $('#delivered-meta').textContent = `${res.headers.get('x-output-format') ?? blob.type} · ${size} · ${formatBytes(blob.size)} · ${cache}`
}

/** Take every part of the last answer off the screen (and free its previews). */
export function clearAnswer() {
  for (const url of urls) URL.revokeObjectURL(url)
  urls = []
  for (const id of ['#compare', '#body-block', '#timing', '#delivered']) $(id).hidden = true
  for (const id of ['#status-line', '#saving', '#before-meta', '#after-meta', '#delivered-meta', '#body-json', '#srcset']) $(id).textContent = ''
  for (const id of ['#before-img', '#after-img', '#split-before', '#split-after', '#delivered-img']) $(id).removeAttribute('src')
  $('#download').removeAttribute('href')
  $('#headers-table tbody').replaceChildren()
  $('#result').hidden = true
}

/**
 * Render an answer. `nameFor(answeredName)` gives the file name the download and the snippets write an image answer
 * to. Returns a one-line summary for the live region, and that file name (when the body was an image).
 */
export async function showAnswer({ res, ms, file, nameFor }) {
  clearAnswer()

  const type = (res.headers.get('content-type') ?? '').split(';')[0].trim()
  const blob = await res.blob()
  const status = $('#status-line')
  status.replaceChildren(
    h('span', { class: res.ok ? 'ok' : 'err' }, `${res.status} ${res.statusText || ''}`.trim()),
    ` · ${ms.toFixed(0)} ms · ${type || 'no body'} · ${formatBytes(blob.size)}`,
  )
  headerRows(res.headers)
  if (res.headers.has('server-timing')) timingChips(res, ms)

  let output
  if (type.startsWith('image/')) {
    output = nameFor(fileNameOf(res, type))
    if (file) await showCompare(file, blob, res, output)
    else await showDelivered(blob, res)
  } else if (/json$/.test(type)) {
    const value = JSON.parse(await blob.text())
    if (typeof value.image === 'string' && file) {
      // The JSON answer carries the image in base64: preview it, and show the rest of the body.
      await showCompare(file, base64ToBlob(value.image, value.mime), res, nameFor(value.filename))
      value.image = `(${value.image.length} base64 characters, shown above)`
    }
    showJson(value)
    if (value.code) {
      status.append(' · ', h('a', { href: `#error-${value.code}` }, `what ${value.code} means`))
    }
  } else if (blob.size) {
    $('#body-json').textContent = await blob.text()
    $('#body-block').hidden = false
  }
  $('#result').hidden = false
  return { summary: `${res.status} ${res.statusText || ''} in ${ms.toFixed(0)} ms`.replace('  ', ' '), output }
}
