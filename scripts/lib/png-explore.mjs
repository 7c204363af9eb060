// PNG output settings explored: bytes and time of the lean codec's PNG sink (wasm/lean/sink_png.c) at each
// libdeflate level and filter strategy, against sharp's default and best lossless PNG (compressionLevel 9,
// adaptiveFiltering) and oxipng level 2, on the images named (PNG or JPEG; decoded by sharp). Every output
// is decoded again and compared with the input's pixels (fully transparent pixels may differ in colour).
//
//   node_modules/.bin/node --experimental-transform-types scripts/lib/png-explore.mjs [--settings 1:0,6:0,9:96] a.png b.jpg ...
//
// A setting is level:strategies (strategies: a mask of PNG_STRATEGY in wasm/lean.ts; 0, the layout's usual one).
import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import '../../wasm/imagedata.ts'
import { LeanCodec } from '../../wasm/lean.ts'
import { MemoryCap } from '../../wasm/cap.ts'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const require = createRequire(path.join(root, 'package.json'))
const sharp = require('sharp')
const args = process.argv.slice(2)
const at = args.indexOf('--settings')
const settings = (at >= 0 ? args.splice(at, 2)[1] : '1:0,4:0,6:0,8:0,9:0,9:97,12:0,12:97')
  .split(',')
  .map((s) => s.split(':').map(Number))
const withOxipng = !args.includes('--no-oxipng')
const files = args.filter((a) => !a.startsWith('--'))
const module = await WebAssembly.compile(fs.readFileSync(path.join(root, 'wasm/lean/lean.wasm')))

let optimise
if (withOxipng) {
  const oxipng = await import(require.resolve('@jsquash/oxipng/optimise.js'))
  await oxipng.init(await WebAssembly.compile(fs.readFileSync(path.join(path.dirname(require.resolve('@jsquash/oxipng/package.json')), 'codec/pkg/squoosh_oxipng_bg.wasm'))))
  optimise = (image, level) => oxipng.default(image, { level, optimiseAlpha: true })
}

const time = async (fn) => {
  const t = performance.now()
  const out = await fn()
  return { out, ms: performance.now() - t }
}

const same = async (png, rgba) => {
  const { data } = await sharp(png).ensureAlpha().raw().toBuffer({ resolveWithObject: true })
  for (let i = 0; i < data.length; i += 4) {
    if (rgba[i + 3] === 0 && data[i + 3] === 0) continue
    if (data[i] !== rgba[i] || data[i + 1] !== rgba[i + 1] || data[i + 2] !== rgba[i + 2] || data[i + 3] !== rgba[i + 3]) return false
  }
  return true
}

for (const file of files) {
  const { data, info } = await sharp(file).ensureAlpha().raw().toBuffer({ resolveWithObject: true })
  const { width, height } = info
  const mp = ((width * height) / 1e6).toFixed(1)
  const opaque = sharp(data, { raw: { width, height, channels: 4 } })
  // sharp's best: level 9, with libpng's adaptive filters or without (no filter), whichever is smaller.
  const adaptive = await time(() => opaque.clone().png({ compressionLevel: 9, adaptiveFiltering: true }).toBuffer())
  const plain = await time(() => opaque.clone().png({ compressionLevel: 9 }).toBuffer())
  const best = adaptive.out.length <= plain.out.length ? adaptive : plain
  const dflt = await time(() => opaque.clone().png().toBuffer())
  const row = [`${path.basename(file)} ${width}x${height} (${mp} MP)`, `sharp best ${best.out.length} B ${best.ms.toFixed(0)} ms (${best === adaptive ? 'adaptive' : 'unfiltered'})`, `sharp default ${(dflt.out.length / best.out.length).toFixed(3)}x ${dflt.ms.toFixed(0)} ms`]
  if (optimise) {
    const ox = await time(() => optimise(new ImageData(new Uint8ClampedArray(data), width, height), 2))
    row.push(`oxipng 2 ${(ox.out.byteLength / best.out.length).toFixed(3)}x ${ox.ms.toFixed(0)} ms`)
  }
  console.log(row.join(' | '))
  for (const [level, strategies] of settings) {
    const lean = new LeanCodec(module, new MemoryCap(2 ** 31))
    // The sink writes its file in parts (never whole in the instance): joined here to decode and count it.
    const { out: { parts }, ms } = await time(() => lean.encodePng(new ImageData(new Uint8ClampedArray(data), width, height), { level, strategies }))
    const out = Buffer.concat(parts)
    const ok = await same(out, data)
    console.log(`  lean ${level}:${strategies} ${out.length} B ${(out.length / best.out.length).toFixed(3)}x ${ms.toFixed(0)} ms ${(ms / mp).toFixed(0)} ms/MP${ok ? '' : ' PIXELS DIFFER'}`)
  }
}
