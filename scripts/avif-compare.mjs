#!/usr/bin/env node
/**
 * Our AVIF encoder (libavif + libaom in wasm/lean/lean.wasm, sink_avif.c) against jSquash's whole-image one, in Node, on the same RGBA:
 * bytes, encode time, the lean instance's WebAssembly memory at the end (its peak: linear memory never
 * shrinks; a debug build, `bash wasm/lean/build.sh trace`, lists its large allocations) and SSIM/PSNR of the decoded answer (sharp decodes) against the RGBA that was encoded.
 *
 *   node scripts/avif-compare.mjs [--width 2048] [--quality 50] [--effort 4] [--only ours|jsquash]
 *        [--option key=value ...] [--band 64] FILE...
 *
 * The memory figure is the instance's alone; the Worker's (scripts/measure-memory.mjs) adds the
 * request, the decoder and the RGBA the pipeline holds.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import sharp from 'sharp'
import { ssim } from 'ssim.js'

const require = createRequire(import.meta.url)
const root = fileURLToPath(new URL('..', import.meta.url))
const args = process.argv.slice(2)
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`)
  if (i < 0) return fallback
  const [value] = args.splice(i, 2).slice(1)
  return value
}
const options = []
for (let i; (i = args.indexOf('--option')) >= 0; ) options.push(args.splice(i, 2)[1])
const widthArg = opt('width', '2048')
const width = widthArg === 'full' ? undefined : Number(widthArg)
const quality = Number(opt('quality', 50))
const effort = Number(opt('effort', 4))
const only = opt('only')
const band = Number(opt('band', 64))
const cell = opt('cell')
const lossless = args.includes('--lossless') ? (args.splice(args.indexOf('--lossless'), 1), true) : false
const wasmPath = opt('wasm', `${root}/wasm/lean/lean.wasm`)
const files = args

const MiB = (bytes) => (bytes / 2 ** 20).toFixed(1)

function ours(rgba, w, h) {
  const module = new WebAssembly.Module(readFileSync(wasmPath))
  const memory = new WebAssembly.Memory({ initial: 32, maximum: 65536 })
  const text = (ptr, len) => new TextDecoder().decode(new Uint8Array(memory.buffer, ptr, len))
  const nosys = () => 52
  const wasi = new Proxy({ fd_prestat_get: () => 8, clock_time_get: () => 0, proc_exit: (c) => { throw new Error(`exit ${c}`) } }, { get: (t, k) => t[k] ?? nosys })
  // A debug build (--wasm .cache/lean-build/lean-trace.wasm) reports its large allocations with their callers.
  let live = 0
  let peak = 0
  const trace = (size, ptr) => {
    live += size
    peak = Math.max(peak, live)
    const frames = new Error().stack.split('\n').slice(3, 7).map((f) => f.trim().replace(/^at /, '').replace(/ \(.*/, ''))
    console.log(`${size > 0 ? '+' : '-'}${MiB(Math.abs(size))} MiB live ${MiB(live)} @${ptr} ${frames.join(' < ')}`)
  }
  const instance = new WebAssembly.Instance(module, { env: { memory, trace, fail: (p, l) => { throw new Error(text(p, l)) }, read_input: () => { throw new Error('no input') }, write_output: () => {} }, wasi_snapshot_preview1: wasi })
  const e = instance.exports
  e._initialize()
  const start = performance.now()
  if (cell) e.ae_cell(Number(cell))
  e.ae_start(w, h, lossless ? 100 : quality, 10 - effort, lossless ? 2 : 4)
  for (const o of options) {
    const [k, v] = o.split('=')
    const kp = e.lean_alloc(k.length + 1), vp = e.lean_alloc(v.length + 1)
    new Uint8Array(memory.buffer).set([...Buffer.from(k), 0], kp)
    new Uint8Array(memory.buffer).set([...Buffer.from(v), 0], vp)
    e.ae_option(kp, vp)
  }
  const buf = e.lean_alloc(w * 4 * band)
  for (let y = 0; y < h; y += band) {
    const n = Math.min(band, h - y)
    new Uint8Array(memory.buffer, buf, w * 4 * n).set(rgba.subarray(y * w * 4, (y + n) * w * 4))
    e.ae_rows(buf, n)
  }
  e.lean_free(buf)
  const size = e.ae_finish()
  const ms = performance.now() - start
  const out = new Uint8Array(memory.buffer, e.lean_output(), size).slice()
  return { out, ms, memory: memory.buffer.byteLength }
}

async function jsquash(rgba, w, h) {
  const { defaultOptions } = await import('@jsquash/avif/meta.js')
  const factory = (await import('@jsquash/avif/codec/enc/avif_enc.js')).default
  const module = new WebAssembly.Module(readFileSync(require.resolve('@jsquash/avif/codec/enc/avif_enc.wasm')))
  let mem
  const enc = await factory({
    noInitialRun: true,
    instantiateWasm(imports, done) {
      const instance = new WebAssembly.Instance(module, imports)
      mem = Object.values(instance.exports).find((v) => v instanceof WebAssembly.Memory)
      done(instance)
      return instance.exports
    },
  })
  const start = performance.now()
  const out = enc.encode(new Uint8ClampedArray(rgba.buffer, rgba.byteOffset, rgba.length), w, h, {
    ...defaultOptions, quality, qualityAlpha: -1, subsample: 1, enableSharpYUV: true, speed: 10 - effort, bitDepth: 8,
  })
  const ms = performance.now() - start
  return { out: new Uint8Array(out), ms, memory: mem.buffer.byteLength }
}

async function closeness(out, rgba, w, h) {
  const { data, info } = await sharp(Buffer.from(out)).ensureAlpha().raw().toBuffer({ resolveWithObject: true })
  if (info.width !== w || info.height !== h) throw new Error(`decoded ${info.width}x${info.height}`)
  let se = 0
  for (let i = 0; i < data.length; i++) if ((i & 3) !== 3) se += (data[i] - rgba[i]) ** 2
  const psnr = 10 * Math.log10((255 * 255) / (se / ((data.length / 4) * 3)))
  const s = ssim({ data: new Uint8ClampedArray(rgba), width: w, height: h }, { data: new Uint8ClampedArray(data), width: w, height: h }, { ssim: 'weber' }).mssim
  return { psnr, ssim: s }
}

console.log(`width ${width ?? 'full'}, quality ${quality}, effort ${effort}${options.length ? `, ${options.join(' ')}` : ''}`)
console.log('file | size | encoder | bytes | ms | wasm MiB | PSNR | SSIM')
for (const file of files) {
  let pipe = sharp(file).rotate()
  if (width) pipe = pipe.resize({ width, kernel: 'lanczos3' })
  const { data, info } = await pipe.ensureAlpha().raw().toBuffer({ resolveWithObject: true })
  const rgba = new Uint8Array(data.buffer, data.byteOffset, data.length)
  for (const [name, run] of [['ours', ours], ['jsquash', jsquash]]) {
    if (only && only !== name) continue
    const r = await run(rgba, info.width, info.height)
    const q = await closeness(r.out, rgba, info.width, info.height)
    console.log(`${file.split('/').pop()} | ${info.width}x${info.height} | ${name} | ${r.out.length} | ${r.ms.toFixed(0)} | ${MiB(r.memory)} | ${q.psnr.toFixed(2)} | ${q.ssim.toFixed(4)}`)
  }
}
