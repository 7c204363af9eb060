#!/usr/bin/env node
// How often do other tools' content-aware crops keep the hand-marked subject box? The bar for gravity=auto
// (docs/results/gravity-auto.md), on the same cases as scripts/subject-crop-check.mjs, without a Worker.
//
//   npm install --prefix /tmp/sc smartcrop     # optional: smartcrop.js, skipped when it cannot be imported
//   node_modules/.bin/node scripts/subject-crop-others.mjs [--corpus DIR] [--smartcrop DIR]
//
// Each photo is prepared as subject-crop-check.mjs sends it (scripts/lib/subject-photos.mjs) and asked for fit=cover at
// its four ratios. The window each tool keeps is placed, at the size the Worker's cover crop has (planGeometry's
// cropWidth x cropHeight), where the tool centres its own window:
// - sharp `resize(w, h, { fit: 'cover', position: sharp.strategy.attention | entropy })`: libvips's smartcrop runs on
//   the image scaled to cover w x h; info.cropOffsetLeft/Top are MINUS the window's corner in that scaled image
//   (sharp copies libvips's Xoffset/Yoffset), scaled back to the photo by its size over the scaled size;
// - smartcrop.js `crop(photo, { width: cropWidth, height: cropHeight })` (a sharp image adapter, as smartcrop-sharp's),
//   its topCrop already in the photo's pixels;
// - the centre, as gravity=center takes it: it must give the doc's centre figures (120/223), checking the case set.
// A case counts where the Worker crops (the photo does not already have the ratio) and the box fits the window.
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import sharp from 'sharp'
import { DATA, kept, prepare, RATIOS } from './lib/subject-photos.mjs'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const args = process.argv.slice(2)
const option = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined)
const corpus = path.resolve(option('--corpus') ?? process.env.CORPUS_DIR ?? path.join(ROOT, '..', 'shared', 'corpus'))
const smartcropDir = option('--smartcrop') ?? '/tmp/sc'

let smartcrop
try {
  smartcrop = (await import(pathToFileURL(path.join(smartcropDir, 'node_modules', 'smartcrop', 'smartcrop.js')).href)).default
} catch {
  console.error(`smartcrop.js not found in ${smartcropDir} (npm install --prefix ${smartcropDir} smartcrop): skipped`)
}

/** planGeometry's fit=cover crop size (src/pipeline/transform.ts, enlarge=false). */
function coverSize(W, H, { width, height }) {
  const wanted = Math.max(width / W, height / H)
  const scale = Math.min(1, wanted)
  const round = (v) => Math.max(1, Math.round(v))
  return {
    width: Math.min(W, round(scale < wanted ? H * (width / height) : width / scale)),
    height: Math.min(H, round(scale < wanted ? W * (height / width) : height / scale)),
  }
}

/** The window of `size` centred on (cx, cy) of the photo, as far as its edges allow. */
const centredAt = (photo, size, cx, cy) => ({
  x: Math.max(0, Math.min(photo.width - size.width, Math.floor(cx - size.width / 2 + 1e-9))),
  y: Math.max(0, Math.min(photo.height - size.height, Math.floor(cy - size.height / 2 + 1e-9))),
  ...size,
})

async function sharpWindow(photo, ratio, size, position) {
  const { width: w, height: h } = ratio
  const { info } = await sharp(photo.bytes).resize(w, h, { fit: 'cover', position }).toBuffer({ resolveWithObject: true })
  // the scaled image the window is cut from: the same shrink as cover, without the crop
  const scaled = await sharp(photo.bytes).resize(w, h, { fit: 'outside' }).toBuffer({ resolveWithObject: true })
  const [sx, sy] = [photo.width / scaled.info.width, photo.height / scaled.info.height]
  const [left, top] = [-info.cropOffsetLeft, -info.cropOffsetTop]
  return centredAt(photo, size, (left + w / 2) * sx, (top + h / 2) * sy)
}

/** smartcrop.js's image operations on sharp (what smartcrop-sharp does). */
const iop = {
  open: async (bytes) => {
    const { width, height } = await sharp(bytes).metadata()
    return { width, height, bytes }
  },
  resample: async (image, width, height) => ({ width: ~~width, height: ~~height, bytes: image.bytes }),
  getData: async (image) => {
    const data = await sharp(image.bytes).resize(image.width, image.height, { fit: 'fill' }).ensureAlpha().raw().toBuffer()
    return new smartcrop.ImgData(image.width, image.height, data)
  },
}

async function smartcropWindow(photo, size) {
  const { topCrop: c } = await smartcrop.crop(photo.bytes, { width: size.width, height: size.height, imageOperations: iop })
  return centredAt(photo, size, c.x + c.width / 2, c.y + c.height / 2)
}

const TOOLS = ['sharp attention', 'sharp entropy', ...(smartcrop ? ['smartcrop.js'] : []), 'centre']
const cases = []
for (const entry of DATA.photos) {
  const photo = await prepare(entry, corpus)
  for (const ratio of RATIOS) {
    const size = coverSize(photo.width, photo.height, ratio)
    if (size.width === photo.width && size.height === photo.height) continue // already the ratio: no X-Crop
    if (photo.box.width > size.width || photo.box.height > size.height) continue // the box cannot fit
    const windows = {
      'sharp attention': await sharpWindow(photo, ratio, size, sharp.strategy.attention),
      'sharp entropy': await sharpWindow(photo, ratio, size, sharp.strategy.entropy),
      ...(smartcrop ? { 'smartcrop.js': await smartcropWindow(photo, size) } : {}),
      centre: centredAt(photo, size, photo.width / 2, photo.height / 2),
    }
    const share = Object.fromEntries(TOOLS.map((tool) => [tool, kept(photo.box, windows[tool])]))
    cases.push({ photo: photo.name, half: photo.half, ratio: ratio.name, share })
  }
}

const pct = (n, d) => (d ? `${Math.round((100 * n) / d)} % (${n}/${d})` : '-')
const head = TOOLS.flatMap((tool) => [`${tool}: box inside`, `${tool}: ≥ 90 %`])
const lines = [`| photos | cases | ${head.join(' | ')} |`, `|---|---|${head.map(() => '---|').join('')}`]
for (const half of ['tune', 'held-out', 'fresh', 'fresh2', 'fresh3', 'all']) {
  const set = cases.filter((c) => half === 'all' || c.half === half)
  const cells = TOOLS.flatMap((tool) => [pct(set.filter((c) => c.share[tool] === 1).length, set.length), pct(set.filter((c) => c.share[tool] >= 0.9).length, set.length)])
  lines.push(`| ${half} | ${set.length} | ${cells.join(' | ')} |`)
}
console.log(lines.join('\n'))
const centre = cases.filter((c) => c.share.centre === 1).length
console.log(`\nCentre check: ${centre}/${cases.length} boxes inside (docs/results/gravity-auto.md: 120/223)`)
console.log(`sharp ${sharp.versions.sharp} (libvips ${sharp.versions.vips})${smartcrop ? `, smartcrop.js in ${smartcropDir}` : ''}`)
