/**
 * /api/formats publishes the measured memory matrix (docs/memory-matrix.md, bundled as text): every input row with a
 * cell per output column, converted cells with their peak growth and estimate, refused ones with the estimate, and what
 * each input (a format at a size) converts to: camera-size rows (24, 36, 50 MP) say what fits at each size.
 */
import { describe, expect, it } from 'vitest'
import { get } from '../helpers/api'

interface Cell { status: number; growthMiB?: number; estimateMiB?: number }
interface Matrix { source: string; measured: string; columns: string[]; rows: Array<{ input: string; megapixels: number; cells: Cell[]; converts: string[]; refused: string[] }> }

describe('the measured memory matrix in /api/formats', () => {
  it('has every input row and output column of docs/memory-matrix.md, as numbers', async () => {
    const { limits } = (await (await get('/api/formats')).json()) as { limits: { measuredMatrix: Matrix; memoryBudgetMiB: number } }
    const matrix = limits.measuredMatrix
    expect(matrix.source).toBe('docs/memory-matrix.md')
    expect(matrix.measured).toMatch(/^\d{4}-\d{2}-\d{2}$/)
    expect(matrix.columns).toEqual([
      '→ JPEG full size', '→ JPEG 1600 px', '→ WebP full size', '→ WebP 1600 px', '→ PNG full size', '→ PNG 1600 px', '→ AVIF full size', '→ AVIF 1600 px',
      '→ JPEG 2048 px', '→ WebP 2048 px', '→ AVIF 2048 px', '→ WebP lossless full size',
    ])
    for (const format of ['JPEG', 'PNG', 'WebP', 'AVIF', 'GIF']) {
      for (const mp of [1, 4, 12, 16]) expect(matrix.rows.some((row) => row.input.startsWith(`${format} ${mp} MP`)), `${format} ${mp} MP`).toBe(true)
    }
    for (const input of ['JPEG 24', 'JPEG 36', 'JPEG 50', 'JPEG progressive 24', 'PNG 24', 'PNG 36', 'PNG 50', 'WebP 24', 'AVIF 24', 'PNG screenshot 14.7']) {
      expect(matrix.rows.some((row) => row.input.startsWith(`${input} MP`)), input).toBe(true)
    }
    for (const row of matrix.rows) {
      expect(row.cells).toHaveLength(matrix.columns.length)
      for (const cell of row.cells) {
        // (0: a cell not measured)
        expect([0, 200, 413, 422], row.input).toContain(cell.status)
        if (cell.status === 200) expect(cell.growthMiB, row.input).toBeLessThan(limits.memoryBudgetMiB)
        if (cell.status === 200) expect(cell.growthMiB, row.input).toBeLessThanOrEqual(cell.estimateMiB!)
        if (cell.status === 422) expect(cell.estimateMiB, row.input).toBeGreaterThan(limits.memoryBudgetMiB)
      }
      expect([...row.converts, ...row.refused].sort(), row.input).toEqual(matrix.columns.filter((_, i) => row.cells[i]!.status !== 0).sort())
    }
    expect(matrix.rows[0]).toMatchObject({ input: expect.stringMatching(/^JPEG 1 MP/), megapixels: 1, cells: expect.arrayContaining([{ status: 200, growthMiB: expect.any(Number), estimateMiB: expect.any(Number) }]) })
    // Up to 16 MP every cell converts; a 24 MP JPEG to every format at full size and 1600 px, a 50 MP one to 2048 px.
    const upTo16 = matrix.rows.filter((row) => row.megapixels <= 16 && !row.input.includes('screenshot'))
    expect(upTo16.flatMap((row) => row.refused)).toEqual([])
    expect(matrix.rows.find((row) => row.input.startsWith('JPEG 24 MP'))?.converts).toHaveLength(9)
    expect(matrix.rows.find((row) => row.input.startsWith('JPEG 50 MP'))?.converts).toEqual(['→ JPEG 2048 px', '→ WebP 2048 px', '→ AVIF 2048 px'])
    // A 24-50 MP photo PNG (42-85 MiB) to JPEG, WebP and AVIF at 1600 and 2048 px: read as it arrives, never held.
    for (const mp of [24, 36, 50]) {
      const row = matrix.rows.find((r) => r.input.startsWith(`PNG ${mp} MP`))
      for (const size of ['1600', '2048']) for (const format of ['JPEG', 'WebP', 'AVIF']) expect(row?.converts, `PNG ${mp} MP`).toContain(`→ ${format} ${size} px`)
    }
    // Screenshots to lossless WebP convert (our streaming coder, where libwebp's VP8L encoder held about 25 B a pixel).
    for (const row of matrix.rows.filter((r) => r.input.startsWith('PNG screenshot'))) {
      expect(row.refused, row.input).toEqual([])
      expect(row.converts, row.input).toContain('→ WebP lossless full size')
    }
    // A 24 MP progressive JPEG converts to each (its coefficients kept compressed, and given back before libaom starts).
    expect(matrix.rows.find((row) => row.input.startsWith('JPEG progressive 24 MP'))?.refused).toEqual([])
  })
})
