/**
 * gravity=auto: where a crop keeps what draws the eye, found on a small preview of the image (PREVIEW_SIDE pixels on its
 * longer side, so it costs the same at 1 and at 16 MP). Each preview pixel scores for its edges (the gradients of its
 * luma and of its saturation: where colour pops out, not where a whole wall is tinted), less the edges around it (a
 * texture such as bark, foliage or moss is as busy as its surroundings, a subject's outline on a calmer background is
 * not), for a colour that stands out from the colours around it, and for how skin-like its colour is; the window of the crop's size with the highest total wins, a slight
 * pull to the middle breaking ties on flat images (which then crop as gravity=center does).
 * Measured on real photos with a hand-marked subject: docs/results/gravity-auto.md.
 */

/** The preview's longer side, in pixels. */
export const PREVIEW_SIDE = 256

/** How much each cue counts: edges are the strongest sign of a subject; colour edges and skin pick faces and products out of texture. */
const WEIGHTS = { edge: 1, saturation: 0.5, skin: 0.6, colour: 10 } as const

/**
 * The share of skin-coloured pixels at which skin stops counting: a face or hands are a small part of a picture, while
 * a warm-lit wall, sand, wood or a lamp's glow can fill a fifth of it and would otherwise pull the crop away from the subject.
 */
const SKIN_SHARE = 0.2

/** How far around a pixel its surroundings reach, as a share of the preview's longer side (a quarter: 64 pixels each way). */
const SURROUND = 0.25

/** How far a pixel's colour is compared around it, as a share of the longer side (a tenth: 26 pixels each way). */
const COLOUR_SURROUND = 0.1

/**
 * Each pixel's interest (0 upward) in an RGBA preview.
 *
 * @example
 * const map = saliency(preview) // Float32Array of preview.width * preview.height
 */
export function saliency({ data, width, height }: ImageData): Float32Array {
  const n = width * height
  const luma = new Float32Array(n)
  const saturation = new Float32Array(n)
  // two opponent colour planes (red against green, yellow against blue), for the colour cue
  const redGreen = new Float32Array(n)
  const yellowBlue = new Float32Array(n)
  const skin = new Float32Array(n)
  let skinTotal = 0
  for (let i = 0, j = 0; i < n; i++, j += 4) {
    const r = data[j]!
    const g = data[j + 1]!
    const b = data[j + 2]!
    const y = 0.299 * r + 0.587 * g + 0.114 * b
    luma[i] = y / 255
    const max = r > g ? (r > b ? r : b) : g > b ? g : b
    const min = r < g ? (r < b ? r : b) : g < b ? g : b
    // saturation counts where there is light to carry it (near-black pixels have noisy hues)
    saturation[i] = max > 0 ? ((max - min) / max) * (max < 96 ? max / 96 : 1) : 0
    redGreen[i] = (r - g) / 255
    yellowBlue[i] = ((r + g) / 2 - b) / 255
    const s = skinLike(r, g, b, y)
    skin[i] = s
    skinTotal += s
  }
  const skinWeight = WEIGHTS.skin * Math.max(0, 1 - skinTotal / n / SKIN_SHARE)
  // Sobel's gradient: where a plane changes, not how high it is (a gradient sky or a tinted wall is not a subject);
  // neighbours past the edge are the edge's pixels
  const edges = new Float32Array(n)
  for (let y = 0; y < height; y++) {
    const up = Math.max(0, y - 1) * width
    const row = y * width
    const down = Math.min(height - 1, y + 1) * width
    for (let x = 0; x < width; x++) {
      const left = x > 0 ? x - 1 : 0
      const right = x < width - 1 ? x + 1 : x
      // squared, so that a subject's sharp outline outweighs many soft gradients (light falling off a lamp, a blurred background)
      const edge = WEIGHTS.edge * sobel(luma, up, row, down, left, x, right) + WEIGHTS.saturation * sobel(saturation, up, row, down, left, x, right)
      edges[row + x] = edge * edge
    }
  }
  const edgeTable = summedArea(edges, width, height)
  const redGreenTable = summedArea(redGreen, width, height)
  const yellowBlueTable = summedArea(yellowBlue, width, height)
  const surround = Math.max(1, Math.round(Math.max(width, height) * SURROUND))
  const colourSurround = Math.max(1, Math.round(Math.max(width, height) * COLOUR_SURROUND))
  const map = new Float32Array(n)
  for (let y = 0; y < height; y++) {
    const near = boxRows(y, 1, width, height)
    const around = boxRows(y, surround, width, height)
    const colourAround = boxRows(y, colourSurround, width, height)
    for (let x = 0; x < width; x++) {
      const i = y * width + x
      // colour contrast: how far a pixel's colour is from its surroundings' mean, cubed so that only a colour that
      // stands out counts (a small saturated object in a sky or among leaves, not the slow shifts of a landscape)
      const dRG = redGreen[i]! - boxMean(redGreenTable, colourAround, x, colourSurround, width)
      const dYB = yellowBlue[i]! - boxMean(yellowBlueTable, colourAround, x, colourSurround, width)
      const distance = Math.sqrt(dRG * dRG + dYB * dYB)
      const edge = boxMean(edgeTable, near, x, 1, width) - boxMean(edgeTable, around, x, surround, width)
      map[i] = (data[4 * i + 3]! / 255) * ((edge > 0 ? edge : 0) + skinWeight * skin[i]! + WEIGHTS.colour * distance * distance * distance)
    }
  }
  return map
}

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

/** The rows a square `radius` pixels each way around row y covers, cut at the plane's edges: where they start and end in a summed-area table. */
function boxRows(y: number, radius: number, width: number, height: number): { top: number; bottom: number; rows: number } {
  const top = y > radius ? y - radius : 0
  const bottom = y + radius + 1 < height ? y + radius + 1 : height
  return { top: top * (width + 1), bottom: bottom * (width + 1), rows: bottom - top }
}

/** The mean of a summed-area table over `rows` (boxRows') and the columns `radius` each way around x (a float32, as a plane of means would hold it). */
function boxMean(table: Float64Array, { top, bottom, rows }: { top: number; bottom: number; rows: number }, x: number, radius: number, width: number): number {
  const left = x > radius ? x - radius : 0
  const right = x + radius + 1 < width ? x + radius + 1 : width
  return Math.fround((table[bottom + right]! - table[top + right]! - table[bottom + left]! + table[top + left]!) / ((right - left) * rows))
}

/** The total of a summed-area table's `w` x `h` rectangle at (x, y). */
function rectTotal(table: Float64Array, width: number, x: number, y: number, w: number, h: number): number {
  const stride = width + 1
  return table[(y + h) * stride + x + w]! - table[y * stride + x + w]! - table[(y + h) * stride + x]! + table[y * stride + x]!
}

/** The Sobel gradient's size at (x, y) of a plane, from the rows above, at and below and the columns left and right (0-1). */
function sobel(plane: Float32Array, up: number, row: number, down: number, left: number, x: number, right: number): number {
  const gx = plane[up + right]! + 2 * plane[row + right]! + plane[down + right]! - plane[up + left]! - 2 * plane[row + left]! - plane[down + left]!
  const gy = plane[down + left]! + 2 * plane[down + x]! + plane[down + right]! - plane[up + left]! - 2 * plane[up + x]! - plane[up + right]!
  const size = Math.sqrt(gx * gx + gy * gy) / 2
  return size < 1 ? size : 1
}

/** A value's membership of [low, high], fading out over `margin` on each side (0-1). */
function within(value: number, low: number, high: number, margin: number): number {
  const below = (value - low + margin) / margin
  const above = (high + margin - value) / margin
  const least = below < above ? below : above
  return least <= 0 ? 0 : least >= 1 ? 1 : least
}

/**
 * How skin-like a colour of luma `y` is (0-1): its chroma (Cb, Cr of BT.601) near the band human skin falls in under
 * common light, whatever its brightness, fading out over a margin rather than cut at a box's edge.
 */
function skinLike(r: number, g: number, b: number, y: number): number {
  if (y < 40 || y > 245) return 0
  const cb = 128 - 0.168736 * r - 0.331264 * g + 0.5 * b
  const cr = 128 + 0.5 * r - 0.418688 * g - 0.081312 * b
  return within(cb, 80, 122, 8) * within(cr, 136, 170, 8)
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
