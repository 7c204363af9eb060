import { describe, expect, it } from 'vitest'
import { planGeometry } from '../../src/pipeline/transform'

const plan = (w: number, h: number, o: { width?: number; height?: number; fit?: 'inside' | 'cover' | 'contain' | 'fill' | 'crop'; enlarge?: boolean }) =>
  planGeometry(w, h, { fit: 'inside', enlarge: false, ...o })

describe('planGeometry', () => {
  it('keeps the size when no width or height is given', () => {
    expect(plan(4032, 3024, {}).canvas).toEqual({ width: 4032, height: 3024 })
  })

  it('keeps the aspect ratio when only width is given', () => {
    expect(plan(4032, 3024, { width: 1000 }).canvas).toEqual({ width: 1000, height: 750 })
  })

  it('keeps the aspect ratio when only height is given', () => {
    expect(plan(4032, 3024, { height: 300 }).canvas).toEqual({ width: 400, height: 300 })
  })

  it('fits inside the box by default', () => {
    expect(plan(480, 300, { width: 200, height: 200 }).canvas).toEqual({ width: 200, height: 125 })
  })

  it('covers the box by cropping the centre', () => {
    const g = plan(480, 300, { width: 200, height: 200, fit: 'cover' })
    expect(g.canvas).toEqual({ width: 200, height: 200 })
    expect(g.crop).toEqual({ x: 90, y: 0, width: 300, height: 300 })
  })

  it('contains the image in the box and pads it', () => {
    const g = plan(480, 300, { width: 200, height: 200, fit: 'contain' })
    expect(g.resize).toEqual({ width: 200, height: 125 })
    expect(g.canvas).toEqual({ width: 200, height: 200 })
  })

  it('stretches to the box with fill', () => {
    expect(plan(480, 300, { width: 200, height: 200, fit: 'fill' }).canvas).toEqual({ width: 200, height: 200 })
  })

  it("crops as cover with crop, never enlarging, and keeps a side smaller than the box whole (Cloudflare's crop)", () => {
    expect(plan(480, 300, { width: 200, height: 200, fit: 'crop' })).toEqual(plan(480, 300, { width: 200, height: 200, fit: 'cover' }))
    expect(plan(480, 300, { width: 1000, height: 1000, fit: 'crop' }).canvas).toEqual({ width: 480, height: 300 })
    const wide = plan(480, 300, { width: 1000, height: 200, fit: 'crop' })
    expect([wide.crop, wide.canvas]).toEqual([{ x: 0, y: 50, width: 480, height: 200 }, { width: 480, height: 200 }])
    expect(plan(480, 300, { width: 240, height: 1000, fit: 'crop', enlarge: true }).canvas).toEqual({ width: 240, height: 300 })
  })

  it('never enlarges without enlarge=true', () => {
    expect(plan(480, 300, { width: 1000 }).canvas).toEqual({ width: 480, height: 300 })
    expect(plan(480, 300, { width: 1000, height: 1000, fit: 'fill' }).canvas).toEqual({ width: 480, height: 300 })
    expect(plan(480, 300, { width: 1000, height: 1000, fit: 'cover' }).canvas).toEqual({ width: 300, height: 300 })
  })

  it('enlarges with enlarge=true', () => {
    expect(plan(480, 300, { width: 960, enlarge: true }).canvas).toEqual({ width: 960, height: 600 })
    expect(plan(480, 300, { width: 1000, height: 1000, fit: 'cover', enlarge: true }).canvas).toEqual({ width: 1000, height: 1000 })
  })

  it('covers the box exactly when enlarging a crop that rounds to whole pixels', () => {
    // 64x16 to 400x300: the crop is 21.3x16 source pixels, 21x16 rounded, which scaled by 18.75 is 394 wide
    const g = plan(64, 16, { width: 400, height: 300, fit: 'cover', enlarge: true })
    expect(g.crop).toEqual({ x: 21, y: 0, width: 21, height: 16 })
    expect(g.canvas).toEqual({ width: 400, height: 300 })
  })

  it('never plans a zero-pixel side', () => {
    expect(plan(10000, 10, { width: 100 }).canvas).toEqual({ width: 100, height: 1 })
  })
})
