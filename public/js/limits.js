// The rate-limit area: the quotas in force (the `rateLimits` object of GET /api/formats), what each header
// means (from /api/openapi.json) and the remaining count from the tester's last answer.
import { $, fill, h, plural, prose, table } from './dom.js'

const perMinute = (n, windowSeconds) => (n === 0 ? 'unlimited' : `${n} per ${windowSeconds === 60 ? 'minute' : `${windowSeconds} s`}`)

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
      ? `${new URL(request.url).pathname} is not counted, so its answer has no rate-limit headers.`
      : 'That answer had no rate-limit headers: its policy is unlimited, or the limiter is off.'
    box.replaceChildren(h('p', {}, why))
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
    retryAfter
      ? h('p', {}, `Refused with 429: try again in ${plural(Number(retryAfter), 'second')}.`)
      : resetAt && h('p', {}, `One more call frees up at ${resetAt.toLocaleTimeString()}, when the oldest counted call leaves the window.`),
  )
}
