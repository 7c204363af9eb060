// Experiments for scripts/bench.mjs (full run, or --explore): things the API cannot be asked to do, tried
// in Node on the very same @jsquash WebAssembly files the worker instantiates, so that docs/results/benchmarks.md
// can say what a change in src/ would buy before anyone makes it.
//
// 1. MozJPEG settings at matched quality: bytes each setting needs to reach the SSIM of sharp's default
//    JPEG (quantisation tables, progressive or not, multipass trellis).
// 2. Where the cold start goes: the same encode four times in a fresh Node process, with V8's default
//    tiering (lazy compilation, Liftoff baseline code, dynamic tier-up to TurboFan), with TurboFan only
//    (--no-liftoff) and with Liftoff only (--liftoff-only). Run as child processes of this file:
//      node [V8 flags] scripts/lib/bench-explore.mjs --tiering-child CODEC ROOT INPUT.jpg

import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { matchQuality } from './bench-quality.mjs'

const HERE = fileURLToPath(import.meta.url)

async function loadCodecs(root) {
  // Node has no ImageData: the worker's polyfill (plain TypeScript, run by Node 24's type stripping).
  await import(path.join(root, 'wasm', 'imagedata.ts'))
  const require = createRequire(path.join(root, 'package.json'))
  const dir = (name) => path.dirname(require.resolve(`${name}/package.json`))
  const compile = (name, rel) => WebAssembly.compile(fs.readFileSync(path.join(dir(name), rel)))
  const load = (spec) => import(require.resolve(spec))
  return {
    async jpegEncoder() {
      const m = await load('@jsquash/jpeg/encode.js')
      await m.init(await compile('@jsquash/jpeg', 'codec/enc/mozjpeg_enc.wasm'))
      const { defaultOptions } = await load('@jsquash/jpeg/meta.js')
      return (image, options) => m.default(image, { ...defaultOptions, ...options })
    },
    async jpegDecoder() {
      const m = await load('@jsquash/jpeg/decode.js')
      await m.init(await compile('@jsquash/jpeg', 'codec/dec/mozjpeg_dec.wasm'))
      return (bytes) => m.default(bytes)
    },
    async webpEncoder() {
      const m = await load('@jsquash/webp/encode.js')
      await m.init(await compile('@jsquash/webp', 'codec/enc/webp_enc_simd.wasm'))
      const { defaultOptions } = await load('@jsquash/webp/meta.js')
      return (image, options) => m.default(image, { ...defaultOptions, ...options })
    },
  }
}

/** The worker's MozJPEG options at effort 4 (src/codecs/jpeg.ts), and the variants tried. */
const WORKER_JPEG = { progressive: true, optimize_coding: true, trellis_multipass: false, auto_subsample: false, chroma_subsample: 2 }
export const MOZJPEG_VARIANTS = [
  ['as the worker (effort 4: progressive, trellis, quant table 3, 4:2:0)', {}],
  ['baseline (MozJPEG; effort 0-2 is now libjpeg-turbo)', { progressive: false }],
  ['multipass trellis, as effort 8-9', { trellis_multipass: true }],
  ['quant table 0 (JPEG Annex K, as libjpeg-turbo)', { quant_table: 0 }],
  ['quant table 2 (tuned for MS-SSIM)', { quant_table: 2 }],
  ['quant table 4 (tuned for PSNR-HVS-M)', { quant_table: 4 }],
  ["jSquash's auto subsampling (4:2:2 from q80)", { auto_subsample: true }],
  ['auto subsampling + quant table 4', { auto_subsample: true, quant_table: 4 }],
  ['auto subsampling + quant table 0', { auto_subsample: true, quant_table: 0 }],
]

export async function exploreMozjpeg({ root, sharp, scorer, photos, log }) {
  const codecs = await loadCodecs(root)
  const encode = await codecs.jpegEncoder()
  const rows = []
  for (const photo of photos) {
    const body = photo.body ?? fs.readFileSync(photo.file)
    const ref = await scorer.reference(body, null)
    const sharpDefault = await sharp(body).jpeg({ quality: 80, mozjpeg: false }).toBuffer()
    const target = (await scorer.score(ref, sharpDefault)).ssim
    const { data, info } = await sharp(body).ensureAlpha().raw().toBuffer({ resolveWithObject: true })
    const image = new ImageData(new Uint8ClampedArray(data.buffer, data.byteOffset, data.length), info.width, info.height)
    log(`- ${photo.name}: target SSIM ${target.toFixed(5)} (sharp default ${sharpDefault.length} bytes)`)
    for (const [name, options] of MOZJPEG_VARIANTS) {
      let encodeMs = null
      const m = await matchQuality(
        async (q) => {
          const t0 = performance.now()
          const out = new Uint8Array(await encode(image, { ...WORKER_JPEG, ...options, quality: q }))
          encodeMs = performance.now() - t0
          return { bytes: out.byteLength, ssim: (await scorer.score(ref, out)).ssim, ms: encodeMs }
        },
        { target, start: 84, maxSteps: 6 },
      )
      const row = { photo: photo.name, variant: name, target, sharpBytes: sharpDefault.length, q: m.pass?.q ?? null, bytes: m.pass?.bytes ?? null, interpolated: m.interpolated, encodeMs: m.pass?.ms ?? null }
      log(`  ${name}: q${row.q} ${row.bytes} bytes (${(row.bytes / row.sharpBytes).toFixed(3)}×), interpolated ${Math.round(row.interpolated)}`)
      rows.push(row)
    }
  }
  return rows
}

/** What MozJPEG's features cost natively: sharp's own mozjpeg with each feature switched on alone. */
export const NATIVE_JPEG_VARIANTS = [
  ["sharp's default (libjpeg-turbo behaviour)", { mozjpeg: false }],
  ['+ trellis quantisation', { trellisQuantisation: true }],
  ['+ progressive, optimised scans', { progressive: true, optimiseScans: true }],
  ['mozjpeg: true (all of MozJPEG, as the worker)', { mozjpeg: true }],
]

export async function exploreNativeJpeg({ sharp, inputs, log }) {
  const rows = []
  for (const input of inputs) {
    const { data, info } = await sharp(input.body).raw().toBuffer({ resolveWithObject: true })
    const raw = { raw: { width: info.width, height: info.height, channels: info.channels } }
    for (const [name, options] of NATIVE_JPEG_VARIANTS) {
      const times = []
      let bytes = 0
      for (let i = 0; i < 5; i++) {
        const t0 = performance.now()
        bytes = (await sharp(data, raw).jpeg({ quality: 80, ...options }).toBuffer()).length
        times.push(performance.now() - t0)
      }
      times.sort((a, b) => a - b)
      log(`- ${input.key} ${name}: encode ${times[2].toFixed(0)} ms, ${bytes} bytes`)
      rows.push({ input: input.key, width: info.width, height: info.height, variant: name, ms: times[2], bytes })
    }
  }
  return rows
}

const TIERING_FLAGS = [
  ['V8 default (lazy Liftoff, dynamic tier-up)', []],
  ['TurboFan only (--no-liftoff)', ['--no-liftoff']],
  ['Liftoff only (--liftoff-only)', ['--liftoff-only']],
]

export async function exploreTiering({ root, input, reps = 2, log }) {
  const rows = []
  for (const codec of ['jpeg-decode', 'jpeg-encode', 'webp-encode']) {
    for (let rep = 0; rep < reps; rep++) {
      for (const [name, flags] of TIERING_FLAGS) {
        const out = execFileSync(process.execPath, [...flags, HERE, '--tiering-child', codec, root, input], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
        const times = JSON.parse(out.trim().split('\n').pop())
        log(`- ${codec}, ${name}: ${times.map((t) => t.toFixed(0)).join(', ')} ms`)
        rows.push({ codec, flags: name, rep, times })
      }
    }
  }
  return rows
}

async function tieringChild(codec, root, input) {
  const require = createRequire(path.join(root, 'package.json'))
  const sharp = require('sharp')
  const codecs = await loadCodecs(root)
  const bytes = fs.readFileSync(input)
  let run
  if (codec === 'jpeg-decode') {
    const decode = await codecs.jpegDecoder()
    run = () => decode(bytes)
  } else {
    const { data, info } = await sharp(bytes).ensureAlpha().raw().toBuffer({ resolveWithObject: true })
    const image = new ImageData(new Uint8ClampedArray(data.buffer, data.byteOffset, data.length), info.width, info.height)
    const encode = codec === 'jpeg-encode' ? await codecs.jpegEncoder() : await codecs.webpEncoder()
    const options = codec === 'jpeg-encode' ? { ...WORKER_JPEG, quality: 80 } : { quality: 80, method: 4 }
    run = () => encode(image, options)
  }
  const times = []
  for (let i = 0; i < 4; i++) {
    const t0 = performance.now()
    await run()
    times.push(performance.now() - t0)
  }
  console.log(JSON.stringify(times))
}

if (process.argv[2] === '--tiering-child') {
  tieringChild(process.argv[3], process.argv[4], process.argv[5]).catch((error) => {
    console.error(error)
    process.exit(1)
  })
}
