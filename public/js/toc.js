// The header's table of contents follows the reader: the link of the section in view is marked (aria-current).
import { $ } from './dom.js'

/** Mark the nav link of the last section whose top has reached the upper third of the window (below the sticky header). */
export function followSections() {
  const links = [...document.querySelectorAll('header.top nav a[href^="#"]')]
  const sections = links.map((link) => document.getElementById(link.getAttribute('href').slice(1))).filter(Boolean)
  const mark = () => {
    const below = Math.max(($('header.top')?.getBoundingClientRect().bottom ?? 0) + 8, innerHeight / 3)
    let current = sections[0]
    for (const section of sections) if (section.getBoundingClientRect().top <= below) current = section
    // At the end of the page the last section may never reach the top: it is the one being read.
    if (innerHeight + scrollY >= document.documentElement.scrollHeight - 2) current = sections.at(-1)
    for (const link of links) {
      if (link.getAttribute('href') === `#${current?.id}`) link.setAttribute('aria-current', 'location')
      else link.removeAttribute('aria-current')
    }
  }
  addEventListener('scroll', mark, { passive: true })
  addEventListener('resize', mark)
  mark()
}
