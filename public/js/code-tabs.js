// One request as curl, JavaScript and Python: a tab each, with a copy button. Every set of tabs on the page shows
// the same language, so choosing Python once shows Python everywhere.
import { copyText, h } from './dom.js'

const LANGUAGES = [
  ['curl', 'curl'],
  ['js', 'JavaScript'],
  ['py', 'Python'],
]
let current = 'curl'

function choose(lang, focusIn) {
  current = lang
  for (const tab of document.querySelectorAll('.lang-tabs [role="tab"]')) {
    const selected = tab.dataset.lang === lang
    tab.setAttribute('aria-selected', String(selected))
    tab.tabIndex = selected ? 0 : -1
    document.getElementById(tab.getAttribute('aria-controls')).hidden = !selected
  }
  focusIn?.querySelector(`[data-lang="${lang}"]`)?.focus()
}

/**
 * Tabs for one request's code. `id` prefixes the elements' ids; `pre` gives each language's <pre> attributes (an id
 * or class to find it by). Returns the element, and set({ curl, js, py }) to change the code shown.
 * @example
 * const tabs = codeTabs({ id: 'op-get-api-health', label: 'GET /api/health example' })
 * tabs.set({ curl: "curl 'http://127.0.0.1:8787/api/health'", js: '...', py: '...' })
 * section.append(tabs.element)
 */
export function codeTabs({ id, label, pre = {} }) {
  const list = h('div', { class: 'lang-tabs', role: 'tablist', 'aria-label': label })
  const blocks = {}
  const panels = LANGUAGES.map(([lang, name]) => {
    const selected = lang === current
    list.append(h('button', { type: 'button', role: 'tab', id: `${id}-tab-${lang}`, 'aria-controls': `${id}-${lang}`, 'aria-selected': String(selected), tabindex: selected ? 0 : -1, 'data-lang': lang, onclick: () => choose(lang) }, name))
    const { class: kind, ...attrs } = pre[lang] ?? {}
    blocks[lang] = h('pre', { ...attrs, class: ['code', kind].filter(Boolean).join(' '), tabindex: 0 })
    const status = h('span', { role: 'status', class: 'hint' })
    const copy = h('button', { type: 'button', class: 'copy', onclick: async () => (status.textContent = await copyText(blocks[lang].textContent, blocks[lang])) }, `Copy ${name}`)
    return h('div', { role: 'tabpanel', id: `${id}-${lang}`, 'aria-labelledby': `${id}-tab-${lang}`, hidden: !selected }, blocks[lang], h('p', { class: 'copy-row' }, copy, ' ', status))
  })
  list.addEventListener('keydown', (event) => {
    const order = LANGUAGES.map(([lang]) => lang)
    const at = order.indexOf(event.target.dataset.lang)
    const next = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: order.length - 1 }[event.key]
    if (next === undefined) return
    event.preventDefault()
    choose(order[(next + order.length) % order.length], list)
  })
  const set = (code) => {
    for (const [lang] of LANGUAGES) blocks[lang].textContent = code[lang] ?? ''
    for (const status of panels.map((panel) => panel.querySelector('[role="status"]'))) status.textContent = ''
  }
  return { element: h('div', { class: 'code-tabs' }, list, panels), set }
}
