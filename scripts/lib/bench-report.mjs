// Formatting for scripts/bench.mjs: statistics, Markdown tables and the SVG chart of docs/results/benchmarks.md.

export const median = (xs) => {
  const v = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b)
  if (!v.length) return null
  const m = Math.floor(v.length / 2)
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2
}
export const min = (xs) => (xs.filter(Number.isFinite).length ? Math.min(...xs.filter(Number.isFinite)) : null)
export const max = (xs) => (xs.filter(Number.isFinite).length ? Math.max(...xs.filter(Number.isFinite)) : null)

/** Mean, standard deviation and lowest of a list of scores. */
export const scoreStats = (xs) => {
  const mean = xs.reduce((s, x) => s + x, 0) / xs.length
  return { mean, sd: Math.sqrt(xs.reduce((s, x) => s + (x - mean) ** 2, 0) / xs.length), worst: Math.min(...xs) }
}

export const fmt = (n, digits = 0) => (n === null || n === undefined || !Number.isFinite(n) ? '–' : n.toFixed(digits))
export const ms = (n) => (n === null || n === undefined ? '–' : n >= 10_000 ? `${(n / 1000).toFixed(1)} s` : `${Math.round(n)}`)
/** A duration with its unit: "412 ms" or "16.2 s". */
export const dur = (n) => (n === null || n === undefined ? '–' : n >= 10_000 ? `${(n / 1000).toFixed(1)} s` : `${Math.round(n)} ms`)
export const ratio = (n) => (n === null || n === undefined || !Number.isFinite(n) ? '–' : `${n >= 10 ? n.toFixed(0) : n.toFixed(2)}×`)
export const pct = (r) => (r === null || r === undefined || !Number.isFinite(r) ? '–' : `${r <= 1 ? '−' : '+'}${Math.abs((r - 1) * 100).toFixed(1)} %`)
export const kib = (b) => (b === null || b === undefined ? '–' : b >= 1024 * 1024 ? `${(b / 1024 / 1024).toFixed(2)} MiB` : `${(b / 1024).toFixed(1)} KiB`)

/** "median (min–max)" of a list of numbers with a formatter. */
export function spread(xs, f = ms) {
  const m = median(xs)
  if (m === null) return '–'
  if (xs.length < 2) return f(m)
  return `${f(m)} (${f(min(xs))}–${f(max(xs))})`
}

export function table(header, rows) {
  const esc = (c) => String(c ?? '–').replace(/\|/g, '\\|').replace(/\n/g, ' ')
  return [`| ${header.map(esc).join(' | ')} |`, `| ${header.map(() => '---').join(' | ')} |`, ...rows.map((r) => `| ${r.map(esc).join(' | ')} |`)].join('\n')
}

/**
 * Horizontal bar chart of worker/sharp whole-request time ratios (median of paired runs, whiskers at
 * min and max) on a log scale, with lines at 1× and at the 1.3× target.
 */
export function ratioChartSvg(bars, { title, subtitle }) {
  const rowH = 26
  const left = 330
  const right = 60
  const top = 70
  const width = 980
  const plotW = width - left - right
  const height = top + bars.length * rowH + 50
  const maxV = Math.max(2, ...bars.map((b) => b.max ?? b.median ?? 1)) * 1.15
  const minV = Math.min(0.5, ...bars.map((b) => b.min ?? b.median ?? 1)) / 1.15
  const x = (v) => left + ((Math.log(v) - Math.log(minV)) / (Math.log(maxV) - Math.log(minV))) * plotW
  const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
  const out = []
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="DejaVu Sans, Liberation Sans, Arial, sans-serif">`)
  out.push(`<rect width="${width}" height="${height}" fill="#ffffff"/>`)
  out.push(`<text x="16" y="26" font-size="17" font-weight="700" fill="#111827">${esc(title)}</text>`)
  out.push(`<text x="16" y="48" font-size="12" fill="#4b5563">${esc(subtitle)}</text>`)
  const ticks = [0.5, 1, 1.3, 2, 3, 5, 10, 20, 30, 50, 100].filter((t) => t >= minV && t <= maxV)
  for (const t of ticks) {
    const tx = x(t)
    const strong = t === 1 || t === 1.3
    out.push(`<line x1="${tx}" x2="${tx}" y1="${top - 6}" y2="${top + bars.length * rowH}" stroke="${t === 1.3 ? '#059669' : strong ? '#6b7280' : '#e5e7eb'}" stroke-width="${strong ? 1.5 : 1}"${t === 1.3 ? ' stroke-dasharray="5,3"' : ''}/>`)
    out.push(`<text x="${tx}" y="${top + bars.length * rowH + 18}" font-size="11" text-anchor="middle" fill="${t === 1.3 ? '#059669' : '#374151'}">${t}×</text>`)
  }
  out.push(`<text x="${left + plotW / 2}" y="${top + bars.length * rowH + 38}" font-size="12" text-anchor="middle" fill="#374151">worker time / sharp time (log scale; 1.3× = target, dashed)</text>`)
  bars.forEach((b, i) => {
    const y = top + i * rowH
    out.push(`<text x="${left - 10}" y="${y + rowH / 2 + 4}" font-size="12" text-anchor="end" fill="#111827">${esc(b.label)}</text>`)
    if (b.median === null || b.median === undefined) {
      out.push(`<text x="${left + 6}" y="${y + rowH / 2 + 4}" font-size="11" fill="#9ca3af">${esc(b.note ?? 'not measured')}</text>`)
      return
    }
    const colour = b.median <= 1.3 ? '#10b981' : b.median <= 2 ? '#f59e0b' : '#ef4444'
    out.push(`<rect x="${left}" y="${y + 5}" width="${Math.max(1, x(b.median) - left)}" height="${rowH - 10}" fill="${colour}" opacity="0.85"/>`)
    if (b.min !== null && b.max !== null && b.max > b.min) {
      out.push(`<line x1="${x(b.min)}" x2="${x(b.max)}" y1="${y + rowH / 2}" y2="${y + rowH / 2}" stroke="#111827" stroke-width="1.2"/>`)
      for (const v of [b.min, b.max]) out.push(`<line x1="${x(v)}" x2="${x(v)}" y1="${y + 8}" y2="${y + rowH - 8}" stroke="#111827" stroke-width="1.2"/>`)
    }
    out.push(`<text x="${Math.min(width - 4, x(b.max ?? b.median) + 6)}" y="${y + rowH / 2 + 4}" font-size="11" fill="#111827"${x(b.max ?? b.median) + 50 > width ? ' text-anchor="end"' : ''}>${ratio(b.median)}</text>`)
  })
  out.push('</svg>')
  return out.join('\n')
}
