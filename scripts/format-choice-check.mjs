#!/usr/bin/env node
// Would format=auto with quality=auto save bytes by trying every format the client accepts at the same perceptual
// target and keeping the smallest, instead of taking AVIF first? Each image is encoded at a grid of qualities in JPEG
// (MozJPEG), WebP and AVIF by sharp (libaom at effort 3, about the worker's speed), every answer scored whole by the
// worker's SSIMULACRA 2 (wasm/lean/score.c, in Node); the bytes each format needs to reach a target are interpolated
// between the grid's qualities, and the formats compared image by image.
//
//   node scripts/format-choice-check.mjs [--targets 60,66,70,75] [--shard 0/2]
//
// Images: those of scripts/auto-quality-check.mjs (the six corpus photos at 1600 px; 1024x1024 crops of them at full
// resolution; the photos at 800 px with film grain; the corpus wallpapers at 1600 px, flattened). Grids are cached in
// .cache/format-choice/; with --shard K/N only every N-th image from the K-th is encoded (run N at once, then once
// without --shard to report).
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import sharp from 'sharp'
import { checkImages } from './lib/check-images.mjs'
import { createLeanScorer } from './lib/lean-score.mjs'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const CACHE = path.join(ROOT, '.cache', 'format-choice')
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`)
  return i > 0 ? process.argv[i + 1] : fallback
}
const TARGETS = arg('targets', '60,66,70,75').split(',').map(Number)
const [shard, shards] = arg('shard', '0/1').split('/').map(Number)
const GRID = {
  jpeg: { qualities: [20, 30, 40, 50, 55, 60, 65, 70, 75, 80, 85, 90, 95], encode: (s, q) => s.jpeg({ quality: q, mozjpeg: true }) },
  webp: { qualities: [20, 30, 40, 50, 55, 60, 65, 70, 75, 80, 85, 90, 95], encode: (s, q) => s.webp({ quality: q, effort: 4 }) },
  avif: { qualities: [20, 30, 40, 45, 50, 55, 60, 65, 70, 80], encode: (s, q) => s.avif({ quality: q, effort: 3 }) },
}

const { rgba, score } = await createLeanScorer(ROOT, sharp)

fs.mkdirSync(CACHE, { recursive: true })
const images = await checkImages('all')
const grids = []
for (const [i, image] of images.entries()) {
  const file = path.join(CACHE, `${image.name.replace(/[^\w.-]+/g, '_')}.json`)
  if (!fs.existsSync(file)) {
    if (i % shards !== shard) continue
    const reference = await rgba(image.png)
    const grid = {}
    for (const [format, { qualities, encode }] of Object.entries(GRID)) {
      grid[format] = []
      for (const quality of qualities) {
        const answer = await encode(sharp(image.png), quality).toBuffer()
        grid[format].push({ quality, bytes: answer.length, score: await score(reference, answer) })
      }
    }
    fs.writeFileSync(file, JSON.stringify(grid))
    console.error(`${image.name}: ${Object.entries(grid).map(([f, g]) => `${f} ${g.map((r) => `${r.quality}:${r.score.toFixed(0)}`).join(' ')}`).join('; ')}`)
  }
  grids.push({ name: image.name, grid: JSON.parse(fs.readFileSync(file, 'utf8')) })
}
if (shards > 1) process.exit(0)

/** The bytes a format needs to reach `target`, between the grid's qualities; null when its highest falls short. */
function bytesAt(rows, target) {
  let below = null
  for (const r of rows) {
    if (r.score >= target) return below ? below.bytes + ((target - below.score) / (r.score - below.score)) * (r.bytes - below.bytes) : r.bytes
    below = r
  }
  return null
}

for (const target of TARGETS) {
  const totals = { avif: 0, smallest: 0, avifOrInputFamily: 0 }
  const wins = { webp: [], jpeg: [] }
  let counted = 0
  for (const { name, grid } of grids) {
    const need = Object.fromEntries(Object.entries(grid).map(([format, rows]) => [format, bytesAt(rows, target)]))
    if (Object.values(need).some((b) => b === null)) continue
    counted++
    totals.avif += need.avif
    totals.smallest += Math.min(need.avif, need.webp, need.jpeg)
    totals.avifOrInputFamily += Math.min(need.avif, need.jpeg)
    for (const format of ['webp', 'jpeg']) if (need[format] < need.avif) wins[format].push(`${name} ${(need[format] / need.avif).toFixed(2)}x`)
  }
  console.log(`target ${target}: ${counted} of ${grids.length} images reachable by every format`)
  console.log(`  WebP smaller than AVIF on ${wins.webp.length}${wins.webp.length ? `: ${wins.webp.join(', ')}` : ''}`)
  console.log(`  JPEG smaller than AVIF on ${wins.jpeg.length}${wins.jpeg.length ? `: ${wins.jpeg.join(', ')}` : ''}`)
  console.log(`  the smallest of the three: ${(totals.smallest / totals.avif).toFixed(3)}x the bytes of AVIF always; of AVIF and JPEG: ${(totals.avifOrInputFamily / totals.avif).toFixed(3)}x`)
}
