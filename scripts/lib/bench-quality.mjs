// Perceptual scores for scripts/bench.mjs, and the matched-quality search (the bytes an encoder needs to
// reach a target score).
//
// The score is SSIM computed by ssim.js (its "weber" algorithm, 11x11 window, default constants) on the
// Y, Cb and Cr planes (BT.601, full range) of both images, decoded by sharp and flattened onto white,
// each plane first box-downsampled by f = round(min(width, height) / 256) as the original SSIM paper
// recommends (and as ssim.js's own default does for grey), then combined as (6 Y + Cb + Cr) / 8, the
// usual 6:1:1 weighting of video coding. ssim.js alone scores luma only, which hides where two encoders
// spend bits differently on colour (MozJPEG and libjpeg-turbo do: same luma SSIM, 18 % different size).
// The luma-only figure is kept too (`y`).
//
// npm has no maintained SSIMULACRA2 or butteraugli package (checked with `npm view` when this was
// written: `ssimulacra2` does not exist, `butteraugli` is a single 0.0.2 release), so SSIM it is.

import path from 'node:path'
import { createRequire } from 'node:module'

/** Y, Cb, Cr planes of RGBA pixels, box-downsampled by f, as grey RGBA images for ssim.js. */
function planes(rgba, width, height) {
  const f = Math.max(1, Math.round(Math.min(width, height) / 256))
  const w = Math.floor(width / f)
  const h = Math.floor(height / f)
  const out = [0, 1, 2].map(() => new Uint8ClampedArray(w * h * 4))
  const n = f * f
  for (let by = 0; by < h; by++) {
    for (let bx = 0; bx < w; bx++) {
      let y = 0
      let cb = 0
      let cr = 0
      for (let dy = 0; dy < f; dy++) {
        let i = ((by * f + dy) * width + bx * f) * 4
        for (let dx = 0; dx < f; dx++, i += 4) {
          const r = rgba[i]
          const g = rgba[i + 1]
          const b = rgba[i + 2]
          y += 0.299 * r + 0.587 * g + 0.114 * b
          cb += 128 - 0.168736 * r - 0.331264 * g + 0.5 * b
          cr += 128 + 0.5 * r - 0.418688 * g - 0.081312 * b
        }
      }
      const o = (by * w + bx) * 4
      for (const [k, v] of [[0, y], [1, cb], [2, cr]]) {
        const p = out[k]
        p[o] = p[o + 1] = p[o + 2] = v / n + 0.5
        p[o + 3] = 255
      }
    }
  }
  return out.map((data) => ({ data, width: w, height: h }))
}

export function createScorer(root, sharp) {
  const require = createRequire(path.join(root, 'package.json'))
  const { ssim } = require('ssim.js')

  /** RGBA pixels of an encoded image (or raw input), flattened onto white, optionally resized to `size`. */
  async function rgbaOf(input, size) {
    let p = sharp(input.data ? input.data : input, input.data ? { raw: input.raw } : undefined).rotate()
    p = p.flatten({ background: '#ffffff' })
    if (size) p = p.resize(size.width, size.height, { fit: 'fill', kernel: 'lanczos3' })
    const { data, info } = await p.ensureAlpha().raw().toBuffer({ resolveWithObject: true })
    return { data: new Uint8ClampedArray(data.buffer, data.byteOffset, data.length), width: info.width, height: info.height }
  }

  /**
   * The reference an output is scored against: the input's pixels, or, for a resized output, the
   * input's full-size pixels resized by sharp with Lanczos3 (no shrink-on-load) to the output's size.
   */
  async function reference(inputBytes, size) {
    if (!size) return rgbaOf(inputBytes)
    const full = await sharp(inputBytes).rotate().raw().toBuffer({ resolveWithObject: true })
    return rgbaOf({ data: full.data, raw: { width: full.info.width, height: full.info.height, channels: full.info.channels } }, size)
  }

  /**
   * SSIM of an encoded output against a reference: `ssim` the Y:Cb:Cr 6:1:1 combination, `y` luma only.
   * An output of another size is resized to the reference's first (flagged).
   */
  async function score(ref, encoded) {
    const meta = await sharp(encoded).metadata()
    const resized = meta.width !== ref.width || meta.height !== ref.height
    const img = await rgbaOf(encoded, resized ? { width: ref.width, height: ref.height } : undefined)
    ref.planes ??= planes(ref.data, ref.width, ref.height)
    const [y, cb, cr] = planes(img.data, img.width, img.height).map((p, i) => ssim(ref.planes[i], p, { downsample: false }).mssim)
    return { ssim: (6 * y + cb + cr) / 8, y, cb, cr, resized }
  }

  /**
   * Lossless check: 'exact' when the output decodes to exactly the input's RGBA; 'visible' when only the
   * colour of fully transparent pixels differs (oxipng's alpha optimisation recolours them: invisible,
   * and so lossless as an image); false otherwise.
   */
  async function identical(inputBytes, encoded) {
    const a = await sharp(inputBytes).ensureAlpha().raw().toBuffer()
    const b = await sharp(encoded).ensureAlpha().raw().toBuffer()
    if (a.length !== b.length) return false
    if (a.equals(b)) return 'exact'
    for (let i = 0; i < a.length; i += 4) {
      if (a[i + 3] !== b[i + 3]) return false
      if (a[i + 3] !== 0 && (a[i] !== b[i] || a[i + 1] !== b[i + 1] || a[i + 2] !== b[i + 2])) return false
    }
    return 'visible'
  }

  return { reference, score, identical }
}

/**
 * The lowest integer quality whose SSIM reaches `target`, by bisection from a first guess, in at most
 * `maxSteps` encodes. `encode(q)` returns { bytes, ssim, ms }. Returns the passing and failing
 * neighbours and the bytes linearly interpolated (in SSIM) between them at exactly the target.
 */
export async function matchQuality(encode, { target, start, maxSteps = 7, log = () => {} }) {
  const tried = new Map()
  const at = async (q) => {
    if (!tried.has(q)) {
      const r = await encode(q)
      tried.set(q, { q, ...r })
      log(`    q=${q}: ${r.bytes} bytes, SSIM ${r.ssim.toFixed(5)}`)
    }
    return tried.get(q)
  }
  let pass = null // lowest passing
  let fail = null // highest failing
  const record = (r) => {
    if (r.ssim >= target) {
      if (!pass || r.q < pass.q) pass = r
    } else if (!fail || r.q > fail.q) fail = r
  }
  record(await at(start))
  // Walk out from the first guess in growing steps until the target is bracketed, then bisect.
  let step = 8
  while (tried.size < maxSteps && (!pass || !fail)) {
    const q = pass ? Math.max(1, pass.q - step) : Math.min(100, fail.q + step)
    if (tried.has(q)) break
    record(await at(q))
    step *= 2
  }
  while (tried.size < maxSteps && pass && fail && pass.q - fail.q > 1) {
    record(await at(Math.round((pass.q + fail.q) / 2)))
  }
  let interpolated = pass?.bytes ?? null
  if (pass && fail && pass.ssim > fail.ssim) {
    interpolated = fail.bytes + ((target - fail.ssim) / (pass.ssim - fail.ssim)) * (pass.bytes - fail.bytes)
  }
  return { pass, fail, interpolated, steps: tried.size, exact: Boolean(pass && fail && pass.q - fail.q === 1) || pass?.q === 1 }
}
