// The limits area: the service limits in numbers and the quotas in force (the `limits` and `rateLimits` objects of
// GET /api/formats), what each rate-limit header means (from /api/openapi.json) and the remaining count from the
// tester's last answer.
import { $, fill, h, plural, prose, table } from './dom.js'

const perMinute = (n, windowSeconds) => (n === 0 ? 'unlimited' : `${n} per ${windowSeconds === 60 ? 'minute' : `${windowSeconds} s`}`)

const mp = (pixels) => `${Number((pixels / 1e6).toFixed(2))} MP`
const mib = (bytes) => `${Number((bytes / 1024 / 1024).toFixed(1))} MiB`

/** "9 up to 0.1 MP, 7 up to 0.25 MP, ... and 1 above" from published effort caps. */
function capsText(caps = []) {
  const parts = caps.map(({ maxPixels, maxEffort }, i) =>
    maxPixels === null ? `${maxEffort} above ${mp(caps[i - 1]?.maxPixels ?? 0)}` : `${maxEffort} up to ${mp(maxPixels)}`,
  )
  return parts.join(', ')
}

/** The service limits in numbers, as this server enforces them. */
export function renderLimits(limits) {
  const row = (what, value, variable) => [what, [h('strong', {}, value), variable ? [' ', h('code', {}, variable)] : null]]
  fill($('#service-limits'),
    table(
      ['limit', 'value on this server'],
      [
        row('Largest image file (request body, or /img source)', mib(limits.maxInputBytes), 'MAX_INPUT_BYTES'),
        ...(limits.maxStreamedInputBytes ? [row('Largest PNG read as it arrives (to JPEG, WebP or AVIF in one pass)', mib(limits.maxStreamedInputBytes), 'MAX_STREAMED_INPUT_BYTES')] : []),
        row('Largest input image', `${mp(limits.maxInputPixels)} (width × height from its header)`, 'MAX_INPUT_PIXELS'),
        row('Largest output image', mp(limits.maxOutputPixels), 'MAX_OUTPUT_PIXELS'),
        row('Most frames of an animation kept animated', String(limits.maxAnimationFrames), 'MAX_ANIMATION_FRAMES'),
        row('Most pixels of an animation kept animated', `${mp(limits.maxAnimationPixels)} (frames × canvas)`, 'MAX_ANIMATION_PIXELS'),
        row('Longest side', `${limits.maxDimension} px (WebP output: 16383 px, JPEG: 65500 px)`),
        row('Memory one conversion may be estimated to need', `${limits.memoryBudgetMiB} MiB`, 'MEMORY_BUDGET_MIB'),
        row('Highest AVIF effort, by output size', capsText(limits.avifEffortCaps)),
        row('Highest PNG effort, by output size', capsText(limits.pngEffortCaps)),
        row('Highest WebP effort, by output size', capsText(limits.webpEffortCaps)),
        row('Highest effort of an animated WebP, by frames × output size', limits.webpAnimationEffortCaps ? `lossy ${capsText(limits.webpAnimationEffortCaps.lossy)}; lossless ${capsText(limits.webpAnimationEffortCaps.lossless)}` : ''),
      ],
    ),
    h(
      'p',
      { class: 'hint' },
      'A file or image over a limit is refused from its headers before any pixel is decoded (413, 422 image_too_large). ',
      'A conversion whose estimated memory is over the budget is refused with 422 operation_too_large; with format=auto the next format that fits is served instead. ',
      'With the default budget every JPEG, PNG, WebP, GIF and AVIF photo of up to 16 MP converts to JPEG, WebP, PNG and AVIF, and a 24 MP phone photo to any format at 1600 px (measured below); a refusal for memory says what would fit (fits: a width, a format, baseline JPEG). ',
      'what is still refused: lossy WebP output of large transparent images, lossless WebP output above about 3 MP, lossless WebP input at 12 MP to full size, Adam7 PNGs above about 10 MP. ',
      'An effort above its cap is lowered, and the answer says so in X-Effort.',
    ),
    limits.measuredMatrix && measuredTable(limits.measuredMatrix, limits.memoryBudgetMiB),
  )
}

/** A table's scroll wrapper made a named region the keyboard can reach, so it can be scrolled without a mouse. */
function scrollable(wrapper, name) {
  wrapper.setAttribute('tabindex', '0')
  wrapper.setAttribute('role', 'region')
  wrapper.setAttribute('aria-label', name)
  return wrapper
}

/** The measured matrix (docs/memory-matrix.md, served by /api/formats): each input at each size to each output. */
function measuredTable(matrix, budget) {
  const cell = ({ status, growthMiB, estimateMiB }) => {
    if (status === 200) return h('span', { class: 'fits' }, `${growthMiB} MiB`)
    if (status === 422) return h('strong', { class: 'refused' }, `refused (estimate ${estimateMiB} MiB)`)
    if (status === 413) return h('span', { class: 'hint' }, 'file over the size limit')
    return String(status)
  }
  return [
    h('h4', {}, 'What converts at which size'),
    h(
      'p',
      { class: 'hint' },
      `Measured ${matrix.measured} (${matrix.source}): the peak memory one conversion took in a fresh worker, or "refused" where the estimate is over the ${budget} MiB budget (a 422 naming it; with format=auto the next format is served).`,
    ),
    scrollable(table(['input', ...matrix.columns], matrix.rows.map((row) => [row.input, ...row.cells.map(cell)]), { id: 'measured-matrix' }), 'What converts at which size (scrolls sideways)'),
  ]
}

export function renderQuotas(rateLimits) {
  const { windowSeconds, anonymousPerMinute, plans = {}, requireApiKey } = rateLimits
  const anonymous = requireApiKey
    ? 'refused: this server requires an API key (401 api_key_required)'
    : perMinute(anonymousPerMinute, windowSeconds)
  $('#quota-body').replaceChildren(
    h('h3', {}, 'Quotas in force'),
    table(
      ['client', 'compress calls'],
      [
        [['No API key ', h('span', { class: 'hint' }, '(per IP address)')], anonymous],
        ...Object.entries(plans).map(([plan, limit]) => [['API key on plan ', h('code', {}, plan)], perMinute(limit, windowSeconds)]),
      ],
    ),
    h(
      'p',
      { class: 'hint' },
      `Window: ${windowSeconds} s, sliding. "unlimited" means that policy is not counted and its answers carry no rate-limit headers. `,
      'Send a key as ',
      h('code', {}, 'X-API-Key'),
      ' or ',
      h('code', {}, 'Authorization: Bearer'),
      '; an unknown key is refused, never treated as anonymous.',
    ),
  )
}

/** Header explanations: the names from /api/formats, the meanings from the OpenAPI document. */
export function renderRateHeaders(rateLimits, openapi) {
  const described = {
    ...(openapi?.paths?.['/api/compress']?.post?.responses?.['200']?.headers ?? {}),
    ...Object.fromEntries(Object.entries(openapi?.['x-rate-limit-headers'] ?? {}).map(([name, text]) => [name, { description: text }])),
  }
  const names = [...(rateLimits?.headers ?? Object.keys(described)), 'Retry-After']
  const unique = [...new Set(names)]
  $('#rate-headers').replaceChildren(
    table(
      ['header', 'meaning'],
      unique.map((name) => ({
        cells: [h('code', {}, name), described[name] ? prose(described[name].description) : h('span', { class: 'hint' }, '(see /api/openapi.json)')],
        attrs: { class: 'rate-row' },
      })),
    ),
  )
}

/** After each tester answer: what its rate-limit headers say. */
export function showRemaining(res, request) {
  const box = $('#remaining')
  const limit = res.headers.get('x-ratelimit-limit')
  const remaining = res.headers.get('x-ratelimit-remaining')
  if (limit === null || remaining === null) {
    const why = request.method === 'GET'
      ? `${new URL(request.url).pathname} was not counted, so its answer has no rate-limit headers.`
      : 'That answer had no rate-limit headers: its policy is unlimited, or the limiter is off.'
    // An uncounted GET changes nothing: the count of the last counted answer stays, with a note under it.
    const note = box.querySelector('.remaining-note')
    if (request.method === 'GET' && note) note.textContent = `${why} The count above is from the last counted answer.`
    else box.replaceChildren(h('p', {}, why))
    return
  }
  const policy = /^"([^"]*)"/.exec(res.headers.get('ratelimit-policy') ?? '')?.[1] ?? 'unknown'
  const reset = Number(res.headers.get('x-ratelimit-reset'))
  const retryAfter = res.headers.get('retry-after')
  const resetAt = reset ? new Date(reset * 1000) : null
  const meterId = 'remaining-meter'
  fill(
    box,
    h('p', {}, h('span', { class: 'remaining-count' }, `${remaining} of ${limit}`), ` compress ${Number(limit) === 1 ? 'call' : 'calls'} left (policy `, h('code', {}, policy), ')'),
    h('label', { for: meterId, class: 'hint' }, 'Calls left in the window'),
    h('br'),
    h('meter', { id: meterId, min: 0, max: limit, value: remaining, low: Math.ceil(limit * 0.2), optimum: limit }),
    h('p', { class: 'hint remaining-note' }),
    retryAfter
      ? h('p', {}, `Refused with 429: try again in ${plural(Number(retryAfter), 'second')}.`)
      : resetAt && h('p', {}, `One more call frees up at ${resetAt.toLocaleTimeString()}, when the oldest counted call leaves the window.`),
  )
}
