// The sharp side of scripts/bench.mjs: the same conversion as POST /api/compress, with imgedge's
// options mapped onto sharp's (the mapping is printed in docs/results/benchmarks.md from SETTINGS_MAPPING).

import path from 'node:path'
import { createRequire } from 'node:module'

export function loadSharp(root) {
  const require = createRequire(path.join(root, 'package.json'))
  const sharp = require('sharp')
  // libvips caches operations by their arguments; a benchmark must not be answered from that cache.
  sharp.cache(false)
  return sharp
}

/** How imgedge's options become sharp's, for docs/results/benchmarks.md. */
export const SETTINGS_MAPPING = [
  ['JPEG', 'effort 4 (default): MozJPEG (wasm), `quality` (default 80), progressive, trellis quantisation, optimised Huffman, 4:2:0; where MozJPEG does not fit the memory budget (12 MP at full size), libjpeg-turbo progressive in one pass. Effort 2 (rows marked `effort=2`): libjpeg-turbo (wasm/lean), baseline, optimised Huffman, 4:2:0, standard tables: the settings of sharp\'s default', "`jpeg({ quality, mozjpeg: false })`: sharp's default, libjpeg-turbo behaviour (baseline, no trellis, optimised Huffman, 4:2:0); matched-quality tables also show `mozjpeg: true`"],
  ['WebP', 'libwebp 1.5.0 (wasm/lean, SIMD), `quality` (80), `method = min(effort, 6)` (4); a JPEG kept at its size in one pass, decoded rows straight into the YUV planes', '`webp({ quality, effort: min(effort, 6) })`: the same libwebp settings (method = effort)'],
  ['AVIF', 'libavif + libaom (wasm), `quality` (50), `speed = 10 - effort` (6; effort capped by size: see docs/guide/limits-errors.md), 4:2:0 (libsharpyuv), 8-bit', "`avif({ quality, effort: X-Effort - 1, chromaSubsampling: '4:2:0', bitdepth: 8 })`: libaom `cpu-used = 9 - effort`, so the same speed as the worker's effective effort; the matched-quality table compares with sharp's defaults (`quality 50, effort 4`, 4:4:4)"],
  ['PNG', 'the lean codec\'s writer (libdeflate), level `[1,5,7,9,10,11,12,12,12,12][effort]` with filter trials from effort 2 and palette/grey/alpha reduction (effort 4 up to 4.9 MP, 3 up to 8.5 MP, 2 above)', "timing: `png({ compressionLevel: 9, adaptiveFiltering: true })`; the lossless table takes *sharp's best* as the smallest of that, `compressionLevel: 9` without adaptive filtering and the default (`compressionLevel: 6`), all truecolour (`palette` would quantise, i.e. lose colours)"],
  ['resize', 'JPEG: decoded at 1/2, 1/4 or 1/8 by the scaled inverse DCT, leaving at least 1.25x (less only where the memory budget requires); then Lanczos3 over the whole factor (wasm/lean/resample.c, floats, row by row)', "`resize({ width, height, fit: 'inside', withoutEnlargement: true, kernel: 'lanczos3' })` (libvips: shrink-on-load for JPEG/WebP, then reduce with Lanczos3)"],
  ['alpha to JPEG', 'flattened onto `background` (#ffffff)', "`flatten({ background: '#ffffff' })`"],
  ['orientation, metadata', 'EXIF orientation applied, metadata stripped', '`rotate()` (auto-orient); sharp strips metadata by default'],
]

/**
 * Apply the encoder of `output` to a sharp pipeline with imgedge's settings.
 * `effort` is the worker's effective effort (its X-Effort answer header), `variant` one of
 * 'same' (the worker's settings), 'default' (sharp's own defaults for the format) or 'mozjpeg'.
 */
export function encodeWith(pipeline, output, { quality, effort = 4, lossless = false, variant = 'same' }) {
  switch (output) {
    case 'jpeg':
      return pipeline.jpeg({ quality: quality ?? 80, mozjpeg: variant === 'mozjpeg' })
    case 'webp':
      if (variant === 'default') return pipeline.webp({ quality: quality ?? 80 })
      return pipeline.webp({ quality: quality ?? 80, effort: Math.min(6, effort), lossless })
    case 'avif':
      if (variant === 'default') return pipeline.avif({ quality: quality ?? 50 })
      return pipeline.avif({ quality: quality ?? 50, effort: Math.max(0, Math.min(9, effort - 1)), chromaSubsampling: lossless ? '4:4:4' : '4:2:0', bitdepth: 8, lossless })
    case 'png':
      if (variant === 'default') return pipeline.png()
      if (variant === 'level9') return pipeline.png({ compressionLevel: 9, adaptiveFiltering: false, palette: false })
      return pipeline.png({ compressionLevel: 9, adaptiveFiltering: true, palette: false })
    default:
      throw new Error(`no sharp encoder for ${output}`)
  }
}

/** The geometry part of the pipeline (what the worker does between decode and encode). */
export function shapeWith(pipeline, output, query) {
  let p = pipeline.rotate()
  if (query.width || query.height) {
    p = p.resize({ width: query.width ? Number(query.width) : undefined, height: query.height ? Number(query.height) : undefined, fit: 'inside', withoutEnlargement: true, kernel: 'lanczos3' })
  }
  if (output === 'jpeg') p = p.flatten({ background: '#ffffff' })
  return p
}

/** One whole conversion, buffer to buffer, as the worker does it. Returns { ms, bytes }. */
export async function sharpConvert(sharp, input, output, query, settings) {
  const t0 = performance.now()
  const bytes = await encodeWith(shapeWith(sharp(input), output, query), output, settings).toBuffer()
  return { ms: performance.now() - t0, bytes }
}

/**
 * sharp's steps timed one by one, for comparison with the worker's Server-Timing split: decode to raw
 * pixels, resize raw to raw (only when resizing; without shrink-on-load, which a fused pipeline uses),
 * encode raw to the format. Each step is a separate libvips pipeline, so their sum is more than the
 * fused conversion.
 */
export async function sharpSteps(sharp, input, output, query, settings, outSize) {
  let t0 = performance.now()
  const decoded = await sharp(input).rotate().raw().toBuffer({ resolveWithObject: true })
  const decode = performance.now() - t0
  const raw = { raw: { width: decoded.info.width, height: decoded.info.height, channels: decoded.info.channels } }
  let pixels = decoded.data
  let info = raw
  let transform = 0
  if (query.width || query.height) {
    t0 = performance.now()
    const resized = await sharp(decoded.data, raw).resize(outSize.width, outSize.height, { fit: 'fill', kernel: 'lanczos3' }).raw().toBuffer({ resolveWithObject: true })
    transform = performance.now() - t0
    pixels = resized.data
    info = { raw: { width: resized.info.width, height: resized.info.height, channels: resized.info.channels } }
  }
  t0 = performance.now()
  let p = sharp(pixels, info)
  if (output === 'jpeg') p = p.flatten({ background: '#ffffff' })
  await encodeWith(p, output, settings).toBuffer()
  const encode = performance.now() - t0
  return { decode, transform, encode }
}
