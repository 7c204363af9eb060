// The memory matrix of `npm run memory -- --matrix` (scripts/measure-memory.mjs): every input format at
// each size, to every output format at full size and at a display width, one cell per conversion, each
// on a fresh `wrangler dev` (its first request), laid out as a Markdown table.
//
// The measuring itself (fresh wrangler dev, VmHWM over VmRSS of the workerd that runs the Worker) is
// measure-memory.mjs's, passed in as `measure`; this module chooses the cells, makes their inputs, runs
// them (one at a time unless --jobs says more: each has its own workerd), and writes the table.

import fs from 'node:fs'
import path from 'node:path'
import { INPUT_KINDS, inputOf, makeCase, SIZES } from './inputs.mjs'

/**
 * The whole matrix: 6 input kinds (baseline and progressive JPEG, PNG, WebP, AVIF, GIF) x 7 sizes (plus 3 screenshot
 * rows) x 5 outputs x 2 widths (lossless WebP at full size only): a long run; --sizes, --inputs, --outputs and --merge
 * measure a part of it into the page.
 */
export const MATRIX = { sizes: [1, 4, 12, 16, 24, 36, 50], inputs: ['jpeg', 'pjpeg', 'png', 'webp', 'avif', 'gif'], outputs: ['jpeg', 'webp', 'png', 'avif', 'webpll'], widths: ['full', '1600'], screenshots: true }
/** --quick: 1 and 12 MP JPEG, PNG and WebP to JPEG and WebP, full and 1600 px: 24 cells. */
export const MATRIX_QUICK = { sizes: [1, 12], inputs: ['jpeg', 'png', 'webp'], outputs: ['jpeg', 'webp'], widths: ['full', '1600'], screenshots: false }
/** Screenshot rows (scripts/make-screenshots.mjs), added when PNG is among the inputs: 5.2, 8.3 and 14.7 MP (a 5K display). */
const SCREENSHOTS = [[2880, 1800], [3840, 2160], [5120, 2880]]

const LABELS = { jpeg: 'JPEG', pjpeg: 'JPEG progressive', png: 'PNG', webp: 'WebP', avif: 'AVIF', gif: 'GIF' }
/**
 * Output columns: a format, or `webpll`, lossless WebP (`lossless=true`), measured at full size only (the screenshots'
 * format: a photo downscaled is lossy's case).
 */
const COLUMN_KINDS = { jpeg: { output: 'jpeg', label: 'JPEG' }, webp: { output: 'webp', label: 'WebP' }, png: { output: 'png', label: 'PNG' }, avif: { output: 'avif', label: 'AVIF' }, webpll: { output: 'webp', label: 'WebP lossless', query: { lossless: 'true' }, fullOnly: true } }

/**
 * Check a --sizes/--inputs/--outputs/--widths list; returns the list or throws naming what is allowed.
 *
 * @example
 * matrixList('sizes', '1,12') // [1, 12]
 */
export function matrixList(name, text) {
  const items = text.split(',').map((s) => s.trim().toLowerCase().replace(/^jpg$/, 'jpeg')).filter(Boolean)
  const allowed = {
    sizes: (v) => SIZES[v] !== undefined,
    inputs: (v) => LABELS[v] !== undefined,
    outputs: (v) => COLUMN_KINDS[v] !== undefined,
    widths: (v) => v === 'full' || /^[1-9]\d*$/.test(v),
  }[name]
  const wrong = items.filter((v) => !allowed(v))
  if (!items.length || wrong.length) {
    const hint = { sizes: Object.keys(SIZES).join(','), inputs: Object.keys(LABELS).join(','), outputs: Object.keys(COLUMN_KINDS).join(','), widths: 'full or a width in px' }[name]
    throw new Error(`--${name} ${text}: expected a list of ${hint}`)
  }
  return name === 'sizes' ? items.map(Number) : items
}

/** The matrix's rows ({ label, input, mp, file? }) and columns ({ label, output, width }). */
async function layout(plan) {
  const rows = []
  for (const input of plan.inputs) {
    for (const mp of plan.sizes) rows.push({ input, mp, label: `${LABELS[input]} ${mp} MP` })
    if (input === 'png' && plan.screenshots) {
      // Imported only here: it loads sharp, and makes its files on first use.
      const { screenshotFile } = await import('../make-screenshots.mjs')
      for (const [width, height] of SCREENSHOTS) {
        const mp = Math.round((width * height) / 1e5) / 10
        rows.push({ input, mp, file: await screenshotFile(width, height), label: `PNG screenshot ${mp} MP` })
      }
    }
  }
  const columns = []
  for (const kind of plan.outputs) {
    const { output, label, query = {}, fullOnly = false } = COLUMN_KINDS[kind]
    for (const width of plan.widths.filter((w) => !fullOnly || w === 'full')) {
      columns.push({ output, width, query, label: `→ ${label} ${width === 'full' ? 'full size' : `${width} px`}` })
    }
  }
  return { rows, columns }
}

/** Run `work` on each item, at most `jobs` at a time, in order of start; results in the items' order. */
async function pool(items, jobs, work) {
  const results = new Array(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const index = next++
      results[index] = await work(items[index], index)
    }
  }
  await Promise.all(Array.from({ length: Math.min(jobs, items.length) }, worker))
  return results
}

const fmt = (n, digits = 0) => (n === null || n === undefined || Number.isNaN(n) ? '–' : n.toFixed(digits))
const size = (bytes) => (bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MiB` : `${Math.round(bytes / 1024)} KiB`)

/** One cell's text: `200: growth (est N)`, `422 (est N MiB)` for the budget, else the status and code. */
function cellText(r, flagMiB) {
  if (r.httpStatus === 200) {
    const over = r.growthMiB > flagMiB
    const growth = `${r.upperBound ? '≤ ' : ''}${fmt(r.growthMiB, 1)}`
    return `200: ${over ? `**${growth} ⚠**` : growth} (est ${fmt(r.estimateMiB)})`
  }
  if (r.code === 'operation_too_large') {
    const lifted = r.lifted ? `; ${r.lifted.httpStatus === 200 ? `${fmt(r.lifted.growthMiB, 1)} measured without the budget` : `without the budget: ${r.lifted.status}`}` : ''
    return `422 (est ${fmt(r.estimateMiB)} MiB${lifted})`
  }
  return r.httpStatus ? `${r.httpStatus} ${r.code ?? ''}`.trim() : r.status
}

/**
 * Measure the matrix of `plan` ({ sizes, inputs, outputs, widths, screenshots }) and return its Markdown
 * table with the lines under it.
 *
 * `measure(testCase, input, vars)` is one conversion on a fresh dev server (measure-memory.mjs's measureOnce);
 * `vars` are the server's --var settings, `flagMiB` the growth over which a 200 cell is flagged (the
 * default MEMORY_BUDGET_MIB), `measureRefused` measures a 422 operation_too_large cell again with
 * MEMORY_BUDGET_MIB lifted, and `jobs` cells run at once.
 */
export async function runMatrix({ plan, measure, vars, flagMiB, measureRefused, jobs, inputOptions, log }) {
  const { rows, columns } = await layout(plan)
  const cells = []
  for (const [rowIndex, row] of rows.entries()) {
    for (const [columnIndex, column] of columns.entries()) {
      const query = column.width === 'full' ? { ...column.query } : { ...column.query, width: column.width }
      cells.push({ rowIndex, columnIndex, testCase: makeCase(row.input, column.output, row.mp, query, row.file ?? null) })
    }
  }
  // Every input is made before the first dev server starts, so the measurements do not share the CPU with sharp.
  const inputs = new Map()
  for (const row of rows) {
    const made = await inputOf(makeCase(row.input, 'jpeg', row.mp, {}, row.file ?? null), inputOptions)
    inputs.set(row, made)
    row.label += ` (${made.width}×${made.height}, ${size(made.bytes)})`
  }

  const started = Date.now()
  let done = 0
  const results = await pool(cells, jobs, async ({ rowIndex, testCase }) => {
    const input = inputs.get(rows[rowIndex])
    const r = await measure(testCase, input, vars)
    if (measureRefused && r.code === 'operation_too_large') r.lifted = await measure(testCase, input, { ...vars, MEMORY_BUDGET_MIB: '100000' })
    done++
    const minutes = ((Date.now() - started) / 60_000).toFixed(1)
    log(`[${done}/${cells.length}, ${minutes} min] ${INPUT_KINDS[testCase.input].label} ${testCase.width}x${testCase.height} -> ${testCase.output}${testCase.qs ? ` ${testCase.qs}` : ''}: ${cellText(r, flagMiB)}`)
    return r
  })

  const grid = rows.map(() => new Array(columns.length))
  cells.forEach((cell, i) => {
    grid[cell.rowIndex][cell.columnIndex] = { ...cell, r: results[i] }
  })
  const line = (items) => `| ${items.join(' | ')} |`
  const table = [
    line(['input', ...columns.map((c) => c.label)]),
    line(['---', ...columns.map(() => '---')]),
    ...rows.map((row, i) => line([row.label, ...grid[i].map(({ r }) => cellText(r, flagMiB))])),
  ].join('\n')

  const flat = grid.flat()
  const key = ({ testCase }) => testCase.key
  const over = flat.filter(({ r }) => r.httpStatus === 200 && r.growthMiB > flagMiB)
  const refused = flat.filter(({ r }) => r.code === 'operation_too_large')
  const underestimated = flat.filter(({ r }) => r.httpStatus === 200 && r.estimateMiB !== null && r.growthMiB > r.estimateMiB)
  const other = flat.filter(({ r }) => r.httpStatus !== 200 && r.code !== 'operation_too_large')
  const summary = [
    `${flat.length} cells in ${fmt((Date.now() - started) / 60_000, 1)} min (${jobs} at a time): ${flat.length - refused.length - other.length} converted, ${refused.length} refused for memory, ${other.length} other answers.`,
    over.length ? `**Converted but measured over ${flagMiB} MiB:** ${over.map(key).join(', ')}.` : `No cell that converted measured over ${flagMiB} MiB.`,
    underestimated.length
      ? `Measured above the model's estimate: ${underestimated.map((c) => `${key(c)} (${fmt(c.r.growthMiB, 1)} > ${fmt(c.r.estimateMiB)})`).join(', ')}.`
      : "No cell that converted measured above the model's estimate.",
    other.length ? `Other answers: ${other.map((c) => `${key(c)} (${c.r.status})`).join(', ')}.` : '',
  ].filter(Boolean)
  return { table, summary: summary.join('\n'), cells: flat.map(({ testCase, r }) => ({ key: testCase.key, ...r, samples: undefined, lifted: r.lifted && { ...r.lifted, samples: undefined } })) }
}

/** The legend printed above the table, in the file and on the terminal. */
export function matrixLegend(flagMiB) {
  return [
    'Each cell is one `POST /api/compress?format=OUTPUT[&width=1600]` sent as the first request to a fresh `wrangler dev`',
    '(default limits; rate limiting off). `200: G (est E)`: the answer converted, G is the peak RSS growth of the workerd',
    'that runs the Worker in MiB (VmHWM after the request − VmRSS before it), E the `X-Memory-Estimate` of the answer.',
    `**G ⚠** marks a growth over ${flagMiB} MiB (the default \`MEMORY_BUDGET_MIB\`). \`422 (est E MiB)\`: refused`,
    'as `operation_too_large` before decoding, E from the problem body\'s `estimateMiB`. Anything else is the answer\'s',
    'status and code (e.g. `413 payload_too_large` for a file over `MAX_INPUT_BYTES`).',
  ].join('\n')
}

/** Write the matrix to `file` as a Markdown page: what it measures, how it was run, the table. */
export function writeMatrix(file, { table, summary, command, date, machine, flagMiB, source }) {
  const text = `# Memory matrix

Generated by \`${command}\` on ${date} (commit ${machine.commit}${machine.dirty ? ', with uncommitted changes in src/ or wasm/' : ''});
rerun it rather than editing the figures. How one conversion is measured: [docs/results/memory.md](results/memory.md#what-is-measured)
(the same measurement, here at the API's default limits).

${matrixLegend(flagMiB)}

Inputs (\`scripts/lib/inputs.mjs\`, cached in \`.cache/memory-inputs/\`): ${source.charAt(0).toLowerCase()}${source.slice(1)}; from the same pixels, JPEG
baseline at quality 90 (4:2:0), PNG RGB (oxipng level 1, which scripts/lib/inputs.mjs still uses), WebP quality 80, AVIF quality 60 (8-bit 4:2:0), GIF one
frame of 256 colours. The screenshots are \`scripts/make-screenshots.mjs\`'s (8-bit RGB, flat panels and text).
Machine: ${machine.cpu}, nproc ${machine.nproc}; ${machine.workerdRun}.

${table}

${summary}
`
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
}

/** A row's key in a table: its label without the file's size and dimensions ("PNG 24 MP", "PNG screenshot 14.7 MP"). */
const rowKey = (label) => label.replace(/ \(.*$/, '')
/** A row's kind, the key without its size ("PNG", "PNG screenshot", "JPEG progressive"). */
const rowKind = (label) => rowKey(label).replace(/ [\d.]+ MP$/, '')

/**
 * Lay the measured `table` over the one in `file` (a page writeMatrix wrote): its cells replace theirs, new rows join
 * their format's (by kind, then size), new columns go at the end, and cells nobody measured read `–`. The page keeps its text; a
 * line under the table says which run was merged, so a part of the matrix can be measured again without the rest.
 *
 * @example
 * mergeMatrix('docs/memory-matrix.md', { table, summary, command, date, machine })
 */
export function mergeMatrix(file, { table, summary, command, date, machine }) {
  const text = fs.readFileSync(file, 'utf8')
  const lines = text.split('\n')
  const split = (line) => line.split('|').slice(1, -1).map((cell) => cell.trim())
  const start = lines.findIndex((line) => line.startsWith('| input |'))
  if (start < 0) throw new Error(`${file}: no matrix table to merge into`)
  let end = start
  while (end < lines.length && lines[end].startsWith('|')) end++
  const [header, , ...body] = lines.slice(start, end).map(split)
  const [newHeader, , ...newBody] = table.split('\n').map(split)
  const columns = [...header.slice(1)]
  for (const label of newHeader.slice(1)) if (!columns.includes(label)) columns.push(label)
  const rows = body.map(([label, ...cells]) => ({ label, cells: Object.fromEntries(header.slice(1).map((c, i) => [c, cells[i]])) }))
  for (const [label, ...cells] of newBody) {
    const measured = Object.fromEntries(newHeader.slice(1).map((c, i) => [c, cells[i]]))
    const row = rows.find((r) => rowKey(r.label) === rowKey(label))
    if (row) {
      row.label = label
      Object.assign(row.cells, measured)
      continue
    }
    rows.push({ label, cells: measured })
  }
  // Rows by format (as the page first lists them), then kind ("PNG" before "PNG screenshot"), then megapixels.
  const order = (key) => {
    const seen = [...new Set(rows.map((r) => key(r.label)))]
    return (label) => seen.indexOf(key(label))
  }
  const format = order((label) => label.split(' ')[0])
  const kind = order(rowKind)
  const megapixels = (label) => Number(/ ([\d.]+) MP/.exec(label)?.[1] ?? 0)
  rows.sort((a, b) => format(a.label) - format(b.label) || kind(a.label) - kind(b.label) || megapixels(a.label) - megapixels(b.label))
  const line = (items) => `| ${items.join(' | ')} |`
  const merged = [
    line(['input', ...columns]),
    line(['---', ...columns.map(() => '---')]),
    ...rows.map((r) => line([r.label, ...columns.map((c) => r.cells[c] ?? '–')])),
  ]
  const note = `Merged into the table: \`${command}\` on ${date} (commit ${machine.commit}${machine.dirty ? ', with uncommitted changes in src/ or wasm/' : ''}): ${summary.replace(/\n/g, ' ')}`
  const after = lines.slice(end)
  fs.writeFileSync(file, [...lines.slice(0, start), ...merged, ...after, note, ''].join('\n').replace(/\n{3,}$/, '\n'))
}
