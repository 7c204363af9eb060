// Small helpers shared by scripts/fuzz.mjs and scripts/load.mjs: a generated section of
// docs/results/robustness.md, percentiles, and a plain-text table.

import fs from 'node:fs'

/**
 * Replace the text between `<!-- NAME:begin -->` and `<!-- NAME:end -->` in `file` with `markdown`
 * (the markers stay). Everything outside the markers is kept as it is.
 */
export function replaceSection(file, name, markdown) {
  const begin = `<!-- ${name}:begin -->`
  const end = `<!-- ${name}:end -->`
  const text = fs.readFileSync(file, 'utf8')
  const from = text.indexOf(begin)
  const to = text.indexOf(end)
  if (from < 0 || to < from) throw new Error(`${file} has no ${begin} ... ${end} section`)
  fs.writeFileSync(file, `${text.slice(0, from + begin.length)}\n${markdown.trim()}\n${text.slice(to)}`)
}

/** The p-th percentile (0-100) of a list of numbers, nearest rank; NaN for an empty list. */
export function percentile(values, p) {
  if (!values.length) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]
}

/** A Markdown table from a header row and rows of cells. */
export function markdownTable(header, rows) {
  const line = (cells) => `| ${cells.join(' | ')} |`
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n')
}

export const mib = (kib) => (kib / 1024).toFixed(0)

