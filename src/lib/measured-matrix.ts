import text from '../../docs/memory-matrix.md'

/** One measured cell: converted with a peak growth, or refused with the model's estimate, or another answer. */
export interface MeasuredCell {
  status: number
  /** Peak RSS growth of workerd, MiB (a 200). */
  growthMiB?: number
  /** The memory model's estimate, MiB. */
  estimateMiB?: number
}

export interface MeasuredMatrix {
  /** Where the figures come from, and when they were measured. */
  source: string
  measured: string
  columns: string[]
  rows: Array<{ input: string; cells: MeasuredCell[] }>
}

function cellOf(cell: string): MeasuredCell {
  const status = Number(/^(\d{3})/.exec(cell)?.[1] ?? 0)
  const growth = /^200: ([\d.]+)/.exec(cell)?.[1]
  const estimate = /est ([\d.]+)/.exec(cell)?.[1]
  return { status, ...(growth ? { growthMiB: Number(growth) } : {}), ...(estimate ? { estimateMiB: Number(estimate) } : {}) }
}

/**
 * docs/memory-matrix.md (written by `npm run memory -- --matrix`), bundled as text and read here, so what /api/formats
 * publishes is the measured table itself, never a copy that could drift from it.
 *
 * @example
 * measuredMatrix().rows[0] // { input: 'JPEG 1 MP (1152×864, 189 KiB)', cells: [{ status: 200, growthMiB: 18, estimateMiB: 24 }, ...] }
 */
export function measuredMatrix(markdown: string = text): MeasuredMatrix {
  const lines = markdown.split('\n')
  const header = lines.find((line) => line.startsWith('| input |'))
  const split = (line: string) => line.split('|').slice(1, -1).map((cell) => cell.trim())
  const rows = lines.filter((line) => /^\| (JPEG|PNG|WebP|AVIF|GIF) /.test(line)).map(split)
  return {
    source: 'docs/memory-matrix.md',
    measured: /on (\d{4}-\d{2}-\d{2})/.exec(markdown)?.[1] ?? '',
    columns: header ? split(header).slice(1) : [],
    rows: rows.map(([input, ...cells]) => ({ input: input!, cells: cells.map(cellOf) })),
  }
}
