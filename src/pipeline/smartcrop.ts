/**
 * gravity=auto: where a crop keeps what draws the eye, found on a small preview of the image (PREVIEW_SIDE pixels on its
 * longer side, so it costs the same at 1 and at 16 MP). Each preview pixel scores for its edges (the gradients of its
 * luma and of its saturation: where colour pops out, not where a whole wall is tinted), less the edges around it (a
 * texture such as bark, foliage or moss is as busy as its surroundings, a subject's outline on a calmer background is
 * not), and for how skin-like its colour is; the window of the crop's size with the highest total wins, a slight
 * pull to the middle breaking ties on flat images (which then crop as gravity=center does).
 * Measured on real photos with a hand-marked subject: docs/results/gravity-auto.md.
 */

/** The preview's longer side, in pixels. */
export const PREVIEW_SIDE = 256

/** How much each cue counts: edges are the strongest sign of a subject; colour edges and skin pick faces and products out of texture. */
const WEIGHTS = { edge: 1, saturation: 0.5, skin: 0.6 } as const

/**
 * The share of skin-coloured pixels at which skin stops counting: a face or hands are a small part of a picture, while
 * a warm-lit wall, sand, wood or a lamp's glow can fill a fifth of it and would otherwise pull the crop away from the subject.
 */
const SKIN_SHARE = 0.2

/** How far around a pixel its surroundings reach, as a share of the preview's longer side (a quarter: 64 pixels each way). */
const SURROUND = 0.25

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
  const skin = new Float32Array(width * height)
  let skinTotal = 0
  for (let i = 0; i < width * height; i++) {
    skin[i] = skinLike(data[4 * i]!, data[4 * i + 1]!, data[4 * i + 2]!)
    skinTotal += skin[i]!
  }
  const skinWeight = WEIGHTS.skin * Math.max(0, 1 - skinTotal / (width * height) / SKIN_SHARE)
  const edges = new Float32Array(width * height)
  for (let y = 0; y < height; y++) {
    const up = Math.max(0, y - 1) * width
    const row = y * width
    const down = Math.min(height - 1, y + 1) * width
    for (let x = 0; x < width; x++) {
      const left = Math.max(0, x - 1)
      const right = Math.min(width - 1, x + 1)
      // squared, so that a subject's sharp outline outweighs many soft gradients (light falling off a lamp, a blurred background)
      const edge = WEIGHTS.edge * sobel(luma, up, row, down, left, x, right) + WEIGHTS.saturation * sobel(saturation, up, row, down, left, x, right)
      edges[row + x] = edge * edge
    }
  }
  const table = summedArea(edges, width, height)
  const near = boxMeans(table, width, height, 1)
  const around = boxMeans(table, width, height, Math.max(1, Math.round(Math.max(width, height) * SURROUND)))
  const map = new Float32Array(width * height)
  for (let i = 0; i < width * height; i++) map[i] = (data[4 * i + 3]! / 255) * (Math.max(0, near[i]! - around[i]!) + skinWeight * skin[i]!)
  return map
}

/** A summed-area table of a plane (one row and column of zeros first), so that any rectangle's total is four lookups. */
function summedArea(plane: Float32Array, width: number, height: number): Float64Array {
  const stride = width + 1
  const table = new Float64Array(stride * (height + 1))
  for (let y = 0; y < height; y++) {
    let row = 0
    for (let x = 0; x < width; x++) {
      row += plane[y * width + x]!
      table[(y + 1) * stride + x + 1] = table[y * stride + x + 1]! + row
    }
  }
  return table
}

/** The total of a summed-area table's `w` x `h` rectangle at (x, y). */
function rectTotal(table: Float64Array, width: number, x: number, y: number, w: number, h: number): number {
  const stride = width + 1
  return table[(y + h) * stride + x + w]! - table[y * stride + x + w]! - table[(y + h) * stride + x]! + table[y * stride + x]!
}

/** Each pixel's mean over the square `radius` pixels each way around it, cut at the plane's edges. */
function boxMeans(table: Float64Array, width: number, height: number, radius: number): Float32Array {
  const means = new Float32Array(width * height)
  for (let y = 0; y < height; y++) {
    const top = Math.max(0, y - radius)
    const h = Math.min(height, y + radius + 1) - top
    for (let x = 0; x < width; x++) {
      const left = Math.max(0, x - radius)
      const w = Math.min(width, x + radius + 1) - left
      means[y * width + x] = rectTotal(table, width, left, top, w, h) / (w * h)
    }
  }
  return means
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
