/**
 * /api/formats publishes the measured memory matrix (docs/memory-matrix.md, bundled as text): every input row with a
 * cell per output column, converted cells with their peak growth and estimate, refused ones with the estimate.
 */
import { describe, expect, it } from 'vitest'
import { get } from '../helpers/api'

interface Cell { status: number; growthMiB?: number; estimateMiB?: number }
interface Matrix { source: string; measured: string; columns: string[]; rows: Array<{ input: string; cells: Cell[] }> }

describe('the measured memory matrix in /api/formats', () => {
  it('has every input row and output column of docs/memory-matrix.md, as numbers', async () => {
    const { limits } = (await (await get('/api/formats')).json()) as { limits: { measuredMatrix: Matrix; memoryBudgetMiB: number } }
    const matrix = limits.measuredMatrix
    expect(matrix.source).toBe('docs/memory-matrix.md')
    expect(matrix.measured).toMatch(/^\d{4}-\d{2}-\d{2}$/)
    expect(matrix.columns).toEqual(['→ JPEG full size', '→ JPEG 1600 px', '→ WebP full size', '→ WebP 1600 px', '→ PNG full size', '→ PNG 1600 px', '→ AVIF full size', '→ AVIF 1600 px'])
    expect(matrix.rows.length).toBe(22)
    for (const format of ['JPEG', 'PNG', 'WebP', 'AVIF', 'GIF']) {
      for (const mp of [1, 4, 12, 16]) expect(matrix.rows.some((row) => row.input.startsWith(`${format} ${mp} MP`)), `${format} ${mp} MP`).toBe(true)
    }
    for (const row of matrix.rows) {
      expect(row.cells).toHaveLength(8)
      for (const cell of row.cells) {
        expect([200, 413, 422], row.input).toContain(cell.status)
        if (cell.status === 200) expect(cell.growthMiB, row.input).toBeLessThan(limits.memoryBudgetMiB)
        if (cell.status === 422) expect(cell.estimateMiB, row.input).toBeGreaterThan(limits.memoryBudgetMiB)
      }
    }
    expect(matrix.rows[0]).toMatchObject({ input: expect.stringMatching(/^JPEG 1 MP/), cells: expect.arrayContaining([{ status: 200, growthMiB: expect.any(Number), estimateMiB: expect.any(Number) }]) })
    // Since 2026-11-26 every cell converts (the last refused: a 16 MP AVIF to AVIF, a 16 MP photo PNG to PNG at full size).
    const refused = matrix.rows.flatMap((row) => row.cells.filter((cell) => cell.status !== 200).map(() => row.input))
    expect(refused).toEqual([])
    expect(matrix.rows.find((row) => row.input.startsWith('PNG 16 MP'))?.cells[4]).toEqual({ status: 200, growthMiB: expect.any(Number), estimateMiB: expect.any(Number) })
  })
})
