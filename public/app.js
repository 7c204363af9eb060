// The reference page: loads the API's own descriptions (GET /api/formats, GET /api/openapi.json) and
// builds the tester, the documentation and the rate-limit area from them. The examples need neither.
import { $, h } from './js/dom.js'
import { renderDocs } from './js/docs.js'
import { setupExamples } from './js/examples.js'
import { renderLimits, renderQuotas, renderRateHeaders, showRemaining } from './js/limits.js'
import { setupTester } from './js/tester.js'
import { buildToc, followSections } from './js/toc.js'

async function getJson(path) {
  const res = await fetch(path, { headers: { Accept: 'application/json' } })
  if (!res.ok) throw new Error(`${path} answered ${res.status}`)
  return res.json()
}

$('#origin').textContent = location.origin
setupExamples()

const [formatsResult, openapiResult] = await Promise.allSettled([getJson('/api/formats'), getJson('/api/openapi.json')])
const formats = formatsResult.status === 'fulfilled' ? formatsResult.value : null
const openapi = openapiResult.status === 'fulfilled' ? openapiResult.value : null

const problems = [formatsResult, openapiResult].filter((r) => r.status === 'rejected').map((r) => r.reason.message)
if (problems.length) {
  const status = $('#load-status')
  status.textContent = `Part of this page could not be built: ${problems.join('; ')}. Reload to try again.`
  status.hidden = false
}

setupTester({ formats, openapi, onAnswer: showRemaining })

if (openapi) {
  renderDocs($('#docs-body'), openapi)
  $('#version').textContent = openapi.info?.version ?? ''
} else {
  $('#docs-body').replaceChildren(
    h('p', { class: 'notice' }, 'The API description (/api/openapi.json) could not be loaded, so the documentation cannot be shown. ', h('a', { href: '/api/openapi.json' }, 'Open it directly'), ' or reload the page.'),
  )
}

if (formats) {
  renderLimits(formats.limits)
  renderQuotas(formats.rateLimits)
} else {
  $('#service-limits').replaceChildren(h('p', { class: 'notice' }, 'The limits could not be loaded from /api/formats.'))
  $('#quota-body').replaceChildren(h('p', { class: 'notice' }, 'The quotas could not be loaded from /api/formats.'))
}
renderRateHeaders(formats?.rateLimits, openapi)

// Anchors such as #error-invalid_option (the `type` of every problem answer) point at rows built just
// now; navigating to the fragment again scrolls to the row and lets :target mark it.
if (location.hash.length > 1 && document.getElementById(decodeURIComponent(location.hash.slice(1)))) {
  location.replace(location.hash)
}
buildToc()
followSections()
document.documentElement.dataset.ready = 'true'
