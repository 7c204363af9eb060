#!/usr/bin/env node
// Which quality=auto targets could meet issue 18's goals on the bench's photos at all? Every bench photo of the
// smarter-compression phase (scripts/lib/bench-smart.mjs: six at about 1 MP sent as PNG, three at 12 MP sent as JPEG)
// is converted through the API at every quality of a grid, and each answer scored whole (SSIMULACRA 2, the worker's
// wasm/lean/score.c in this process). For a target T the oracle answer of a photo is the lowest quality whose whole
// answer reaches T, what a perfect search would give; the report says, per format, set and target, the oracle's total
// bytes against the default quality's, its worst score against the default quality's worst, and whether both goals
// ("total bytes <=", "worst no lower") can hold. A target range that is empty for some format means no search over one
// target per format can meet both goals on both sets.
//
//   node scripts/auto-quality-oracle.mjs [--formats jpeg,webp,avif] [--sets 1,12] [--targets 66,68,70]
//
// Needs ../shared/corpus/photos (the bench's photos) and Node >= 22 (run with node_modules/.bin/node). Answers are
// cached in .cache/auto-quality-oracle/ by photo, format and quality, so a rerun only reports: remove that folder after
// a change to a codec.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import sharp from 'sharp'
import { scoreStats } from './lib/bench-report.mjs'
import { createInputs } from './lib/bench-inputs.mjs'
import { smartPhotoSets } from './lib/bench-smart.mjs'
import { killStarted, startWorker } from './lib/devserver.mjs'
import { createLeanScorer } from './lib/lean-score.mjs'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const CORPUS = path.resolve(ROOT, '..', 'shared', 'corpus', 'photos')
const CACHE = path.join(ROOT, '.cache', 'auto-quality-oracle')
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`)
  return i > 0 ? process.argv[i + 1] : fallback
}
const FORMATS = arg('formats', 'jpeg,webp,avif').split(',')
const SETS = arg('sets', '1,12').split(',').map((mp) => `${mp} MP`)
const range = (from, to, step = 1) => Array.from({ length: Math.floor((to - from) / step) + 1 }, (_, i) => from + i * step)
/** Qualities tried per format and set: every step where a default target's answers fall, at 12 MP AVIF every second one outside 41-57. */
const GRID = {
  jpeg: { '1 MP': range(40, 95), '12 MP': range(55, 95) },
  webp: { '1 MP': range(30, 95), '12 MP': range(60, 95) },
  avif: { '1 MP': range(15, 75), '12 MP': [...range(15, 39, 2), ...range(41, 57), ...range(59, 75, 2)] },
}
if (!fs.existsSync(CORPUS)) throw new Error(`the bench's photos need ${CORPUS}`)
fs.mkdirSync(CACHE, { recursive: true })

const inputs = createInputs({ root: ROOT, corpusDir: CORPUS, log: (m) => console.error(m) })
const sets = (await smartPhotoSets({ root: ROOT, sharp, inputs, corpusDir: CORPUS })).filter(({ set }) => SETS.includes(set))
const { rgba, score } = await createLeanScorer(ROOT, sharp)

let dev
const grids = [] // { set, format, photo, points: [{ quality, bytes, score }] }
try {
  for (const { set, photos } of sets) {
    for (const photo of photos) {
      const body = fs.readFileSync(photo.file)
      const key = path.basename(photo.file, path.extname(photo.file))
      let reference
      for (const format of FORMATS) {
        const file = path.join(CACHE, `${key}-${format}.json`)
        const cached = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : {}
        for (const quality of GRID[format][set]) {
          if (cached[quality]) continue
          dev ??= await startWorker({ root: ROOT, prefix: 'imgedge-oracle-', vars: { RATE_LIMIT_ANON_PER_MINUTE: '0' } })
          const res = await fetch(`${dev.base}/api/compress?format=${format}&quality=${quality}`, { method: 'POST', body, headers: { 'Content-Type': photo.mime } })
          if (!res.ok) throw new Error(`${key} ${format} q${quality}: ${res.status} ${await res.text()}`)
          const answer = Buffer.from(await res.arrayBuffer())
          reference ??= await rgba(body)
          cached[quality] = { bytes: answer.length, score: await score(reference, answer) }
          fs.writeFileSync(file, JSON.stringify(cached))
          console.error(`${key} ${format} q${quality}: ${answer.length} B ${cached[quality].score.toFixed(2)}`)
        }
        grids.push({ set, format, photo: key, points: GRID[format][set].map((quality) => ({ quality, ...cached[quality] })) })
      }
    }
  }
} finally {
  await dev?.stop()
  killStarted()
}

// (each format's default quality in /api/formats; read here without a worker, which a cached rerun does not start)
const defaults = { jpeg: 80, webp: 80, avif: 50 }
const TARGETS = arg('targets', '')
for (const format of FORMATS) {
  const targets = TARGETS ? TARGETS.split(',').map(Number) : { jpeg: range(70, 76), webp: range(66, 72), avif: range(44, 54) }[format]
  console.log(`\n${format.toUpperCase()} (default quality ${defaults[format]}): oracle answers at each target (the lowest grid quality whose whole answer reaches it)`)
  console.log('| target | ' + sets.map(({ set }) => `${set}: bytes vs default, worst (default's worst), sd (default's)`).join(' | ') + ' | both goals on both sets |')
  console.log('|---|' + sets.map(() => '---|').join('') + '---|')
  for (const target of targets) {
    const cells = []
    let met = true
    for (const { set } of sets) {
      const rows = grids.filter((g) => g.set === set && g.format === format)
      const fixed = rows.map((g) => g.points.find((p) => p.quality === defaults[format]))
      const oracle = rows.map((g) => g.points.find((p) => p.score >= target) ?? g.points.at(-1))
      const bytes = oracle.reduce((s, p) => s + p.bytes, 0) / fixed.reduce((s, p) => s + p.bytes, 0)
      const [a, f] = [scoreStats(oracle.map((p) => p.score)), scoreStats(fixed.map((p) => p.score))]
      met &&= bytes <= 1 && a.worst >= f.worst && a.sd < f.sd
      cells.push(`${bytes.toFixed(3)}x, ${a.worst.toFixed(1)} (${f.worst.toFixed(1)}), ${a.sd.toFixed(1)} (${f.sd.toFixed(1)})`)
    }
    console.log(`| ${target} | ${cells.join(' | ')} | ${met ? 'yes' : 'no'} |`)
  }
}
