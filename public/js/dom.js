// Small DOM helpers. Text from the API goes in through textContent only, never as HTML.

/**
 * Create an element: h('td', { class: 'x' }, 'text', child). Attributes set to false/null/undefined are left out.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag)
  for (const [name, value] of Object.entries(attrs)) {
    if (value === false || value == null) continue
    if (name === 'class') el.className = value
    else if (name.startsWith('on')) el.addEventListener(name.slice(2), value)
    else el.setAttribute(name, value === true ? '' : String(value))
  }
  el.append(...children.flat(Infinity).filter((child) => child != null && child !== false))
  return el
}

export const $ = (selector, root = document) => root.querySelector(selector)

/** Replace an element's children, flattening arrays as h() does. */
export const fill = (el, ...children) => el.replaceChildren(...children.flat(Infinity).filter((child) => child != null && child !== false))

/** Descriptions in the OpenAPI document use `backticks` for code; show those as <code>, the rest as text. */
export function prose(text = '') {
  return String(text)
    .split(/(`[^`]+`)/)
    .filter(Boolean)
    .map((part) => (part.startsWith('`') && part.endsWith('`') ? h('code', {}, part.slice(1, -1)) : part))
}

export function formatBytes(n) {
  if (!Number.isFinite(n)) return '?'
  if (n < 1024) return `${n} B`
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`
  return `${(n / 1024 / 1024).toFixed(2)} MiB`
}

export const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`

/**
 * A table with a header row; each row is an array of cells (strings or nodes) or { cells, attrs }.
 * Cells carry their column's name in data-label, so a phone can show each row as a stacked card; the
 * explicit roles keep it a table for screen readers when CSS changes its display.
 */
export function table(headings, rows, attrs = {}) {
  return h(
    'div',
    { class: 'scroll' },
    h(
      'table',
      { ...attrs, class: ['stack', attrs.class].filter(Boolean).join(' '), role: 'table' },
      h('thead', { role: 'rowgroup' }, h('tr', { role: 'row' }, headings.map((heading) => h('th', { scope: 'col', role: 'columnheader' }, heading)))),
      h(
        'tbody',
        { role: 'rowgroup' },
        rows.map((row) => {
          const { cells, attrs: rowAttrs = {} } = Array.isArray(row) ? { cells: row } : row
          return h('tr', { ...rowAttrs, role: 'row' }, cells.map((cell, i) => h('td', { role: 'cell', 'data-label': headings[i] }, cell)))
        }),
      ),
    ),
  )
}

/** Copy text; where the clipboard API is refused, select the text in `fallback` so the user can copy it. */
export async function copyText(text, fallback) {
  try {
    await navigator.clipboard.writeText(text)
    return 'Copied.'
  } catch {
    const range = document.createRange()
    range.selectNodeContents(fallback)
    const selection = getSelection()
    selection.removeAllRanges()
    selection.addRange(range)
    return 'Selected: press Ctrl+C (or ⌘C) to copy.'
  }
}
