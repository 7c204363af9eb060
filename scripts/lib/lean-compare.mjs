// Two builds of the lean codec (wasm/lean/lean.wasm) side by side, through LeanCodec: do they write the
// same bytes, and which is faster?
//
//   node_modules/.bin/node --experimental-transform-types scripts/lib/lean-compare.mjs [verify] [bench] [--old FILE] [--new FILE] [--runs N] [--jpegs A.jpg,B.jpg]
//
// "old" defaults to the lean.wasm committed at HEAD, "new" to the working tree's: rebuild with
// `npm run build:wasm`, then run this before committing a change to wasm/lean/lean.c. Used for the
// upright JPEG -> WebP fast path (same bytes, docs/results/benchmarks.md) and for the SIMDe experiment (branch
// experiment/simde-neon: libjpeg-turbo's Neon code through SIMDe, bit-exact but slower).
//
// verify: on test/fixtures/*.jpg, the corpus photos (../shared/corpus/photos), the 1 MP and 12 MP
// photos made by scripts/lib/inputs.mjs, or only on --jpegs a.jpg,b.jpg (e.g. 4:4:0 files from cjpeg
// -sample 1x2, which none of those is), both builds must give the same bytes for: decodeRgba at
// scales 1-8 (and upright with the EXIF orientation), JPEG encoding from RGBA (quality 80: baseline
// optimised, progressive, and not optimised), one-pass JPEG -> WebP, one-pass JPEG -> JPEG, WebP
// from RGBA (lossy and lossless). A difference is reported with its PSNR against the old output.
//
// bench: median wall time of N runs (default 7) after a warm-up, old and new alternating, at 1 MP
// (1152x864) and 12 MP (4032x3024): JPEG decode to RGBA, one-pass JPEG -> WebP (quality 80, method
// 4), JPEG encode from RGBA (quality 80, baseline, optimised), one-pass JPEG -> JPEG (same settings).
// Each operation gets a fresh instance, as a request does. (--experimental-transform-types: wasm/lean.ts
// has TypeScript parameter properties, which plain type stripping refuses.)
import fs from 'node:fs'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import '../../wasm/imagedata.ts'
import { LeanCodec } from '../../wasm/lean.ts'
import { MemoryCap } from '../../wasm/cap.ts'
import { makeInput } from './inputs.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const args = process.argv.slice(2)
const option = (name, fallback) => {
  const i = args.indexOf(name)
  return i >= 0 ? args[i + 1] : fallback
}
const modes = args.filter((a, i) => !a.startsWith('--') && !(i > 0 && args[i - 1].startsWith('--')))
const doVerify = modes.length === 0 || modes.includes('verify')
const doBench = modes.length === 0 || modes.includes('bench')
const runs = Number(option('--runs', 7))

const oldBytes = option('--old') ? fs.readFileSync(option('--old')) : execFileSync('git', ['show', 'HEAD:wasm/lean/lean.wasm'], { cwd: root, maxBuffer: 1 << 26 })
const newBytes = fs.readFileSync(option('--new', path.join(root, 'wasm/lean/lean.wasm')))
const builds = { old: await WebAssembly.compile(oldBytes), new: await WebAssembly.compile(newBytes) }
console.log(`old ${oldBytes.length} B, new ${newBytes.length} B`)

const codec = (module) => new LeanCodec(module, new MemoryCap(2 ** 31))
const baseline = { quality: 80, progressive: false, optimize: true, mozjpeg: false }

/** The operations, each on a fresh instance; results are copied out of the instance. */
const ops = {
  decode: (m, jpeg, scale = 8, orientation = 1) => {
    const c = codec(m)
    c.openJpeg(jpeg)
    c.start(scale, 4)
    const img = c.decodeRgba(orientation)
    return { data: new Uint8Array(img.data), width: img.width, height: img.height }
  },
  toWebp: (m, jpeg, orientation = 1) => {
    const c = codec(m)
    // An upright JPEG goes through the row pipeline; a turned one through the one-pass route into the planes.
    if (orientation === 1) {
      c.rowsFromJpeg(jpeg, 8)
      c.orientRows(1)
      c.rowsToWebpPicture(false)
    } else {
      c.openJpeg(jpeg)
      c.start(8, 3)
      c.decodeToYuv(orientation)
    }
    return c.encodeWebp(80, 4, false)
  },
  encodeJpeg: (m, image, settings = baseline) => codec(m).encodeJpeg(image, settings),
  toJpeg: (m, jpeg, settings = baseline, orientation = 1) => {
    const c = codec(m)
    const { components } = c.openJpeg(jpeg)
    if (startsItself.get(m) === false) c.start(8, components === 1 ? 1 : 3)
    return c.transcodeJpeg(orientation, settings)
  },
  webpRgba: (m, image, lossless) => codec(m).encodeWebpRgba(image, { quality: lossless ? 50 : 80, method: 4, lossless, lowMemory: false }),
}

/**
 * Builds since 2026-11-27 start the decompressor themselves in jd_to_jpeg (a 4:2:0 JPEG's planes go through raw); older
 * ones fail on an unstarted one and were started by the caller: asked once per build, on a tiny grey JPEG of its own.
 */
const startsItself = new Map()
for (const m of Object.values(builds)) {
  const probe = codec(m).encodeJpeg(new ImageData(8, 8), baseline)
  try {
    const c = codec(m)
    c.openJpeg(probe)
    c.transcodeJpeg(1, baseline)
    startsItself.set(m, true)
  } catch {
    startsItself.set(m, false)
  }
}

const same = (a, b) => a.length === b.length && Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.length), Buffer.from(b.buffer, b.byteOffset, b.length)) === 0

function psnr(a, b) {
  if (a.length !== b.length) return NaN
  let se = 0
  for (let i = 0; i < a.length; i++) se += (a[i] - b[i]) ** 2
  return se === 0 ? Infinity : 10 * Math.log10((255 * 255 * a.length) / se)
}

/** PSNR of two JPEGs, decoded by the old build (so only the encoders differ). */
const jpegPsnr = (a, b) => psnr(ops.decode(builds.old, a).data, ops.decode(builds.old, b).data)

async function photos() {
  const cacheDir = path.join(root, '.cache/memory-inputs')
  const corpusDir = path.resolve(root, '../shared/corpus/photos')
  const made = []
  for (const [width, height] of [[1152, 864], [4032, 3024]]) {
    made.push(await makeInput({ format: 'jpeg', width, height }, { root, corpusDir, cacheDir }))
  }
  made.push(await makeInput({ format: 'jpeg', width: 2304, height: 1728, progressive: true }, { root, corpusDir, cacheDir }))
  return made.map((m) => m.file)
}

async function verify() {
  const files = option('--jpegs') ? option('--jpegs').split(',') : [
    ...fs.readdirSync(path.join(root, 'test/fixtures')).filter((f) => f.endsWith('.jpg') && f !== 'cmyk.jpg').map((f) => path.join(root, 'test/fixtures', f)),
    ...(fs.existsSync(path.resolve(root, '../shared/corpus/photos')) ? fs.readdirSync(path.resolve(root, '../shared/corpus/photos')).filter((f) => f.endsWith('.jpg')).map((f) => path.resolve(root, '../shared/corpus/photos', f)) : []),
    ...(await photos()),
  ]
  let checks = 0
  const differences = []
  const check = (label, a, b, measure) => {
    checks++
    if (same(a, b)) return
    const detail = measure ? `, PSNR ${measure(a, b).toFixed(2)} dB` : ''
    differences.push(`${label}: ${a.length} vs ${b.length} bytes${detail}`)
    console.log(`DIFF ${label}${detail}`)
  }
  for (const file of files) {
    const name = path.relative(root, file)
    const jpeg = new Uint8Array(fs.readFileSync(file))
    let components
    try {
      components = codec(builds.old).openJpeg(jpeg).components
    } catch (e) {
      console.log(`skip ${name}: ${e.message}`)
      continue
    }
    for (let scale = 1; scale <= 8; scale++) {
      const a = ops.decode(builds.old, jpeg, scale)
      const b = ops.decode(builds.new, jpeg, scale)
      check(`${name} decodeRgba scale ${scale}/8`, a.data, b.data, psnr)
    }
    for (const orientation of [3, 6]) {
      check(`${name} decodeRgba orientation ${orientation}`, ops.decode(builds.old, jpeg, 8, orientation).data, ops.decode(builds.new, jpeg, 8, orientation).data, psnr)
    }
    const image = ops.decode(builds.old, jpeg)
    const rgba = new ImageData(new Uint8ClampedArray(image.data.buffer), image.width, image.height)
    for (const settings of [baseline, { ...baseline, progressive: true }, { ...baseline, optimize: false }, { ...baseline, quality: 95, progressive: true }]) {
      const label = `q${settings.quality}${settings.progressive ? ' progressive' : ' baseline'}${settings.optimize ? ' optimised' : ''}`
      check(`${name} encodeJpeg ${label}`, ops.encodeJpeg(builds.old, rgba, settings), ops.encodeJpeg(builds.new, rgba, settings), jpegPsnr)
      check(`${name} JPEG->JPEG ${label}`, ops.toJpeg(builds.old, jpeg, settings), ops.toJpeg(builds.new, jpeg, settings), jpegPsnr)
    }
    check(`${name} JPEG->JPEG q80 orientation 6`, ops.toJpeg(builds.old, jpeg, baseline, 6), ops.toJpeg(builds.new, jpeg, baseline, 6), jpegPsnr)
    if (components !== 1) {
      check(`${name} JPEG->WebP`, ops.toWebp(builds.old, jpeg), ops.toWebp(builds.new, jpeg))
      check(`${name} JPEG->WebP orientation 6`, ops.toWebp(builds.old, jpeg, 6), ops.toWebp(builds.new, jpeg, 6))
    }
    check(`${name} WebP from RGBA lossy`, ops.webpRgba(builds.old, rgba, false), ops.webpRgba(builds.new, rgba, false))
    if (image.width * image.height <= 2_000_000) check(`${name} WebP from RGBA lossless`, ops.webpRgba(builds.old, rgba, true), ops.webpRgba(builds.new, rgba, true))
    console.log(`checked ${name} (${image.width}x${image.height})`)
  }
  console.log(`verify: ${checks} comparisons, ${differences.length} differences`)
  return differences
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

async function bench() {
  const [small, large] = await photos()
  const rows = []
  for (const [label, file] of [['1 MP', small], ['12 MP', large]]) {
    const jpeg = new Uint8Array(fs.readFileSync(file))
    const decoded = ops.decode(builds.old, jpeg)
    const rgba = new ImageData(new Uint8ClampedArray(decoded.data.buffer), decoded.width, decoded.height)
    const cases = {
      'JPEG decode to RGBA': (m) => ops.decode(m, jpeg),
      'JPEG -> WebP (q80, m4)': (m) => ops.toWebp(m, jpeg),
      'JPEG encode from RGBA (q80, baseline, optimised)': (m) => ops.encodeJpeg(m, rgba),
      'JPEG -> JPEG (q80, baseline, optimised)': (m) => ops.toJpeg(m, jpeg),
    }
    for (const [name, run] of Object.entries(cases)) {
      const times = { old: [], new: [] }
      for (const b of ['old', 'new']) run(builds[b]) // warm-up
      for (let i = 0; i < runs; i++) {
        for (const b of i % 2 ? ['new', 'old'] : ['old', 'new']) {
          const t = performance.now()
          run(builds[b])
          times[b].push(performance.now() - t)
        }
      }
      const row = { size: label, op: name, old: median(times.old), new: median(times.new) }
      rows.push(row)
      console.log(`${label.padEnd(6)} ${name.padEnd(50)} old ${row.old.toFixed(1).padStart(8)} ms  new ${row.new.toFixed(1).padStart(8)} ms  new/old ${(row.new / row.old).toFixed(2)}`)
    }
  }
  console.log('\n| size | operation | old ms | new ms | new/old |\n| --- | --- | ---: | ---: | ---: |')
  for (const r of rows) console.log(`| ${r.size} | ${r.op} | ${r.old.toFixed(1)} | ${r.new.toFixed(1)} | ${(r.new / r.old).toFixed(2)} |`)
  return rows
}

let failed = false
if (doVerify) failed = (await verify()).length > 0
if (doBench) await bench()
process.exitCode = failed ? 1 : 0
