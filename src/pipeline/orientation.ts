/**
 * rotate and flip as EXIF orientations: the EXIF turn, a flip and a rotation compose into one orientation, so the row
 * pipeline turns the image once (wasm/lean/pipeline.c rows_orient collects it once, whatever the three ask for).
 */
import type { CompressOptions } from './options'

export interface Rect {
  x: number
  y: number
  width: number
  height: number
}

/** Where stored pixel (sx, sy) of a `w` x `h` image lands once orientation `o` is applied (the inverse of transform.ts's orient()). */
function forward(o: number, w: number, h: number, sx: number, sy: number): [number, number] {
  switch (o) {
    case 2: return [w - 1 - sx, sy]
    case 3: return [w - 1 - sx, h - 1 - sy]
    case 4: return [sx, h - 1 - sy]
    case 5: return [sy, sx]
    case 6: return [h - 1 - sy, sx]
    case 7: return [h - 1 - sy, w - 1 - sx]
    case 8: return [sy, w - 1 - sx]
    default: return [sx, sy]
  }
}

/**
 * The orientation that does `first` then `second`, found by following three corners of a 2x3 image through both.
 *
 * @example
 * composeOrientation(6, 6) // 3: two quarter turns are a half turn
 */
export function composeOrientation(first: number, second: number): number {
  const corners: Array<[number, number]> = [[0, 0], [1, 0], [0, 2]]
  const through = ([x, y]: [number, number]) => {
    const [fx, fy] = forward(first, 2, 3, x, y)
    const [w, h] = first >= 5 ? [3, 2] : [2, 3]
    return forward(second, w, h, fx, fy)
  }
  const wanted = corners.map(through)
  for (let o = 1; o <= 8; o++) {
    if (corners.every((corner, i) => forward(o, 2, 3, ...corner).every((v, k) => v === wanted[i]![k]))) return o
  }
  throw new Error(`no orientation composes ${first} and ${second}`)
}

const ROTATION: Readonly<Record<number, number>> = { 0: 1, 90: 6, 180: 3, 270: 8 }
const FLIP: Readonly<Record<string, number>> = { h: 2, v: 4, hv: 3 }

/**
 * The orientation `flip` then `rotate` (clockwise) ask for, on top of the upright image (1: neither).
 *
 * @example
 * userOrientation({ rotate: 90, flip: undefined }) // 6
 */
export const userOrientation = ({ rotate, flip }: Pick<CompressOptions, 'rotate' | 'flip'>): number =>
  composeOrientation(flip ? FLIP[flip]! : 1, ROTATION[rotate ?? 0]!)

/**
 * A rectangle of a `width` x `height` image where it lands once orientation `o` is applied.
 *
 * @example
 * orientRect({ x: 0, y: 0, width: 10, height: 5 }, 100, 50, 6) // { x: 45, y: 0, width: 5, height: 10 }
 */
export function orientRect(rect: Rect, width: number, height: number, o: number): Rect {
  const [ax, ay] = forward(o, width, height, rect.x, rect.y)
  const [bx, by] = forward(o, width, height, rect.x + rect.width - 1, rect.y + rect.height - 1)
  return { x: Math.min(ax, bx), y: Math.min(ay, by), width: Math.abs(ax - bx) + 1, height: Math.abs(ay - by) + 1 }
}
