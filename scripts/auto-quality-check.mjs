#!/usr/bin/env node
// quality=auto against each format's default fixed quality, scored on the whole answer.
//
//   node scripts/auto-quality-check.mjs [--set tuned|held-out|all] [--formats jpeg,webp,avif] [--targets 60,65,70]
//
// Sets (made from ../shared/corpus/photos by sharp):
//   tuned     the six corpus photos resized to 1600 px wide;
//   held-out  1024x1024 crops of the same photos at full resolution (other content and scale), the photos at 800 px
//             with film grain added (noise the encoder must keep), and the corpus wallpapers (graphics) at 1600 px,
//             flattened (scripts/lib/check-images.mjs).
// Each image goes to a fresh `wrangler dev` as PNG, at the format's default quality and with quality=auto (at each
// --targets, or the format's default target). The answer is scored against the image sent by SSIMULACRA 2: the
// reference tool (libjxl's, built from cloudinary/ssimulacra2) at $SSIMULACRA2 or .cache/ssimulacra2-ref/ssimulacra2, or
// with SSIMULACRA2=lean the worker's own (wasm/lean/score.c in this process, within a fraction of a point of the tool).
// Reported per format and target, for each set and both together: total bytes as a ratio to the fixed quality's, and
// the scores' mean, spread (standard deviation) and worst case, for both.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import sharp from 'sharp'
import { scoreStats as stats } from './lib/bench-report.mjs'
import { checkImages } from './lib/check-images.mjs'
import { killStarted, startWorker } from './lib/devserver.mjs'
import { createLeanScorer } from './lib/lean-score.mjs'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const TOOL = process.env.SSIMULACRA2 ?? path.join(ROOT, '.cache', 'ssimulacra2-ref', 'ssimulacra2')
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`)
  return i > 0 ? process.argv[i + 1] : fallback
}
const SET = arg('set', 'all')
const FORMATS = arg('formats', 'jpeg,webp,avif').split(',')
const TARGETS = arg('targets', '').split(',').filter(Boolean).map(Number)
const lean = TOOL === 'lean' ? await createLeanScorer(ROOT, sharp) : undefined
if (!lean && !fs.existsSync(TOOL)) throw new Error(`no SSIMULACRA 2 tool at ${TOOL} (set SSIMULACRA2, or SSIMULACRA2=lean)`)

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'imgedge-autoq-'))
async function ssimulacra2(original, answer) {
  if (lean) return lean.score(await lean.rgba(original), answer)
  const a = path.join(dir, 'a.png')
  const b = path.join(dir, 'b.png')
  fs.writeFileSync(a, original)
  fs.writeFileSync(b, await sharp(answer).png().toBuffer())
  return Number(execFileSync(TOOL, [a, b], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim())
}

const dev = await startWorker({ root: ROOT, prefix: 'imgedge-autoq-', vars: { RATE_LIMIT_ANON_PER_MINUTE: '0' } })
try {
  const list = await checkImages(SET)
  const formats = await (await fetch(`${dev.base}/api/formats`)).json()
  for (const format of FORMATS) {
    const defaults = formats.formats.find((f) => f.id === format).autoQuality
    const targets = TARGETS.length ? TARGETS : [defaults.target]
    const rows = []
    for (const image of list) {
      const post = async (query) => {
        const t0 = performance.now()
        const res = await fetch(`${dev.base}/api/compress?format=${format}${query}`, { method: 'POST', body: image.png, headers: { 'Content-Type': 'image/png' } })
        if (!res.ok) throw new Error(`${image.name} ${format}${query}: ${res.status} ${await res.text()}`)
        const body = Buffer.from(await res.arrayBuffer())
        return { bytes: body.length, ms: performance.now() - t0, quality: Number(res.headers.get('x-quality')), sample: Number(res.headers.get('x-score')), score: await ssimulacra2(image.png, body) }
      }
      const row = { image, fixed: await post(''), auto: {} }
      for (const target of targets) row.auto[target] = await post(`&quality=auto&target=${target}`)
      rows.push(row)
      console.error(`${format} ${image.name}: fixed ${row.fixed.bytes} B ${row.fixed.score.toFixed(1)}; ${targets.map((t) => `t${t} q${row.auto[t].quality} ${row.auto[t].bytes} B ${row.auto[t].score.toFixed(1)} (sample ${row.auto[t].sample})`).join('; ')}`)
    }
    // the defaults are calibrated on both sets together ('all')
    for (const set of ['tuned', 'held-out', 'all']) {
      const these = rows.filter((r) => set === 'all' || r.image.set === set)
      if (!these.length || (set === 'all' && SET !== 'all')) continue
      const fixedBytes = these.reduce((s, r) => s + r.fixed.bytes, 0)
      const f = stats(these.map((r) => r.fixed.score))
      const ms = (xs) => Math.round(xs.reduce((s, x) => s + x, 0) / xs.length)
      console.log(`\n${format}, ${set} (${these.length} images): fixed quality ${formats.formats.find((x) => x.id === format).options.quality.default}: ${fixedBytes} B, score mean ${f.mean.toFixed(1)}, sd ${f.sd.toFixed(1)}, worst ${f.worst.toFixed(1)}, ${ms(these.map((r) => r.fixed.ms))} ms`)
      for (const target of targets) {
        const bytes = these.reduce((s, r) => s + r.auto[target].bytes, 0)
        const a = stats(these.map((r) => r.auto[target].score))
        const q = these.map((r) => r.auto[target].quality)
        console.log(`  auto target ${target}: ${(bytes / fixedBytes).toFixed(3)}x bytes, score mean ${a.mean.toFixed(1)}, sd ${a.sd.toFixed(1)}, worst ${a.worst.toFixed(1)}, qualities ${Math.min(...q)}-${Math.max(...q)}, ${ms(these.map((r) => r.auto[target].ms))} ms`)
      }
    }
  }
} finally {
  await dev.stop()
  killStarted()
  fs.rmSync(dir, { recursive: true, force: true })
}
