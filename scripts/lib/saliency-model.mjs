// A copy in JavaScript of gravity=auto's map (wasm/lean/op_saliency.c) and window search (src/pipeline/smartcrop.ts),
// its weights as options, to try weights on the subject photos in a second rather than a rebuild
// (scripts/subject-crop-tune.mjs). With the defaults it gives the Worker's windows on the subject photos; what the
// Worker does is still measured by scripts/subject-crop-check.mjs.

/** The weights now in op_saliency.c and smartcrop.ts; `cut`, `cutBand` and `skinPatch` are tried options, off. */
export const WEIGHTS = { edge: 1, saturation: 0.5, skin: 0.6, skinShare: 0.2, colour: 10, surround: 0.25, colourSurround: 0.1, inner: 1, cut: 0, cutBand: 0.03, skinPatch: 0, skinNear: 0.03, skinAround: 0.15 }

function within(value, low, high, margin) {
  const least = Math.min((value - low + margin) / margin, (high + margin - value) / margin)
  return least <= 0 ? 0 : least >= 1 ? 1 : least
}

function skinLike(r, g, b, y) {
  if (y < 40 || y > 245) return 0
  const cb = 128 - 0.168736 * r - 0.331264 * g + 0.5 * b
  const cr = 128 + 0.5 * r - 0.418688 * g - 0.081312 * b
  return within(cb, 80, 122, 8) * within(cr, 136, 170, 8)
}

function summedArea(plane, width, height) {
  const stride = width + 1
  const table = new Float64Array(stride * (height + 1))
  for (let y = 0; y < height; y++) {
    let row = 0
    for (let x = 0; x < width; x++) {
      row += plane[y * width + x]
      table[(y + 1) * stride + x + 1] = table[y * stride + x + 1] + row
    }
  }
  return table
}

/** A rectangle's total in a summed-area table. */
const rect = (t, width, x, y, w, h) => t[(y + h) * (width + 1) + x + w] - t[y * (width + 1) + x + w] - t[(y + h) * (width + 1) + x] + t[y * (width + 1) + x]

/** The mean of a square `radius` each way around (x, y), cut at the plane's edges. */
function boxMean(t, width, height, x, y, radius) {
  const left = Math.max(0, x - radius)
  const top = Math.max(0, y - radius)
  const w = Math.min(width, x + radius + 1) - left
  const h = Math.min(height, y + radius + 1) - top
  return rect(t, width, left, top, w, h) / (w * h)
}

function sobel(p, width, height, x, y) {
  const at = (i, j) => p[Math.min(height - 1, Math.max(0, j)) * width + Math.min(width - 1, Math.max(0, i))]
  const gx = at(x + 1, y - 1) + 2 * at(x + 1, y) + at(x + 1, y + 1) - at(x - 1, y - 1) - 2 * at(x - 1, y) - at(x - 1, y + 1)
  const gy = at(x - 1, y + 1) + 2 * at(x, y + 1) + at(x + 1, y + 1) - at(x - 1, y - 1) - 2 * at(x, y - 1) - at(x + 1, y - 1)
  return Math.min(1, Math.sqrt(gx * gx + gy * gy) / 2)
}

/**
 * The saliency map of an RGBA preview, as op_saliency.c computes it with the given weights.
 *
 * @example
 * const map = saliencyMap(rgba, 256, 160, WEIGHTS)
 */
export function saliencyMap(rgba, width, height, w) {
  const n = width * height
  const [luma, saturation, redGreen, yellowBlue, skin, edges] = Array.from({ length: 6 }, () => new Float32Array(n))
  let skinTotal = 0
  for (let i = 0; i < n; i++) {
    const r = rgba[4 * i]
    const g = rgba[4 * i + 1]
    const b = rgba[4 * i + 2]
    const y = 0.299 * r + 0.587 * g + 0.114 * b
    luma[i] = y / 255
    const max = Math.max(r, g, b)
    saturation[i] = max > 0 ? ((max - Math.min(r, g, b)) / max) * (max < 96 ? max / 96 : 1) : 0
    redGreen[i] = (r - g) / 255
    yellowBlue[i] = ((r + g) / 2 - b) / 255
    skin[i] = skinLike(r, g, b, y)
    skinTotal += skin[i]
  }
  const skinWeight = w.skinPatch ? 0 : w.skin * Math.max(0, 1 - skinTotal / n / w.skinShare)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const edge = w.edge * sobel(luma, width, height, x, y) + w.saturation * sobel(saturation, width, height, x, y)
      edges[y * width + x] = edge * edge
    }
  }
  const [edgeTable, rgTable, ybTable, skinTable] = [edges, redGreen, yellowBlue, skin].map((p) => summedArea(p, width, height))
  const longer = Math.max(width, height)
  const radius = (share) => Math.max(1, Math.round(longer * share))
  const [surround, colourSurround, skinNear, skinAround] = [w.surround, w.colourSurround, w.skinNear, w.skinAround].map(radius)
  const map = new Float32Array(n)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = y * width + x
      const dRg = redGreen[i] - boxMean(rgTable, width, height, x, y, colourSurround)
      const dYb = yellowBlue[i] - boxMean(ybTable, width, height, x, y, colourSurround)
      const distance = Math.sqrt(dRg * dRg + dYb * dYb)
      const edge = boxMean(edgeTable, width, height, x, y, 1) - boxMean(edgeTable, width, height, x, y, surround)
      const patch = w.skinPatch ? w.skinPatch * skin[i] * Math.max(0, boxMean(skinTable, width, height, x, y, skinNear) - boxMean(skinTable, width, height, x, y, skinAround)) : 0
      map[i] = (rgba[4 * i + 3] / 255) * (Math.max(0, edge) + skinWeight * skin[i] + patch + w.colour * distance ** 3)
    }
  }
  return map
}

/**
 * The top-left corner of the best `ww` x `wh` window of a map, as smartcrop.ts's bestWindow finds it (with `cut`, less
 * that many times the map's interest in a band `cutBand` of the window's longer side outside each edge).
 *
 * @example
 * bestWindow(map, 256, 160, 160, 160, WEIGHTS) // { x: 60, y: 0 }
 */
export function bestWindow(map, width, height, ww, wh, w) {
  ww = Math.max(1, Math.min(width, ww))
  wh = Math.max(1, Math.min(height, wh))
  const t = summedArea(map, width, height)
  const total = (x, y, a, b) => rect(t, width, x, y, a, b)
  const innerW = Math.max(1, Math.round(ww / 2))
  const innerH = Math.max(1, Math.round(wh / 2))
  const middleX = (width - ww) / 2
  const middleY = (height - wh) / 2
  const band = Math.max(1, Math.round(w.cutBand * Math.max(ww, wh)))
  let best = { x: Math.floor(middleX), y: Math.floor(middleY) }
  let bestScore = Number.NEGATIVE_INFINITY
  for (let y = 0; y <= height - wh; y++) {
    for (let x = 0; x <= width - ww; x++) {
      let score = total(x, y, ww, wh) + w.inner * total(x + Math.floor((ww - innerW) / 2), y + Math.floor((wh - innerH) / 2), innerW, innerH)
      score -= 1e-4 * (Math.abs(x - middleX) + Math.abs(y - middleY))
      if (w.cut) {
        const [left, right, top, bottom] = [Math.min(band, x), Math.min(band, width - x - ww), Math.min(band, y), Math.min(band, height - y - wh)]
        score -= w.cut * (total(x - left, y, left, wh) + total(x + ww, y, right, wh) + total(x, y - top, ww, top) + total(x, y + wh, ww, bottom))
      }
      if (score > bestScore) {
        bestScore = score
        best = { x, y }
      }
    }
  }
  return best
}
