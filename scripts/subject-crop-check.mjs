#!/usr/bin/env node
// Does gravity=auto keep a real photo's subject in a cover crop, where the centre crop cuts it? (docs/results/gravity-auto.md)
//
//   node_modules/.bin/node scripts/subject-crop-check.mjs [--base URL] [--corpus DIR] [--sheet DIR] [--json FILE] [--boxes DIR]
//     [--gravity face]
//
// The photos and their hand-marked subject boxes are in scripts/data/subject-photos.json: Debian wallpaper packages
// (fetched once with `apt-get download` into .cache/subject-photos, checked against the sha256 there) and the corpus
// (--corpus, default ../shared/corpus, or CORPUS_DIR). Each photo is cropped as the JSON says, scaled to at most
// MAX_SIDE px and sent as a JPEG to a fresh `wrangler dev` (or --base) for fit=cover at four aspect ratios with
// gravity=auto; X-Crop is the window it chose, the centre window is planGeometry's. A case counts where the subject box
// fits the window at all. --sheet writes, for every case the window cuts, the photo with the box (green), gravity=auto's
// window (red) and the centre's (blue); --boxes DIR only draws each photo's box, to check the marks by eye. --gravity face
// asks gravity=face instead (the tables keep saying gravity=auto).
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import sharp from 'sharp'
import { killStarted, startWorker } from './lib/devserver.mjs'
import { DATA, kept, prepare, RATIOS } from './lib/subject-photos.mjs'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const args = process.argv.slice(2)
const option = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined)
const corpus = path.resolve(option('--corpus') ?? process.env.CORPUS_DIR ?? path.join(ROOT, '..', 'shared', 'corpus'))
const sheetDir = option('--sheet')
const jsonOut = option('--json')
const gravity = option('--gravity') ?? 'auto'

async function autoWindow(base, photo, ratio) {
  const query = new URLSearchParams({ format: 'jpeg', width: ratio.width, height: ratio.height, fit: 'cover', gravity })
  const res = await fetch(`${base}/api/compress?${query}`, { method: 'POST', body: photo.bytes, headers: { 'Content-Type': 'image/jpeg' } })
  if (!res.ok) throw new Error(`${photo.name} ${ratio.name}: ${res.status} ${await res.text()}`)
  await res.arrayBuffer()
  const crop = res.headers.get('x-crop')
  // no X-Crop: the photo already has the ratio, nothing to choose
  if (!crop) return undefined
  const [x, y, width, height] = crop.split(',').map(Number)
  return { x, y, width, height }
}

/** What gravity=center keeps (src/pipeline/transform.ts's placeCrop at 0.5). */
const centreWindow = (photo, { width, height }) => ({ x: Math.floor(photo.width / 2 - width / 2 + 1e-9), y: Math.floor(photo.height / 2 - height / 2 + 1e-9), width, height })

async function drawSheet(photo, ratio, auto, centre, dir = sheetDir) {
  const s = 600 / Math.max(photo.width, photo.height)
  const rect = (r, colour) => `<rect x="${r.x * s}" y="${r.y * s}" width="${r.width * s}" height="${r.height * s}" fill="none" stroke="${colour}" stroke-width="3"/>`
  const w = Math.round(photo.width * s)
  const h = Math.round(photo.height * s)
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}">${rect(centre, '#3080ff')}${rect(auto, '#ff3030')}${rect(photo.box, '#30ff30')}</svg>`
  fs.mkdirSync(dir, { recursive: true })
  await sharp(photo.bytes).resize(w, h).composite([{ input: Buffer.from(svg) }]).png().toFile(path.join(dir, `${photo.name}-${ratio.name.replace(':', 'x')}.png`))
}

const pct = (n, d) => (d ? `${Math.round((100 * n) / d)} % (${n}/${d})` : '-')

const photos = []
for (const photo of DATA.photos) photos.push(await prepare(photo, corpus))
const boxesDir = option('--boxes')
if (boxesDir) {
  // only the marks, to check them by eye: no Worker
  for (const photo of photos) await drawSheet(photo, { name: 'box' }, photo.box, photo.box, boxesDir)
  process.exit(0)
}

const base = option('--base')
const dev = base ? undefined : await startWorker({ root: ROOT, prefix: 'imgedge-subject-', vars: { RATE_LIMIT_ANON_PER_MINUTE: '0' } })
const cases = []
try {
  for (const photo of photos) {
    for (const ratio of RATIOS) {
      const auto = await autoWindow(base ?? dev.base, photo, ratio)
      if (!auto) continue
      const centre = centreWindow(photo, auto)
      const fits = photo.box.width <= auto.width && photo.box.height <= auto.height
      cases.push({ photo: photo.name, half: photo.half, ratio: ratio.name, fits, box: photo.box, size: [photo.width, photo.height], auto, centre, autoKept: kept(photo.box, auto), centreKept: kept(photo.box, centre) })
      if (sheetDir && fits && kept(photo.box, auto) < 1) await drawSheet(photo, ratio, auto, centre)
    }
  }
} finally {
  await dev?.stop()
  killStarted()
}

if (jsonOut) fs.writeFileSync(jsonOut, JSON.stringify(cases, null, 1))
const lines = ['| photos | ratio | cases | gravity=auto: box inside | gravity=auto: ≥ 90 % of box | centre: box inside | centre: ≥ 90 % of box |', '|---|---|---|---|---|---|---|']
for (const half of ['tune', 'held-out', 'fresh', 'fresh2', 'fresh3', 'all']) {
  for (const ratio of [...RATIOS.map((r) => r.name), 'all']) {
    const set = cases.filter((c) => c.fits && (half === 'all' || c.half === half) && (ratio === 'all' || c.ratio === ratio))
    const count = (test) => set.filter(test).length
    const row = [half, ratio, set.length, pct(count((c) => c.autoKept === 1), set.length), pct(count((c) => c.autoKept >= 0.9), set.length), pct(count((c) => c.centreKept === 1), set.length), pct(count((c) => c.centreKept >= 0.9), set.length)]
    lines.push(`| ${row.join(' | ')} |`)
  }
}
console.log(lines.join('\n'))
// the cases that need gravity=auto at all: the subject is off-centre enough that the centre crop cuts it
const cut = ['\n| photos | cases the centre crop cuts | gravity=auto: box inside | gravity=auto: ≥ 90 % of box |', '|---|---|---|---|']
for (const half of ['tune', 'held-out', 'fresh', 'fresh2', 'fresh3', 'all']) {
  const set = cases.filter((c) => c.fits && c.centreKept < 1 && (half === 'all' || c.half === half))
  cut.push(`| ${half} | ${set.length} | ${pct(set.filter((c) => c.autoKept === 1).length, set.length)} | ${pct(set.filter((c) => c.autoKept >= 0.9).length, set.length)} |`)
}
console.log(cut.join('\n'))
const skipped = cases.filter((c) => !c.fits)
console.log(`\nLeft out (the box is larger than the window): ${skipped.map((c) => `${c.photo} ${c.ratio}`).join(', ') || 'none'}`)
console.log('\nCut by gravity=auto (share of the box kept; the centre crop keeps):')
for (const c of cases.filter((c) => c.fits && c.autoKept < 1)) console.log(`- ${c.half} ${c.photo} ${c.ratio}: ${(100 * c.autoKept).toFixed(0)} % (centre ${(100 * c.centreKept).toFixed(0)} %)`)
