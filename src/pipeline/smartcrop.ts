/**
 * gravity=auto: where a crop keeps what draws the eye, found on a small preview of the image (PREVIEW_SIDE pixels on its
 * longer side, so it costs the same at 1 and at 16 MP). Each preview pixel scores for its edges (the gradients of its
 * luma and of its saturation: where colour pops out, not where a whole wall is tinted) and how skin-like its colour is; the window of the crop's size with the highest total wins, a slight
 * pull to the middle breaking ties on flat images (which then crop as gravity=center does).
 */

/** The preview's longer side, in pixels. */
export const PREVIEW_SIDE = 256

/** How much each cue counts: edges are the strongest sign of a subject; colour edges and skin pick faces and products out of texture. */
const WEIGHTS = { edge: 1, saturation: 0.5, skin: 0.6 } as const

/**
 * Each pixel's interest (0 upward) in an RGBA preview.
 *
 * @example
 * const map = saliency(preview) // Float32Array of preview.width * preview.height
 */
export function saliency({ data, width, height }: ImageData): Float32Array {
  const luma = new Float32Array(width * height)
  const saturation = new Float32Array(width * height)
  for (let i = 0; i < width * height; i++) {
    const r = data[4 * i]!
    const g = data[4 * i + 1]!
    const b = data[4 * i + 2]!
    luma[i] = (0.299 * r + 0.587 * g + 0.114 * b) / 255
    const max = Math.max(r, g, b)
    // saturation counts where there is light to carry it (near-black pixels have noisy hues)
    saturation[i] = max > 0 ? ((max - Math.min(r, g, b)) / max) * Math.min(1, max / 96) : 0
  }
  // Sobel's gradient: where a plane changes, not how high it is (a gradient sky or a tinted wall is not a subject);
  // neighbours past the edge are the edge's pixels
  const map = new Float32Array(width * height)
  for (let y = 0; y < height; y++) {
    const up = Math.max(0, y - 1) * width
    const row = y * width
    const down = Math.min(height - 1, y + 1) * width
    for (let x = 0; x < width; x++) {
      const left = Math.max(0, x - 1)
      const right = Math.min(width - 1, x + 1)
      const i = row + x
      const skin = skinLike(data[4 * i]!, data[4 * i + 1]!, data[4 * i + 2]!)
      const edges = WEIGHTS.edge * sobel(luma, up, row, down, left, x, right) + WEIGHTS.saturation * sobel(saturation, up, row, down, left, x, right)
      map[i] = (data[4 * i + 3]! / 255) * (edges + WEIGHTS.skin * skin)
    }
  }
  return map
}

/** The Sobel gradient's size at (x, y) of a plane, from the rows above, at and below and the columns left and right (0-1). */
function sobel(plane: Float32Array, up: number, row: number, down: number, left: number, x: number, right: number): number {
  const gx = plane[up + right]! + 2 * plane[row + right]! + plane[down + right]! - plane[up + left]! - 2 * plane[row + left]! - plane[down + left]!
  const gy = plane[down + left]! + 2 * plane[down + x]! + plane[down + right]! - plane[up + left]! - 2 * plane[up + x]! - plane[up + right]!
  return Math.min(1, Math.sqrt(gx * gx + gy * gy) / 2)
}

/**
 * How skin-like a colour is (0-1): its chroma (Cb, Cr of BT.601) near the band human skin falls in under common
 * light, whatever its brightness, fading out over a margin rather than cut at a box's edge.
 */
function skinLike(r: number, g: number, b: number): number {
  const y = 0.299 * r + 0.587 * g + 0.114 * b
  if (y < 40 || y > 245) return 0
  const cb = 128 - 0.168736 * r - 0.331264 * g + 0.5 * b
  const cr = 128 + 0.5 * r - 0.418688 * g - 0.081312 * b
  const inside = (value: number, low: number, high: number, margin: number) =>
    Math.max(0, Math.min(1, (value - low + margin) / margin, (high + margin - value) / margin))
  return inside(cb, 80, 122, 8) * inside(cr, 136, 170, 8)
}

/**
 * The top-left corner of the `width` x `height` window (in preview pixels) of a saliency map with the highest total,
 * each pixel's interest weighted a little more towards the window's middle, so that a subject is framed rather than
 * grazed by the window's edge.
 *
 * @example
 * bestWindow(saliency(preview), preview.width, preview.height, 120, 256) // { x: 40, y: 0 }
 */
export function bestWindow(map: Float32Array, mapWidth: number, mapHeight: number, width: number, height: number): { x: number; y: number } {
  width = Math.max(1, Math.min(mapWidth, width))
  height = Math.max(1, Math.min(mapHeight, height))
  // summed-area table, so that every window's total is four lookups
  const stride = mapWidth + 1
  const table = new Float64Array(stride * (mapHeight + 1))
  for (let y = 0; y < mapHeight; y++) {
    let row = 0
    for (let x = 0; x < mapWidth; x++) {
      row += map[y * mapWidth + x]!
      table[(y + 1) * stride + x + 1] = table[y * stride + x + 1]! + row
    }
  }
  const total = (x: number, y: number, w: number, h: number) =>
    table[(y + h) * stride + x + w]! - table[y * stride + x + w]! - table[(y + h) * stride + x]! + table[y * stride + x]!
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
