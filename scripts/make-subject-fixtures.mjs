#!/usr/bin/env node
// The small real photos of test/integration/gravity-auto-photos.test.ts: photos of scripts/data/subject-photos.json,
// cropped as the JSON says, scaled to 300 px high, saved as JPEG quality 85 in test/fixtures/subject/ (their licences
// and boxes in its README, the lomiri copyright file copied to its LICENSES/). Prints each fixture's hand-marked box in its own pixels, for the test.
//
//   node_modules/.bin/node scripts/make-subject-fixtures.mjs   (after scripts/subject-crop-check.mjs has fetched the packages)
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import sharp from 'sharp'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const DATA = JSON.parse(fs.readFileSync(path.join(ROOT, 'scripts', 'data', 'subject-photos.json'), 'utf8'))
const OUT = path.join(ROOT, 'test', 'fixtures', 'subject')
const HEIGHT = 300
/**
 * Photos from Debian mate-backgrounds (GPL-2+, its copyright file in test/fixtures/LICENSES), lomiri-wallpapers-16.04
 * (CC-BY-SA-4.0) and plasma-workspace-wallpapers (GPL-2+), their copyright files copied to subject/LICENSES; and two
 * public-domain portraits for gravity=face (scikit-image's astronaut, matplotlib's Grace Hopper).
 */
const NAMES = ['aqua', 'ladybird', 'ladybird-crop', 'bird-toy-tall', 'kite', 'astronaut', 'hopper']

fs.mkdirSync(path.join(OUT, 'LICENSES'), { recursive: true })
for (const name of ['lomiri-wallpapers-16.04', 'plasma-workspace-wallpapers']) {
  fs.copyFileSync(path.join(ROOT, '.cache', 'subject-photos', name, 'usr', 'share', 'doc', name, 'copyright'), path.join(OUT, 'LICENSES', `${name}.copyright`))
}
for (const name of NAMES) {
  const photo = DATA.photos.find((p) => p.name === name)
  const source = DATA.sources[photo.source]
  const file = path.join(ROOT, '.cache', 'subject-photos', source.package, source.path)
  const [cx, cy, cw, ch] = photo.crop ?? [0, 0, ...source.size]
  const scale = HEIGHT / ch
  const width = Math.round(cw * scale)
  await sharp(file).extract({ left: cx, top: cy, width: cw, height: ch }).resize(width, HEIGHT).jpeg({ quality: 85 }).toFile(path.join(OUT, `${name}.jpg`))
  const [bx, by, bw, bh] = source.box
  const box = [Math.floor((bx - cx) * scale), Math.floor((by - cy) * scale), Math.ceil(bw * scale), Math.ceil(bh * scale)]
  console.log(`${name}.jpg ${width}x${HEIGHT} box ${box.join(',')} (${source.licence})`)
}
