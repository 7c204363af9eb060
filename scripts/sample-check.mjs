#!/usr/bin/env node
// How faithful is quality=auto's sample? For each image and format, the whole image encoded at one quality (by sharp:
// libwebp at effort 4, libaom at effort 4 and 4:2:0, MozJPEG) and scored whole by our SSIMULACRA 2 (score.c in Node),
// against the worst of N x N tiles of T px taken at even steps across it, each encoded and scored on its own (the
// API's sample is 3 x 3 tiles of 192 px: src/pipeline/auto-quality.ts SAMPLE).
//
//   node scripts/sample-check.mjs [--layouts 3x192,3x256,2x384] FILE:FORMAT:QUALITY ...
//
// e.g. node scripts/sample-check.mjs .cache/bench-inputs/storm-1225x816-b1.png:webp:43
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import sharp from 'sharp'
import { createLeanScorer } from './lib/lean-score.mjs'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const args = process.argv.slice(2)
const at = args.indexOf('--layouts')
const layouts = (at >= 0 ? args.splice(at, 2)[1] : '3x192,3x256,2x384').split(',').map((l) => l.split('x').map(Number))
const ENCODE = {
  jpeg: (s, q) => s.jpeg({ quality: q, mozjpeg: true }),
  webp: (s, q) => s.webp({ quality: q, effort: 4 }),
  avif: (s, q) => s.avif({ quality: q, effort: 4, chromaSubsampling: '4:2:0', bitdepth: 8 }),
}
const scorer = await createLeanScorer(ROOT, sharp)
const scoreAt = async (png, format, quality) => scorer.score(await scorer.rgba(png), await ENCODE[format](sharp(png), quality).toBuffer())

for (const spec of args) {
  const [file, format, quality] = spec.split(':')
  const png = await sharp(fs.readFileSync(file)).png().toBuffer()
  const { width, height } = await sharp(png).metadata()
  const line = [`${path.basename(file)} ${format} q${quality}: whole ${(await scoreAt(png, format, Number(quality))).toFixed(1)}`]
  for (const [count, tile] of layouts) {
    let worst = Infinity
    for (let j = 0; j < count; j++) {
      for (let i = 0; i < count; i++) {
        const left = Math.round(((width - tile) * i) / Math.max(1, count - 1))
        const top = Math.round(((height - tile) * j) / Math.max(1, count - 1))
        const piece = await sharp(png).extract({ left, top, width: tile, height: tile }).png().toBuffer()
        worst = Math.min(worst, await scoreAt(piece, format, Number(quality)))
      }
    }
    line.push(`${count}x${count} of ${tile}: ${worst.toFixed(1)}`)
  }
  console.log(line.join('  '))
}
