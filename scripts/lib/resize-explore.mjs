#!/usr/bin/env node
// Experiment: the lean codec's Lanczos3 (wasm/lean/resample.c) in Node, on the worker's own wasm
// (docs/notes/benchmarks.md, item 17).
//
//   node_modules/.bin/node --experimental-transform-types scripts/lib/resize-explore.mjs compare PHOTO.jpg
//   node_modules/.bin/node --experimental-transform-types scripts/lib/resize-explore.mjs scales PHOTO.jpg WIDTH
//
// compare: PHOTO decoded, then resampled to four sizes by resample.c and by squoosh's Lanczos3
//   (@jsquash/resize, which the worker used before): PSNR between the two and the best of 5 times.
// scales: PHOTO to WIDTH px wide from each JPEG DCT scale N/8 that is still at least WIDTH, with and
//   without an integer box shrink before Lanczos3 (the transform before item 17), scored against
//   Lanczos3 of the full-size decode; time is decode plus transform, best of 3.
import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import '../../wasm/imagedata.ts'
import { LeanCodec } from '../../wasm/lean.ts'
import { MemoryCap } from '../../wasm/cap.ts'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const [mode, file, width] = process.argv.slice(2)
if (!['compare', 'scales'].includes(mode) || !file) {
  console.error('usage: resize-explore.mjs compare PHOTO.jpg | scales PHOTO.jpg WIDTH')
  process.exit(2)
}
const lean = await WebAssembly.compile(fs.readFileSync(path.join(root, 'wasm/lean/lean.wasm')))
const codec = () => new LeanCodec(lean, new MemoryCap(2 ** 31))
const jpeg = fs.readFileSync(file)

/** A fresh decode at scale/8, copied out of the codec's memory. */
function decode(scale) {
  const c = codec()
  c.openJpeg(jpeg)
  c.start(scale, 4)
  const image = c.decodeRgba(1)
  return new ImageData(new Uint8ClampedArray(image.data), image.width, image.height)
}

function psnr(a, b) {
  let sum = 0
  let n = 0
  for (let i = 0; i < a.data.length; i++) {
    if (i % 4 === 3) continue
    const d = a.data[i] - b.data[i]
    sum += d * d
    n++
  }
  return sum === 0 ? Infinity : 10 * Math.log10((255 * 255) / (sum / n))
}

function best(runs, work) {
  let ms = Infinity
  let result
  for (let r = 0; r < runs; r++) {
    const start = performance.now()
    result = work()
    ms = Math.min(ms, performance.now() - start)
  }
  return { ms, result }
}

/** Alpha-weighted average of fx x fy blocks: the box pass the transform ran before Lanczos3 until item 17. */
function boxShrink(image, fx, fy) {
  const w = Math.floor(image.width / fx)
  const h = Math.floor(image.height / fy)
  const src = image.data
  const out = new Uint8ClampedArray(w * h * 4)
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const sum = [0, 0, 0, 0]
      for (let dy = 0; dy < fy; dy++) {
        for (let dx = 0; dx < fx; dx++) {
          const i = ((y * fy + dy) * image.width + x * fx + dx) * 4
          for (let c = 0; c < 3; c++) sum[c] += src[i + c] * src[i + 3]
          sum[3] += src[i + 3]
        }
      }
      const o = (y * w + x) * 4
      if (sum[3] > 0) for (let c = 0; c < 3; c++) out[o + c] = sum[c] / sum[3]
      out[o + 3] = sum[3] / (fx * fy)
    }
  }
  return new ImageData(out, w, h)
}

const full = decode(8)
const lanczos = (image, w, h) => codec().resizeRgba(image, w, h, false)

if (mode === 'compare') {
  const require = createRequire(path.join(root, 'package.json'))
  const squoosh = await import(require.resolve('@jsquash/resize'))
  await squoosh.initResize(await WebAssembly.compile(fs.readFileSync(require.resolve('@jsquash/resize/lib/resize/pkg/squoosh_resize_bg.wasm'))))
  const { width: W, height: H } = full
  for (const [w, h] of [[Math.round(W * 0.52), Math.round(H * 0.52)], [800, Math.round((800 * H) / W)], [W * 2 - 3, H * 2 - 1], [7, 1]]) {
    const ours = best(5, () => lanczos(full, w, h))
    let theirs = { ms: Infinity }
    for (let r = 0; r < 5; r++) {
      const start = performance.now()
      theirs.result = await squoosh.default(full, { width: w, height: h, method: 'lanczos3', premultiply: false, linearRGB: false, fitMethod: 'stretch' })
      theirs.ms = Math.min(theirs.ms, performance.now() - start)
    }
    console.log(`${W}x${H} -> ${w}x${h}: resample.c ${ours.ms.toFixed(0)} ms, squoosh ${theirs.ms.toFixed(0)} ms, PSNR between them ${psnr(ours.result, theirs.result).toFixed(2)} dB`)
  }
} else {
  const W = Number(width)
  const H = Math.round((W * full.height) / full.width)
  const reference = lanczos(full, W, H)
  for (let scale = 8; scale >= 1 && Math.ceil((full.width * scale) / 8) >= W; scale--) {
    for (const box of [false, true]) {
      const { ms, result } = best(3, () => {
        let image = decode(scale)
        const fx = Math.floor(image.width / W)
        const fy = Math.floor(image.height / H)
        if (box && (fx > 1 || fy > 1)) image = boxShrink(image, fx, fy)
        return image.width === W && image.height === H ? image : lanczos(image, W, H)
      })
      console.log(`${scale}/8 ${box ? 'box, then Lanczos3' : 'Lanczos3 only     '}: ${ms.toFixed(0)} ms, ${psnr(reference, result).toFixed(2)} dB against Lanczos3 of the full decode`)
    }
  }
}
