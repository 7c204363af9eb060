#!/usr/bin/env node
// Experiment: libavif/libaom settings at matched quality, in Node on the very same @jsquash AVIF
// encoder .wasm the worker instantiates (wasm/index.ts: one fresh instance per encode, as here).
//
// For each photo of the matched-quality set (scripts/lib/bench-inputs.mjs photoSet: Wood 1 MP with
// grain, Dune, Storm, Blinds at about 1 MP, lossless PNGs), the target is the SSIM (6:1:1 Y:Cb:Cr,
// scripts/lib/bench-quality.mjs) of sharp's default AVIF (quality 50, effort 4 = libaom cpu-used 5,
// 4:4:4; libheif's aom plugin also defaults to tune=ssim). For each setting below, the lowest integer
// quality reaching that SSIM is bisected, and its bytes and encode time recorded (encode only, from
// RGBA; the time is the median of the matching encode and `--reps` more; sharp's is the median of
// as many runs of its whole PNG -> AVIF conversion, decode included, as scripts/bench.mjs times it).
//
//   node scripts/lib/avif-explore.mjs                        # every setting, 4 photos
//   node scripts/lib/avif-explore.mjs --only 444 --photos 1  # settings whose name contains "444"
//   node scripts/lib/avif-explore.mjs --reps 0               # no extra timing runs
//   node scripts/lib/avif-explore.mjs --skip 2 --out b       # photos 3-4 only, to .cache/avif-explore-b.json
//   node scripts/lib/avif-explore.mjs --cpu 1,2,3,4 --reps 3 # CPU ms per encode, 4:2:0 vs 4:4:4, per effort
//   node scripts/lib/avif-explore.mjs --only 'as the worker now,sharp (libheif' --reps 0 --out sharp
//                                                            # the worker against sharp at its settings
//
// The settings named "sharp (...)" encode with sharp itself (its libheif and libaom) instead of the
// worker's wasm, to tell the settings from the encoder build (docs/notes/benchmarks.md, item 19).
//
// Writes .cache/avif-explore.json (avif-explore-cpu.json for --cpu). `exploreAvif` and `avifTable` are
// exported. A setting flagged `gamesMetric` (none now) would tune libaom towards SSIM alone, the metric
// we score with: reported apart, never adopted.

import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { createScorer, matchQuality } from './bench-quality.mjs'

const HERE = fileURLToPath(import.meta.url)
const ROOT = path.resolve(path.dirname(HERE), '..', '..')

/** The worker's options for lossy AVIF at effort 4 before it took libsharpyuv (src/codecs/avif.ts); each setting changes some. */
const BASE = { qualityAlpha: -1, subsample: 1, speed: 6, bitDepth: 8 }

/** [name, options on top of BASE, { gamesMetric }]. subsample: 1 = 4:2:0, 2 = 4:2:2, 3 = 4:4:4. */
export const AVIF_VARIANTS = [
  ['420 speed 6 (the worker before)', {}],
  ['420 speed 6 + sharp YUV (as the worker now)', { enableSharpYUV: true }],
  ['420 speed 6 + chroma delta-q', { chromaDeltaQ: true }],
  ['444 speed 7', { subsample: 3, speed: 7 }],
  ['444 speed 6', { subsample: 3 }],
  ['444 speed 5', { subsample: 3, speed: 5 }],
  ['444 speed 6 + chroma delta-q', { subsample: 3, chromaDeltaQ: true }],
  ['444 speed 6 + sharpness 2', { subsample: 3, sharpness: 2 }],
  // jSquash's tune `auto` is already tune=ssim from quality 50 up (its avif_enc.cpp), as libheif's aom
  // default is for sharp, so every matched quality here (51-73) is SSIM-tuned on both sides and an
  // explicit `tune: 2` (ssim) gives byte-identical files. This row shows what that tuning is worth.
  ['444 speed 6 + tune psnr (not SSIM-tuned)', { subsample: 3, tune: 1 }],
  // sharp itself with the worker's settings (4:2:0, libaom cpu-used 6 = sharp effort 3, 8-bit): the
  // same settings through a newer libaom (sharp.versions.aom, 3.15 against jSquash's 3.7) and libheif.
  // Shows how much of the gap to sharp's default is the encoder build rather than the settings.
  ['sharp (libheif + its libaom) 420 speed 6, as the worker', { sharp: { chromaSubsampling: '4:2:0', effort: 3, bitdepth: 8 } }],
  ['sharp (libheif + its libaom) 444 speed 6', { sharp: { chromaSubsampling: '4:4:4', effort: 3, bitdepth: 8 } }],
]

async function loadAvifEncoder(root) {
  await import(path.join(root, 'wasm', 'imagedata.ts'))
  const require = createRequire(path.join(root, 'package.json'))
  const dir = path.dirname(require.resolve('@jsquash/avif/package.json'))
  const module = await WebAssembly.compile(fs.readFileSync(path.join(dir, 'codec', 'enc', 'avif_enc.wasm')))
  const { default: factory } = await import(path.join(dir, 'codec', 'enc', 'avif_enc.js'))
  const { defaultOptions } = await import(path.join(dir, 'meta.js'))
  // A fresh instance per encode, as wasm/index.ts does in the worker.
  return async (image, options) => {
    const m = await factory({
      noInitialRun: true,
      instantiateWasm(imports, done) {
        const instance = new WebAssembly.Instance(module, imports)
        done(instance)
        return instance.exports
      },
    })
    const t0 = performance.now()
    const out = m.encode(image.data, image.width, image.height, { ...defaultOptions, ...BASE, ...options })
    const ms = performance.now() - t0
    if (!out) throw new Error('AVIF encoding failed')
    return { out: new Uint8Array(out.buffer, out.byteOffset, out.byteLength).slice(), ms }
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

export async function exploreAvif({ root, sharp, scorer, photos, variants = AVIF_VARIANTS, reps = 2, log }) {
  const encode = await loadAvifEncoder(root)
  const rows = []
  for (const photo of photos) {
    const body = photo.body ?? fs.readFileSync(photo.file)
    const ref = await scorer.reference(body, null)
    const sharpMs = []
    let sharpDefault = null
    for (let i = 0; i <= reps; i++) {
      const t0 = performance.now()
      sharpDefault = await sharp(body).avif({ quality: 50 }).toBuffer()
      sharpMs.push(performance.now() - t0)
    }
    const target = (await scorer.score(ref, sharpDefault)).ssim
    const { data, info } = await sharp(body).ensureAlpha().raw().toBuffer({ resolveWithObject: true })
    const image = new ImageData(new Uint8ClampedArray(data.buffer, data.byteOffset, data.length), info.width, info.height)
    log(`- ${photo.name}: target SSIM ${target.toFixed(5)} (sharp default ${sharpDefault.length} bytes, ${median(sharpMs).toFixed(0)} ms)`)
    for (const [name, options, flags = {}] of variants) {
      // A `sharp` setting encodes with sharp instead of the worker's wasm encoder.
      const encodeWith = options.sharp
        ? async (_image, { quality }) => {
            const t0 = performance.now()
            const out = await sharp(body).avif({ ...options.sharp, quality }).toBuffer()
            return { out, ms: performance.now() - t0 }
          }
        : encode
      const m = await matchQuality(
        async (q) => {
          const { out, ms } = await encodeWith(image, { ...options, quality: q })
          return { bytes: out.byteLength, ssim: (await scorer.score(ref, out)).ssim, ms }
        },
        { target, start: 50, maxSteps: 8 },
      )
      const times = m.pass ? [m.pass.ms] : []
      for (let i = 0; m.pass && i < reps; i++) times.push((await encodeWith(image, { ...options, quality: m.pass.q })).ms)
      const row = {
        photo: photo.name, width: info.width, height: info.height, variant: name, options, gamesMetric: Boolean(flags.gamesMetric),
        target, sharpBytes: sharpDefault.length, sharpMs: median(sharpMs),
        q: m.pass?.q ?? null, failQ: m.fail?.q ?? null, exact: m.exact, bytes: m.pass?.bytes ?? null, ssim: m.pass?.ssim ?? null,
        interpolated: m.interpolated, encodeMs: times.length ? median(times) : null, times,
      }
      log(`  ${name}: q${row.q} ${row.bytes} bytes (${(row.bytes / row.sharpBytes).toFixed(3)}×, interpolated ${(row.interpolated / row.sharpBytes).toFixed(3)}×), ${row.encodeMs?.toFixed(0)} ms (${(row.encodeMs / row.sharpMs).toFixed(2)}× sharp)${row.exact ? '' : ' [not bracketed to 1]'}`)
      rows.push(row)
    }
  }
  return rows
}

/** A Markdown table: photo x setting, quality, bytes, ratio to sharp's default, encode ms. */
export function avifTable(rows) {
  const out = ['| photo | setting | quality | bytes | × sharp (interp.) | encode ms | × sharp time |', '|---|---|---:|---:|---:|---:|---:|']
  for (const r of rows) {
    out.push(`| ${r.photo} | ${r.variant} | ${r.q ?? '–'} | ${r.bytes ?? '–'} | ${r.bytes ? (r.bytes / r.sharpBytes).toFixed(2) : '–'} (${r.interpolated ? (r.interpolated / r.sharpBytes).toFixed(2) : '–'}) | ${r.encodeMs?.toFixed(0) ?? '–'} | ${r.encodeMs ? (r.encodeMs / r.sharpMs).toFixed(2) : '–'} |`)
  }
  const names = [...new Set(rows.map((r) => r.variant))]
  const photos = [...new Set(rows.map((r) => r.photo))]
  out.push('', `| setting | geometric mean bytes × sharp over ${photos.length} photo(s) | worst | median encode ms × sharp |`, '|---|---:|---:|---:|')
  for (const name of names) {
    const rs = rows.filter((r) => r.variant === name && r.bytes)
    const ratios = rs.map((r) => r.bytes / r.sharpBytes)
    const gm = Math.exp(ratios.reduce((s, x) => s + Math.log(x), 0) / ratios.length)
    out.push(`| ${name} | ${gm.toFixed(2)} | ${Math.max(...ratios).toFixed(2)} | ${median(rs.map((r) => r.encodeMs / r.sharpMs)).toFixed(2)} |`)
  }
  return out.join('\n')
}

/**
 * CPU time of one encode (process.cpuUsage: the wasm encoder is single-threaded, so this is its work,
 * less disturbed by other load than wall time), 4:2:0 against 4:4:4 at each effort, interleaved, the
 * median of `reps` per cell. For the AVIF effort caps (test/unit/avif-effort-caps.test.ts).
 */
export async function avifCpu({ root, sharp, photo, efforts = [1, 2, 3, 4, 5], quality = 50, reps = 3, log }) {
  const encode = await loadAvifEncoder(root)
  const body = photo.body ?? fs.readFileSync(photo.file)
  const { data, info } = await sharp(body).ensureAlpha().raw().toBuffer({ resolveWithObject: true })
  const image = new ImageData(new Uint8ClampedArray(data.buffer, data.byteOffset, data.length), info.width, info.height)
  const rows = []
  for (const effort of efforts) {
    const cpu = { 1: [], 3: [] }
    const bytes = {}
    for (let i = 0; i < reps; i++) {
      for (const subsample of [1, 3]) {
        const c0 = process.cpuUsage()
        const { out } = await encode(image, { subsample, speed: 10 - effort, quality })
        const c = process.cpuUsage(c0)
        cpu[subsample].push((c.user + c.system) / 1000)
        bytes[subsample] = out.byteLength
      }
    }
    const row = { photo: photo.name, width: info.width, height: info.height, effort, quality, cpuMs420: median(cpu[1]), cpuMs444: median(cpu[3]), bytes420: bytes[1], bytes444: bytes[3], all420: cpu[1], all444: cpu[3] }
    row.ratio = row.cpuMs444 / row.cpuMs420
    log(`- effort ${effort} (speed ${10 - effort}), q${quality}: CPU 4:2:0 ${row.cpuMs420.toFixed(0)} ms, 4:4:4 ${row.cpuMs444.toFixed(0)} ms (${row.ratio.toFixed(2)}×); ${row.bytes420} / ${row.bytes444} bytes`)
    rows.push(row)
  }
  return rows
}

async function main(argv) {
  const args = { only: null, photos: 4, skip: 0, reps: 2, cpu: null, corpus: path.resolve(ROOT, '..', 'shared', 'corpus', 'photos') }
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--only') args.only = argv[++i].split(',')
    else if (argv[i] === '--cpu') args.cpu = argv[++i].split(',').map(Number)
    else if (argv[i] === '--photos') args.photos = Number(argv[++i])
    else if (argv[i] === '--skip') args.skip = Number(argv[++i])
    else if (argv[i] === '--out') args.out = argv[++i]
    else if (argv[i] === '--reps') args.reps = Number(argv[++i])
    else if (argv[i] === '--corpus') args.corpus = path.resolve(argv[++i])
    else throw new Error(`unknown option ${argv[i]}`)
  }
  const { loadSharp } = await import('./bench-sharp.mjs')
  const { createInputs } = await import('./bench-inputs.mjs')
  const sharp = loadSharp(ROOT)
  const log = (m) => console.log(m)
  const inputs = createInputs({ root: ROOT, corpusDir: fs.existsSync(args.corpus) ? args.corpus : null, log: (m) => log(`  ${m}`) })
  const photos = (await inputs.photoSet({ limit: args.photos })).slice(args.skip)
  if (args.cpu) {
    const rows = await avifCpu({ root: ROOT, sharp, photo: photos[0], efforts: args.cpu, reps: Math.max(1, args.reps), log })
    const file = path.join(ROOT, '.cache', 'avif-explore-cpu.json')
    fs.writeFileSync(file, JSON.stringify({ date: new Date().toISOString(), rows }, null, 2))
    console.log(`written to ${path.relative(ROOT, file)}`)
    return
  }
  // --only: substrings of setting names, or =NAME for exactly that name.
  const variants = args.only ? AVIF_VARIANTS.filter(([name]) => args.only.some((s) => (s.startsWith('=') ? name === s.slice(1) : name.includes(s)))) : AVIF_VARIANTS
  const rows = await exploreAvif({ root: ROOT, sharp, scorer: createScorer(ROOT, sharp), photos, variants, reps: args.reps, log })
  const file = path.join(ROOT, '.cache', `avif-explore${args.out ? `-${args.out}` : ''}.json`)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, JSON.stringify({ date: new Date().toISOString(), rows }, null, 2))
  console.log(`\n${avifTable(rows)}\n\nwritten to ${path.relative(ROOT, file)}`)
}

if (process.argv[1] && path.resolve(process.argv[1]) === HERE) {
  main(process.argv.slice(2)).catch((error) => {
    console.error(error)
    process.exit(1)
  })
}
