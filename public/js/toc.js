// The tables of contents follow the reader: the header's section links and, on wide screens, the side panel of
// every section, endpoint, example and error code. The link of what is in view is marked (aria-current).
import { $, h } from './dom.js'

/** What the side panel lists under a section: its endpoints, error codes and examples, in page order. */
const CHILDREN = 'article.op[id], h3#errors, tr[id^="error-"], article.example[id]'

const label = (el) =>
  el.matches('article.op') ? `${el.querySelector('.method')?.textContent ?? ''} ${el.querySelector('h3 code')?.textContent ?? ''}`
  : el.matches('tr') ? el.id.slice('error-'.length)
  : el.matches('article') ? el.querySelector('h3')?.textContent ?? el.id
  : el.textContent

/** Build the side panel from the page as rendered (call again after the documentation is built). */
export function buildToc() {
  const link = (el, extra = {}) => h('a', { href: `#${el.id}`, ...extra }, label(el))
  const sections = [...document.querySelectorAll('main > section[id]')].map((section) => {
    const children = [...section.querySelectorAll(CHILDREN)]
    const codes = children.filter((el) => el.matches('tr'))
    const items = children.filter((el) => !el.matches('tr')).map((el) =>
      h('li', {}, link(el), el.id === 'errors' && codes.length > 0 && h('ul', { class: 'codes' }, codes.map((code) => h('li', {}, link(code, { class: 'code' }))))),
    )
    return h('li', {}, h('a', { href: `#${section.id}` }, section.querySelector('h2')?.textContent ?? section.id), items.length > 0 && h('ul', {}, items))
  })
  const toc = $('#toc')
  toc.replaceChildren(h('p', { class: 'toc-title' }, 'On this page'), h('ul', {}, sections))
  toc.hidden = false
  // The documentation's search hides endpoints and error codes: their links go with them.
  document.addEventListener('imgedge:search', () => {
    for (const a of toc.querySelectorAll('a[href^="#"]')) {
      a.parentElement.hidden = Boolean(document.getElementById(a.getAttribute('href').slice(1))?.closest('[hidden]'))
    }
  })
}

/**
 * Mark, in the header and the side panel, the link of the last target whose top has reached the upper part of the
 * window (below the sticky header); in the side panel its section's link too (aria-current="true").
 */
export function followSections() {
  const mark = () => {
    const header = $('header.top')?.getBoundingClientRect().bottom ?? 0
    const atEnd = innerHeight + scrollY >= document.documentElement.scrollHeight - 2
    // Sections count from the upper third of the window; the panel's finer targets (table rows) from just below the header.
    const current = (links, below) => {
      const targets = links.map((a) => document.getElementById(a.getAttribute('href').slice(1))).filter((el) => el && el.offsetParent !== null)
      // At the end of the page the last target may never reach the top: it is the one being read.
      if (atEnd) return targets.at(-1)
      let found = targets[0]
      for (const el of targets) if (el.getBoundingClientRect().top <= below) found = el
      return found
    }
    const headerLinks = [...document.querySelectorAll('header.top nav a[href^="#"]')]
    const section = current(headerLinks, Math.max(header + 8, innerHeight / 3))
    const tocLinks = [...document.querySelectorAll('#toc a[href^="#"]')]
    const inner = current(tocLinks, header + 24)
    for (const a of [...headerLinks, ...tocLinks]) {
      const id = a.getAttribute('href').slice(1)
      const value = id === inner?.id || (a.closest('header') && id === section?.id) ? 'location' : id === section?.id ? 'true' : null
      // Only what changes is written: a scroll usually moves no mark.
      if (a.getAttribute('aria-current') === value) continue
      if (value) a.setAttribute('aria-current', value)
      else a.removeAttribute('aria-current')
    }
    // Keep the marked link visible in a panel taller than the window, scrolling the panel only (not the page).
    const toc = $('#toc')
    const marked = $('#toc a[aria-current="location"]')
    if (marked && (marked.offsetTop < toc.scrollTop || marked.offsetTop + marked.offsetHeight > toc.scrollTop + toc.clientHeight)) {
      toc.scrollTop = marked.offsetTop - toc.clientHeight / 3
    }
  }
  // At most once a frame, however many scroll events arrive.
  let queued = false
  const schedule = () => {
    if (queued) return
    queued = true
    requestAnimationFrame(() => {
      queued = false
      mark()
    })
  }
  addEventListener('scroll', schedule, { passive: true })
  addEventListener('resize', schedule)
  mark()
}
