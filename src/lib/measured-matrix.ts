import text from '../../docs/memory-matrix.md'

/** One measured cell: converted with a peak growth, or refused with the model's estimate, or another answer. */
export interface MeasuredCell {
  status: number
  /** Peak RSS growth of workerd, MiB (a 200). */
  growthMiB?: number
  /** The memory model's estimate, MiB. */
  estimateMiB?: number
}

/** One input (a format at a size) and what it converted to. */
export interface MeasuredRow {
  input: string
  /** The input's megapixels (24 for 'JPEG 24 MP (5712×4284, 3.9 MiB)'). */
  megapixels: number
  cells: MeasuredCell[]
  /** The columns this input converted to (200), and those refused (4xx), as the columns name them. */
  converts: string[]
  refused: string[]
}

export interface MeasuredMatrix {
  /** Where the figures come from, and when they were last measured. */
  source: string
  measured: string
  columns: string[]
  rows: MeasuredRow[]
}

function cellOf(cell: string): MeasuredCell {
  const status = Number(/^(\d{3})/.exec(cell)?.[1] ?? 0)
  const growth = /^200: ([\d.]+)/.exec(cell)?.[1]
  const estimate = /est ([\d.]+)/.exec(cell)?.[1]
  return { status, ...(growth ? { growthMiB: Number(growth) } : {}), ...(estimate ? { estimateMiB: Number(estimate) } : {}) }
}

/**
 * docs/memory-matrix.md (written by `npm run memory -- --matrix`), bundled as text and read here, so what /api/formats
 * publishes is the measured table itself, never a copy that could drift from it: each input (a format at a size) with
 * its cells and which outputs it converted to and which were refused. A cell nobody measured (`–`) is in neither.
 *
 * @example
 * measuredMatrix().rows[0] // { input: 'JPEG 1 MP (1152×864, 189 KiB)', megapixels: 1, cells: [{ status: 200, growthMiB: 18, estimateMiB: 24 }, ...], converts: ['→ JPEG full size', ...], refused: [] }
 */
export function measuredMatrix(markdown: string = text): MeasuredMatrix {
  const lines = markdown.split('\n')
  const header = lines.find((line) => line.startsWith('| input |'))
  const split = (line: string) => line.split('|').slice(1, -1).map((cell) => cell.trim())
  const rows = lines.filter((line) => /^\| (JPEG|PNG|WebP|AVIF|GIF) /.test(line)).map(split)
  const columns = header ? split(header).slice(1) : []
  return {
    source: 'docs/memory-matrix.md',
    // (the page is measured in parts, each naming its date: the latest)
    measured: [...markdown.matchAll(/ on (\d{4}-\d{2}-\d{2})/g)].map((match) => match[1]!).sort().pop() ?? '',
    columns,
    rows: rows.map(([input, ...texts]) => {
      const cells = texts.map(cellOf)
      const named = (test: (cell: MeasuredCell) => boolean) => columns.filter((_, i) => cells[i] !== undefined && test(cells[i]!))
      return {
        input: input!,
        megapixels: Number(/ ([\d.]+) MP/.exec(input!)?.[1] ?? 0),
        cells,
        converts: named((cell) => cell.status === 200),
        refused: named((cell) => cell.status >= 400),
      }
    }),
  }
}
