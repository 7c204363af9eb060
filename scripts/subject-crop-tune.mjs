#!/usr/bin/env node
// Tries gravity=auto's weights on the subject photos without a Worker or a rebuild (docs/results/gravity-auto.md).
//
//   node_modules/.bin/node scripts/subject-crop-tune.mjs [--splits tune,held-out,fresh] [--set name=value ...] [--misses] [--corpus DIR]
//
// Each photo is prepared as scripts/subject-crop-check.mjs sends it, shrunk to the 256-pixel preview with sharp, and
// its windows found by scripts/lib/saliency-model.mjs with the weights given (--set colour=20 --set cut=3; the names
// are its WEIGHTS). Prints, per split, the cases whose box is inside the window. Only the splits asked for are computed:
// keep an unseen split out of it until a change is chosen, then measure that change with subject-crop-check.mjs.
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import sharp from 'sharp'
import { bestWindow, saliencyMap, WEIGHTS } from './lib/saliency-model.mjs'
import { DATA, kept, prepare, RATIOS } from './lib/subject-photos.mjs'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const args = process.argv.slice(2)
const option = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined)
const corpus = path.resolve(option('--corpus') ?? process.env.CORPUS_DIR ?? path.join(ROOT, '..', 'shared', 'corpus'))
const splits = (option('--splits') ?? 'tune,held-out,fresh').split(',')
const weights = { ...WEIGHTS }
args.forEach((arg, i) => {
  if (arg !== '--set') return
  const [name, value] = args[i + 1].split('=')
  if (!(name in WEIGHTS)) throw new Error(`unknown weight ${name}: ${Object.keys(WEIGHTS).join(', ')}`)
  weights[name] = Number(value)
})

const counts = Object.fromEntries(splits.map((split) => [split, { inside: 0, cases: 0 }]))
for (const entry of DATA.photos) {
  if (!splits.includes(DATA.sources[entry.source].half)) continue
  const photo = await prepare(entry, corpus)
  const f = Math.min(1, 256 / Math.max(photo.width, photo.height))
  const [pw, ph] = [Math.max(1, Math.round(photo.width * f)), Math.max(1, Math.round(photo.height * f))]
  const rgba = await sharp(photo.bytes).resize(pw, ph, { fit: 'fill' }).ensureAlpha().raw().toBuffer()
  const map = saliencyMap(rgba, pw, ph, weights)
  for (const ratio of RATIOS) {
    // the cover crop of the photo at the ratio, as the Worker's X-Crop gives it
    const wide = photo.width / photo.height > ratio.width / ratio.height
    const cw = wide ? Math.round((photo.height * ratio.width) / ratio.height) : photo.width
    const ch = wide ? photo.height : Math.round((photo.width * ratio.height) / ratio.width)
    if (Math.abs(cw - photo.width) <= 1 && Math.abs(ch - photo.height) <= 1) continue
    if (photo.box.width > cw || photo.box.height > ch) continue
    const fx = pw / photo.width
    const fy = ph / photo.height
    const best = bestWindow(map, pw, ph, Math.round(cw * fx), Math.round(ch * fy), weights)
    const window = { x: Math.max(0, Math.min(photo.width - cw, Math.round(best.x / fx))), y: Math.max(0, Math.min(photo.height - ch, Math.round(best.y / fy))), width: cw, height: ch }
    const share = kept(photo.box, window)
    counts[photo.half].cases++
    if (share === 1) counts[photo.half].inside++
    else if (args.includes('--misses')) console.log(`- ${photo.half} ${photo.name} ${ratio.name}: ${(100 * share).toFixed(0)} %`)
  }
}
console.log(splits.map((split) => `${split} ${counts[split].inside}/${counts[split].cases}`).join(', '))
