#!/usr/bin/env node
// Would format=auto with quality=auto save bytes by trying every format the client accepts at the same perceptual
// target and keeping the smallest, instead of taking AVIF first? Each image is encoded at a grid of qualities in JPEG
// (MozJPEG), WebP and AVIF by sharp (libaom at effort 3 and 4:2:0, about the worker's speed), every answer scored whole by the
// worker's SSIMULACRA 2 (wasm/lean/score.c, in Node); the bytes each format needs to reach a target are interpolated
// between the grid's qualities, and the formats compared image by image.
//
//   node scripts/format-choice-check.mjs [--targets 60,66,70,75] [--shard 0/2]
//
// Images: the 21 of scripts/lib/check-images.mjs, which quality=auto's default targets are calibrated on. Grids are cached in
// .cache/format-choice/; with --shard K/N only every N-th image from the K-th is encoded (run N at once, then once
// without --shard to report).
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import sharp from 'sharp'
import { scoreStats } from './lib/bench-report.mjs'
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
  jpeg: { qualities: [20, 30, 40, 50, 55, 60, 65, 70, 75, 80, 85, 90, 95], settings: { mozjpeg: true }, encode: (s, q, o) => s.jpeg({ quality: q, ...o }) },
  webp: { qualities: [20, 30, 40, 50, 55, 60, 65, 70, 75, 80, 85, 90, 95], settings: { effort: 4 }, encode: (s, q, o) => s.webp({ quality: q, ...o }) },
  // 4:2:0 and 8 bits, as the worker's lossy AVIF (sharp's default is 4:4:4)
  avif: { qualities: [20, 30, 40, 45, 50, 55, 60, 65, 70, 80], settings: { effort: 3, chromaSubsampling: '4:2:0', bitdepth: 8 }, encode: (s, q, o) => s.avif({ quality: q, ...o }) },
}

const { rgba, score } = await createLeanScorer(ROOT, sharp)

fs.mkdirSync(CACHE, { recursive: true })
const images = await checkImages('all')
const grids = []
for (const [i, image] of images.entries()) {
  const grid = {}
  for (const [format, { qualities, settings, encode }] of Object.entries(GRID)) {
    // keyed by the encoder's settings and qualities, so a change to them encodes again
    const key = `${format} ${JSON.stringify(settings)} ${qualities.join(',')} sharp ${sharp.versions.sharp}`
    const file = path.join(CACHE, `${image.name.replace(/[^\w.-]+/g, '_')}-${createHash('sha256').update(key).digest('hex').slice(0, 12)}.json`)
    if (!fs.existsSync(file)) {
      if (i % shards !== shard) continue
      const reference = await rgba(image.png)
      const rows = []
      for (const quality of qualities) {
        const answer = await encode(sharp(image.png), quality, settings).toBuffer()
        rows.push({ quality, bytes: answer.length, score: await score(reference, answer) })
      }
      fs.writeFileSync(file, JSON.stringify(rows))
      console.error(`${image.name} ${format}: ${rows.map((r) => `${r.quality}:${r.score.toFixed(0)}`).join(' ')}`)
    }
    grid[format] = JSON.parse(fs.readFileSync(file, 'utf8'))
  }
  if (Object.keys(grid).length === Object.keys(GRID).length) grids.push({ name: image.name, grid })
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

// The oracle that pre-screened quality=auto's default targets for JPEG and WebP (the API's own tile sample and search
// then measured by scripts/auto-quality-check.mjs): per image the lowest grid quality whose whole answer reaches the
// target (else the highest), against the default quality 80. (Not for AVIF: sharp's quality scale is not the worker's.)
console.log('\noracle: the lowest grid quality reaching each target, against quality 80 (JPEG, WebP)')
for (const format of ['jpeg', 'webp']) {
  for (const target of [66, 68, 70, 72, 73, 74, 75, 80]) {
    let fixed = 0
    let auto = 0
    const scores = { fixed: [], auto: [] }
    for (const { grid } of grids) {
      const rows = grid[format]
      const at80 = rows.find((r) => r.quality === 80)
      const chosen = rows.find((r) => r.score >= target) ?? rows.at(-1)
      fixed += at80.bytes
      auto += chosen.bytes
      scores.fixed.push(at80.score)
      scores.auto.push(chosen.score)
    }
    const [f, a] = [scoreStats(scores.fixed), scoreStats(scores.auto)]
    console.log(`  ${format} target ${target}: ${(auto / fixed).toFixed(3)}x the bytes; score sd ${f.sd.toFixed(1)} -> ${a.sd.toFixed(1)}, worst ${f.worst.toFixed(1)} -> ${a.worst.toFixed(1)}`)
  }
}
