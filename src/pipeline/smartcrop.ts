/**
 * gravity=auto: where a crop keeps what draws the eye, found on a small preview of the image (PREVIEW_SIDE pixels on its
 * longer side, so it costs the same at 1 and at 16 MP). Each preview pixel scores for its edges (the gradients of its
 * luma and of its saturation: where colour pops out, not where a whole wall is tinted), less the edges around it (a
 * texture such as bark, foliage or moss is as busy as its surroundings, a subject's outline on a calmer background is
 * not), for a colour far from the colours around it (a kite in a sky, a ladybird on a leaf) and for how skin-like its
 * colour is; the window of the crop's size with the highest total wins, a slight pull to the middle breaking ties on
 * flat images (which then crop as gravity=center does). The map is the lean codec's (`LeanCodec.saliency`,
 * wasm/lean/op_saliency.c, where the weights are: edges 1, saturation's edges 0.5, skin 0.6 until skin covers a fifth of
 * the picture, colour contrast 10; the edges' surroundings reach a quarter of the longer side, the colours' a tenth);
 * the window is found here. Measured on real photos with a hand-marked subject: docs/results/gravity-auto.md.
 */

/** The preview's longer side, in pixels. */
export const PREVIEW_SIDE = 256

/** A summed-area table of a plane (one row and column of zeros first), so that any rectangle's total is four lookups. */
function summedArea(plane: Float32Array, width: number, height: number): Float64Array {
  const stride = width + 1
  const table = new Float64Array(stride * (height + 1))
  for (let y = 0; y < height; y++) {
    let row = 0
    const above = y * stride + 1
    const at = above + stride
    const from = y * width
    for (let x = 0; x < width; x++) {
      row += plane[from + x]!
      table[at + x] = table[above + x]! + row
    }
  }
  return table
}

/** The total of a summed-area table's `w` x `h` rectangle at (x, y). */
function rectTotal(table: Float64Array, width: number, x: number, y: number, w: number, h: number): number {
  const stride = width + 1
  return table[(y + h) * stride + x + w]! - table[y * stride + x + w]! - table[(y + h) * stride + x]! + table[y * stride + x]!
}

/**
 * The top-left corner of the `width` x `height` window (in preview pixels) of a saliency map with the highest total,
 * each pixel's interest weighted a little more towards the window's middle, so that a subject is framed rather than
 * grazed by the window's edge.
 *
 * @example
 * bestWindow(lean.saliency(preview), preview.width, preview.height, 120, 256) // { x: 40, y: 0 }
 */
export function bestWindow(map: Float32Array, mapWidth: number, mapHeight: number, width: number, height: number): { x: number; y: number } {
  width = Math.max(1, Math.min(mapWidth, width))
  height = Math.max(1, Math.min(mapHeight, height))
  const table = summedArea(map, mapWidth, mapHeight)
  const total = (x: number, y: number, w: number, h: number) => rectTotal(table, mapWidth, x, y, w, h)
  // the window's inner half counts once more: its middle is where the subject should sit
  const innerW = Math.max(1, Math.round(width / 2))
  const innerH = Math.max(1, Math.round(height / 2))
  const middleX = (mapWidth - width) / 2
  const middleY = (mapHeight - height) / 2
  let best = { x: Math.floor(middleX), y: Math.floor(middleY) }
  let bestScore = Number.NEGATIVE_INFINITY
  for (let y = 0; y <= mapHeight - height; y++) {
    for (let x = 0; x <= mapWidth - width; x++) {
      const inner = total(x + Math.floor((width - innerW) / 2), y + Math.floor((height - innerH) / 2), innerW, innerH)
      const pull = 1e-4 * (Math.abs(x - middleX) + Math.abs(y - middleY))
      const score = total(x, y, width, height) + inner - pull
      if (score > bestScore) {
        bestScore = score
        best = { x, y }
      }
    }
  }
  return best
}
