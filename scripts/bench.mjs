#!/usr/bin/env node
// imgedge against native sharp (libvips): time, output bytes, perceptual quality, memory, cold start and
// throughput, measured in one run on this machine, written to docs/results/benchmarks.md.
//
//   npm run bench                    # the full run (about 20-30 minutes on 2 busy cores); writes the doc
//   npm run bench -- --quick         # a subset, under two minutes; also writes the doc (says "quick")
//   npm run bench -- --only jpeg:1   # only the timing cases whose id contains one of these strings
//   npm run bench -- --report-only   # rewrite the doc from the last run's .cache/bench-results.json
//
// (without npm: node_modules/.bin/node scripts/bench.mjs ...; needs Node >= 22 and Linux for memory)
//
// The worker runs in `wrangler dev` (scripts/lib/devserver.mjs) on 127.0.0.1, started from a copy of
// src/, wasm/, public/ and wrangler.toml taken when the run starts (so edits made meanwhile neither
// reload nor change the measured code), with rate limiting off and the pixel limits lifted. The memory
// budget stays at its default: it also decides how a JPEG is converted (planConversion: one pass,
// DCT scale, MozJPEG or libjpeg-turbo), so lifting it would measure routes the API does not take.
// Conversions it refuses show as 422 operation_too_large (docs/results/memory.md measures them with the budget
// lifted). sharp runs in this process with the same settings.
//
// Options:
//   --quick            fewer cases and runs, 1 MP photo for matched quality, no effort sweep, 2 s loads
//   --runs N           timed runs per case and side (default: full 5 at 1 MP and 3 above; quick 2)
//   --only LIST        comma-separated substrings of case ids (e.g. jpeg:1>webp,12); skips the other phases
//                      unless --all-phases is given
//   --all-phases       with --only: still run matched quality, cold start, throughput, (full) sweep
//   --merge            with --only: put the cases measured (and, for PNG output, their lossless rows) into
//                      the last run's .cache/bench-results.json in place of the old ones, and rewrite the doc
//   --no-docs          print and save JSON only, leave docs/results/benchmarks.md alone
//   --report-only      only rewrite docs/results/benchmarks.md (and the chart) from .cache/bench-results.json
//   --explore          only the experiments in Node (MozJPEG settings, V8 tiering; part of the full run),
//                      merged into the last run's .cache/bench-results.json
//   --burst            only the burst phase (a page's first view against fresh workers under the default limits: 24
//                      distinct 2 MP JPEGs at once from R2 and from an origin, one variant 30 times at once, six 12 MP
//                      conversions with QUEUE_TIMEOUT_MS=3000 then small ones 4, 8, 12 s later; workerd's RSS);
//                      prints its goals and exits 1 when one is not met; saved beside the last run's results
//   --delivery         only the delivery phase (GET /img: misses, cache hits and 304s at 1 and 16 clients; part of
//                      every full and quick run), merged into the last run's .cache/bench-results.json
//   --smart            only the smarter-compression phase (quality=auto against the default quality at 1 and 12 MP,
//                      palette PNG against sharp's, max_bytes; part of every full and quick run), merged into the
//                      last run's .cache/bench-results.json
//   --palette          only the smarter-compression phase's palette PNG rows, merged into the last run's results in
//                      place of its palette rows (the quality=auto and max_bytes rows stay)
//   --animation        only the animation phase (animated GIFs and WebPs to animated WebP against sharp: bytes, PSNR
//                      of every frame, delays and loop count, time per frame; part of every full and quick run), merged
//                      into the last run's .cache/bench-results.json
//   --steady           only the sustained-traffic memory check (npm run memory:steady -- --rounds 20: 20 rounds of 12
//                      clients x 20 s against imgedge and the control Worker, about 16 minutes; --quick 12 rounds of
//                      10 s judged on the last 6): prints the per-round table and a PASS/FAIL line (the last rounds
//                      within 10 MiB of each other, growth under 40 MiB over the control's), exits 1 on FAIL; writes
//                      .cache/bench-steady.json, not the doc
//   --corpus DIR       photos to make inputs from (default ../shared/corpus/photos; synthesised without)
//   --timeout S        per-request timeout in seconds (default 300)

import { execFileSync, fork } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { killStarted, memoryOf, parseServerTiming, removeTempDir, resetPeak, snapshotTree as snapshotOf, startWorker, tempDir, workerdPackageVersion, workerdVersion } from './lib/devserver.mjs'
import { SIZES, createInputs } from './lib/bench-inputs.mjs'
import { animations } from './lib/animations.mjs'
import { SETTINGS_MAPPING, encodeWith, loadSharp, sharpConvert, sharpSteps } from './lib/bench-sharp.mjs'
import { createScorer, matchQuality } from './lib/bench-quality.mjs'
import { dur, fmt, kib, max, median, min, ms, pct, ratio, ratioChartSvg, spread, table } from './lib/bench-report.mjs'
import { MOZJPEG_VARIANTS, NATIVE_JPEG_VARIANTS, exploreMozjpeg, exploreNativeJpeg, exploreTiering } from './lib/bench-explore.mjs'
import { burstGoals, burstPhase, burstSection, writeBurstDoc } from './lib/bench-burst.mjs'
import { deliveryPhase, deliveryTable } from './lib/bench-delivery.mjs'
import { smartPhase, smartSection } from './lib/bench-smart.mjs'
import { animationPhase, animationSection, animationTargets } from './lib/bench-animation.mjs'
import { steadyCheck } from './lib/steady-rounds.mjs'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const CACHE = path.join(ROOT, '.cache')
const RESULTS = path.join(CACHE, 'bench-results.json')
const DOC = path.join(ROOT, 'docs', 'results', 'benchmarks.md')
const CHART = path.join(ROOT, 'docs', 'results', 'benchmarks-time.svg')
const CHART_PNG = path.join(ROOT, 'docs', 'results', 'benchmarks-time.png')
const NOTES_MARKER = '<!-- Everything below this line is written by hand and kept when the script rewrites this file. -->'
const require = createRequire(path.join(ROOT, 'package.json'))
const sleep = (t) => new Promise((resolve) => setTimeout(resolve, t))
const MiB = 1024 * 1024
/** Lift every configurable limit so that 12 MP cases run; rate limiting off. */
const VARS = { RATE_LIMIT_ANON_PER_MINUTE: '0', MAX_INPUT_PIXELS: '40000000', MAX_OUTPUT_PIXELS: '40000000', MAX_INPUT_BYTES: '104857600' }
const ISOLATE_MIB = 128

// ---------------------------------------------------------------------------------------------------
// Command line

function parseArgs(argv) {
  const args = { quick: false, runs: null, only: null, allPhases: false, merge: false, docs: true, reportOnly: false, explore: false, delivery: false, smart: false, palette: false, animation: false, steady: false, corpus: path.resolve(ROOT, '..', 'shared', 'corpus', 'photos'), timeout: 300 }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    const [name, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined]
    const value = () => inline ?? argv[++i] ?? fail(`${name} needs a value`)
    switch (name) {
      case '--quick': args.quick = true; break
      case '--runs': args.runs = Number(value()); break
      case '--only': args.only = value().split(',').map((s) => s.trim()).filter(Boolean); break
      case '--all-phases': args.allPhases = true; break
      case '--merge': args.merge = true; break
      case '--no-docs': args.docs = false; break
      case '--report-only': args.reportOnly = true; break
      case '--explore': args.explore = true; break
      case '--delivery': args.delivery = true; break
      case '--burst': args.burst = true; break
      case '--smart': args.smart = true; break
      case '--palette': args.smart = true; args.palette = true; break
      case '--animation': args.animation = true; break
      case '--steady': args.steady = true; break
      case '--corpus': args.corpus = path.resolve(value()); break
      case '--timeout': args.timeout = Number(value()); break
      case '-h': case '--help': {
        const lines = fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(1)
        console.log(lines.slice(0, lines.findIndex((l) => !l.startsWith('//'))).map((l) => l.slice(3)).join('\n'))
        process.exit(0)
      }
      default: fail(`unknown argument ${arg} (see --help)`)
    }
  }
  if (args.runs !== null && !(Number.isInteger(args.runs) && args.runs >= 1)) fail('--runs must be a positive integer')
  if (args.merge && (!args.only || args.allPhases)) fail('--merge needs --only (and no --all-phases)')
  if ([args.delivery, args.smart, args.animation, args.steady].filter(Boolean).length > 1) fail('--delivery, --smart, --animation and --steady each run alone: one at a time')
  return args
}

function fail(message) {
  console.error(`bench: ${message}`)
  process.exit(2)
}

const log = (...a) => console.log(...a)

// ---------------------------------------------------------------------------------------------------
// Cases

/** A timing case: input key (see bench-inputs.mjs), output format, extra query. */
function makeCase(input, output, query = {}) {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)])).toString()
  return { id: `${input}>${output}${qs ? `@${qs}` : ''}`, input, output, query, qs }
}

function allCases(quick) {
  if (quick) {
    return [
      makeCase('jpeg:1', 'webp'), makeCase('jpeg:1', 'jpeg'), makeCase('jpeg:1', 'jpeg', { effort: 2 }), makeCase('jpeg:1', 'avif'),
      makeCase('jpeg:12', 'jpeg'), makeCase('jpeg:12', 'jpeg', { effort: 2 }), makeCase('jpeg:12', 'webp'),
      makeCase('jpeg:12', 'webp', { width: 1600 }),
      makeCase('screenshot', 'png'),
    ]
  }
  const cases = []
  for (const mp of [1, 4, 12]) for (const out of ['webp', 'jpeg', 'avif', 'png']) cases.push(makeCase(`jpeg:${mp}`, out))
  // JPEG at effort 2: libjpeg-turbo baseline with optimised Huffman tables, sharp's default JPEG settings.
  for (const mp of [1, 4, 12]) cases.push(makeCase(`jpeg:${mp}`, 'jpeg', { effort: 2 }))
  cases.push(makeCase('jpeg:1', 'webp', { width: 800 }), makeCase('jpeg:1', 'jpeg', { width: 800 }))
  cases.push(makeCase('jpeg:4', 'webp', { width: 1200 }), makeCase('jpeg:4', 'jpeg', { width: 1200 }))
  cases.push(makeCase('jpeg:12', 'webp', { width: 1600 }), makeCase('jpeg:12', 'jpeg', { width: 1600 }), makeCase('jpeg:12', 'avif', { width: 1600 }))
  cases.push(makeCase('webp:1', 'webp'), makeCase('webp:1', 'jpeg'), makeCase('webp:1', 'avif'), makeCase('webp:12', 'webp'))
  cases.push(makeCase('png:1', 'webp'), makeCase('png:1', 'jpeg'))
  cases.push(makeCase('screenshot', 'png'), makeCase('screenshot', 'webp'), makeCase('graphic', 'png'), makeCase('graphic', 'webp'), makeCase('alpha', 'png'), makeCase('alpha', 'webp'))
  return cases
}

/** Cases measured each in a fresh wrangler dev: cold start (first request) and peak memory. */
function coldCases(quick) {
  if (quick) return [makeCase('jpeg:1', 'webp'), makeCase('jpeg:1', 'jpeg')]
  const cases = []
  for (const mp of [1, 4, 12]) for (const out of ['webp', 'jpeg', 'avif', 'png']) cases.push(makeCase(`jpeg:${mp}`, out))
  return cases
}

const mpOf = (input) => (input.width * input.height) / 1e6

// ---------------------------------------------------------------------------------------------------
// The worker

/** Copy what wrangler dev builds from into a temporary folder, so other people's edits do not reload it. */
const snapshotTree = () => snapshotOf(ROOT, 'imgedge-bench-tree-')

async function startServer(tree) {
  const readyPath = fs.existsSync(path.join(tree, 'public', 'favicon.svg')) ? '/favicon.svg' : '/api/health'
  const server = await startWorker({ root: ROOT, cwd: tree, vars: VARS, readyPath, prefix: 'imgedge-bench-', retryPauseMs: 3000, log })
  server.readyPath = readyPath
  server.readyLogLength = server.log.length
  return server
}

/** One POST /api/compress, timed from the request's start to the answer's last byte; optionally its peak RSS growth. */
async function post(server, input, query, { timeoutMs, memory = false }) {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)])).toString()
  const pid = server.worker.pid
  let before = null
  if (memory) {
    resetPeak(pid)
    before = memoryOf(pid)
  }
  const t0 = performance.now()
  const response = await fetch(`${server.base}/api/compress?${qs}`, { method: 'POST', headers: { 'Content-Type': input.mime }, body: input.body, signal: AbortSignal.timeout(timeoutMs) })
  const bytes = new Uint8Array(await response.arrayBuffer())
  const wall = performance.now() - t0
  const after = memory ? memoryOf(pid) : null
  let problem = null
  if (!response.ok) {
    try {
      problem = JSON.parse(new TextDecoder().decode(bytes))
    } catch {
      problem = { detail: new TextDecoder().decode(bytes).slice(0, 200) }
    }
  }
  const estimate = /^\s*([\d.]+)\s*MiB/i.exec(response.headers.get('x-memory-estimate') ?? '')
  return {
    status: response.status,
    code: problem?.code ?? null,
    detail: problem?.detail ?? null,
    ms: wall,
    timings: parseServerTiming(response.headers.get('server-timing')),
    effort: response.headers.has('x-effort') ? Number(response.headers.get('x-effort')) : null,
    quality: response.headers.has('x-quality') ? Number(response.headers.get('x-quality')) : null,
    score: response.headers.has('x-score') ? Number(response.headers.get('x-score')) : null,
    colors: response.headers.has('x-palette-colors') ? Number(response.headers.get('x-palette-colors')) : null,
    frames: response.headers.has('x-frames') ? Number(response.headers.get('x-frames')) : null,
    estimateMiB: estimate ? Number(estimate[1]) : problem?.estimateMiB ?? null,
    width: Number(response.headers.get('x-output-width')) || null,
    height: Number(response.headers.get('x-output-height')) || null,
    bytes: response.ok ? bytes : null,
    growthMiB: after && before ? (after.hwm - before.rss) / 1024 : null,
  }
}

function reloaded(server) {
  return /Reloading local server|Local server updated/.test(server.log.slice(server.readyLogLength))
}

/** The default MEMORY_BUDGET_MIB (src/env.ts), to say which measured cases the API refuses by default. */
function defaultBudgetMiB(tree) {
  const text = fs.readFileSync(path.join(tree, 'src', 'env.ts'), 'utf8')
  const m = /MEMORY_BUDGET_MIB:\s*positiveInt\.default\(\s*([\d_]+)\s*\)/.exec(text)
  return m ? Number(m[1].replace(/_/g, '')) : null
}

// ---------------------------------------------------------------------------------------------------
// Phases

async function timingPhase(ctx, cases) {
  const { server, inputs, sharp, scorer, args } = ctx
  const results = []
  const warmedWorker = new Set()
  const warmedSharp = new Set()
  for (const c of cases) {
    const input = await inputs.get(c.input)
    if (!input) {
      log(`- ${c.id}: input not available, skipped`)
      continue
    }
    const mp = mpOf(input)
    // Quick: 2 runs at 1 MP, 1 run of the slow cases (AVIF, above 1.5 MP input); full: 5 at 1 MP, 3 above.
    const runs = args.runs ?? (args.quick ? (mp > 1.5 || c.output === 'avif' ? 1 : 2) : mp > 1.5 ? 3 : 5)
    const query = { format: c.output, ...c.query }
    const kind = `${input.format}>${c.output}`
    const r = { ...c, inputLabel: input.label, inputBytes: input.bytes, inputWidth: input.width, inputHeight: input.height, mp, runs, worker: { ms: [], timings: [], growthMiB: [] }, sharp: { ms: [], steps: [] }, pairs: [] }
    log(`- ${c.id} (${input.width}×${input.height}, ${kib(input.bytes)}): ${runs} runs`)

    // Warm-up: once per kind of conversion (and always in the full run); it also learns X-Effort.
    let probe = null
    if (!args.quick || !warmedWorker.has(kind)) {
      probe = await post(server, input, query, { timeoutMs: ctx.timeoutMs, memory: true })
      warmedWorker.add(kind)
      if (probe.status === 200) r.worker.growthMiB.push(probe.growthMiB)
    }
    if (probe && probe.status !== 200) {
      r.status = `${probe.status} ${probe.code ?? ''}`.trim()
      r.detail = probe.detail
      log(`  worker answered ${r.status}: ${probe.detail}`)
      results.push(r)
      continue
    }
    let last = null
    let settings = null
    let sharpOut = null
    let sharpMozOut = null
    for (let i = 0; i < runs; i++) {
      const w = await post(server, input, query, { timeoutMs: ctx.timeoutMs, memory: true })
      if (w.status !== 200) {
        r.status = `${w.status} ${w.code ?? ''}`.trim()
        r.detail = w.detail
        break
      }
      last = w
      r.worker.ms.push(w.ms)
      r.worker.timings.push(w.timings)
      r.worker.growthMiB.push(w.growthMiB)
      settings ??= { effort: w.effort ?? 4 }
      if (!warmedSharp.has(kind)) {
        await sharpConvert(sharp, input.body, c.output, c.query, settings)
        warmedSharp.add(kind)
      }
      const s = await sharpConvert(sharp, input.body, c.output, c.query, settings)
      r.sharp.ms.push(s.ms)
      r.pairs.push(w.ms / s.ms)
      sharpOut = s.bytes
      // MozJPEG's trellis (effort 3 and up) against sharp's MozJPEG (`mozjpeg: true`), same quality, same run.
      if (c.output === 'jpeg' && w.effort >= 3) {
        const m = await sharpConvert(sharp, input.body, c.output, c.query, { ...settings, variant: 'mozjpeg' })
        r.sharpMoz ??= { ms: [], pairs: [] }
        r.sharpMoz.ms.push(m.ms)
        r.sharpMoz.pairs.push(w.ms / m.ms)
        sharpMozOut = m.bytes
      }
    }
    if (!last) {
      log(`  worker answered ${r.status}: ${r.detail}`)
      results.push(r)
      continue
    }
    r.status = 'ok'
    r.effort = last.effort
    r.sharpEffort = c.output === 'avif' ? Math.max(0, last.effort - 1) : c.output === 'webp' ? Math.min(6, last.effort) : null
    r.estimateMiB = last.estimateMiB
    r.outWidth = last.width
    r.outHeight = last.height
    r.worker.bytes = last.bytes.byteLength
    r.sharp.bytes = sharpOut.byteLength
    const sharpMeta = await sharp(sharpOut).metadata()
    r.sharp.width = sharpMeta.width
    r.sharp.height = sharpMeta.height
    // sharp's steps one by one (fewer runs: they are only for the split).
    const stepRuns = args.quick ? (mp > 1.5 ? 0 : 1) : 2
    for (let i = 0; i < stepRuns; i++) r.sharp.steps.push(await sharpSteps(sharp, input.body, c.output, c.query, settings, { width: last.width, height: last.height }))
    // Quality: SSIM of both outputs (lossless formats: exact pixels).
    const scoreUpTo = 13
    if (c.output === 'png' && !c.qs) {
      r.worker.identical = await scorer.identical(input.body, last.bytes)
      r.sharp.identical = await scorer.identical(input.body, sharpOut)
    } else if (mp <= scoreUpTo) {
      const ref = await scorer.reference(input.body, c.qs ? { width: last.width, height: last.height } : null)
      const ws = await scorer.score(ref, last.bytes)
      const ss = await scorer.score(ref, sharpOut)
      r.worker.ssim = ws.ssim
      r.worker.ssimY = ws.y
      r.sharp.ssim = ss.ssim
      r.sharp.ssimY = ss.y
      r.sharp.resizedForScore = ss.resized
      if (r.sharpMoz) r.sharpMoz.ssim = (await scorer.score(ref, sharpMozOut)).ssim
    }
    if (r.sharpMoz) r.sharpMoz.bytes = sharpMozOut.byteLength
    if (reloaded(server)) r.reloaded = true
    log(`  worker ${spread(r.worker.ms)} ms, sharp ${spread(r.sharp.ms)} ms, ratio ${ratio(median(r.pairs))}; ${kib(r.worker.bytes)} vs ${kib(r.sharp.bytes)}${r.worker.ssim ? `; SSIM ${r.worker.ssim.toFixed(4)} vs ${r.sharp.ssim.toFixed(4)}` : ''}`)
    results.push(r)
  }
  return results
}

/** PNG: the worker's highest effort too, and sharp's default, for the lossless table. */
async function losslessPhase(ctx, keys, timing) {
  const { server, inputs, sharp } = ctx
  const rows = []
  for (const key of keys) {
    const input = await inputs.get(key)
    if (!input) continue
    const row = { input: key, label: input.label, width: input.width, height: input.height, inputBytes: input.bytes, worker: {}, sharp: {} }
    // The timing case of the same conversion already has the default effort and sharp's best.
    const done = timing.find((t) => t.id === `${key}>png` && t.status === 'ok' && t.worker.identical !== undefined)
    if (done) {
      row.worker[4] = { bytes: done.worker.bytes, ms: done.worker.ms, effort: done.effort, identical: done.worker.identical }
      row.sharp.same = { bytes: done.sharp.bytes, ms: done.sharp.ms, identical: done.sharp.identical }
    }
    for (const effort of ctx.args.quick ? [4] : [4, 9]) {
      if (row.worker[effort]) continue
      const times = []
      let out = null
      for (let i = 0; i < (ctx.args.quick ? 1 : 2); i++) {
        const w = await post(server, input, { format: 'png', effort }, { timeoutMs: ctx.timeoutMs })
        if (w.status !== 200) break
        times.push(w.ms)
        out = w
      }
      if (out) row.worker[effort] = { bytes: out.bytes.byteLength, ms: times, effort: out.effort, identical: await ctx.scorer.identical(input.body, out.bytes) }
    }
    for (const variant of ['default', 'level9', 'same']) {
      if (row.sharp[variant]) continue
      const times = []
      let out = null
      for (let i = 0; i < (ctx.args.quick ? 1 : 2); i++) {
        const s = await sharpConvert(sharp, input.body, 'png', {}, { variant })
        times.push(s.ms)
        out = s.bytes
      }
      row.sharp[variant] = { bytes: out.byteLength, ms: times, identical: await ctx.scorer.identical(input.body, out) }
    }
    row.sharp.best = ['default', 'level9', 'same'].map((v) => ({ ...row.sharp[v], variant: v })).reduce((a, b) => (b.bytes < a.bytes ? b : a))
    log(`- ${key}: worker ${kib(row.worker[4]?.bytes)} (effort 4)${row.worker[9] ? `, ${kib(row.worker[9].bytes)} (effort 9)` : ''}; sharp ${kib(row.sharp.same.bytes)} (level 9 adaptive) / ${kib(row.sharp.level9.bytes)} (level 9) / ${kib(row.sharp.default.bytes)} (default)`)
    rows.push(row)
  }
  return rows
}

/** Bytes needed to reach the SSIM of sharp's defaults, per format and photo. */
async function matchedPhase(ctx) {
  const { server, inputs, sharp, scorer, args } = ctx
  const photos = await inputs.photoSet({ limit: args.quick ? 1 : 4 })
  const rows = []
  for (const photo of photos) {
    photo.body ??= fs.readFileSync(photo.file)
    const ref = await scorer.reference(photo.body, null)
    for (const format of ['jpeg', 'webp', 'avif']) {
      if (args.quick && format === 'avif' && !args.quickAvif) continue
      log(`- ${photo.name} → ${format}`)
      // sharp's defaults: the target.
      const sharpTimes = []
      let sharpDefault = null
      for (let i = 0; i < (format === 'avif' ? 2 : 3); i++) {
        const t0 = performance.now()
        sharpDefault = await encodeWith(sharp(photo.body), format, { variant: 'default' }).toBuffer()
        sharpTimes.push(performance.now() - t0)
      }
      const target = (await scorer.score(ref, sharpDefault)).ssim
      const row = { photo: photo.name, width: photo.width, height: photo.height, format, target, sharp: { bytes: sharpDefault.byteLength, ms: sharpTimes } }
      const workerEncode = async (q) => {
        const w = await post(server, { ...photo, mime: 'image/png' }, { format, quality: q }, { timeoutMs: ctx.timeoutMs })
        if (w.status !== 200) throw new Error(`worker answered ${w.status} ${w.code}`)
        return { bytes: w.bytes.byteLength, ssim: (await scorer.score(ref, w.bytes)).ssim, ms: w.ms, out: w.bytes }
      }
      const defaults = { jpeg: 80, webp: 80, avif: 50 }
      // Shortcut: identical bytes at the same quality mean identical bytes at any target.
      if (format === 'webp') {
        const w = await workerEncode(80)
        if (Buffer.from(w.out).equals(sharpDefault)) {
          row.worker = { q: 80, bytes: w.bytes, ssim: w.ssim, interpolated: w.bytes, identical: true, ms: [w.ms] }
          log(`    identical to sharp's output at quality 80: ${w.bytes} bytes`)
          rows.push(row)
          continue
        }
      }
      const m = await matchQuality(workerEncode, { target, start: defaults[format], maxSteps: args.quick ? 6 : 7, log })
      row.worker = m.pass ? { q: m.pass.q, bytes: m.pass.bytes, ssim: m.pass.ssim, interpolated: m.interpolated, failQ: m.fail?.q ?? null, steps: m.steps, exact: m.exact, ms: [m.pass.ms] } : { unreachable: true, steps: m.steps }
      // Time at the matched quality (the search timed it once; add runs for a median).
      if (m.pass && format === 'avif') {
        for (let i = 0; i < (args.quick ? 1 : 2); i++) row.worker.ms.push((await post(server, { ...photo, mime: 'image/png' }, { format, quality: m.pass.q }, { timeoutMs: ctx.timeoutMs })).ms)
      }
      if (format === 'jpeg' && !args.quick) {
        const moz = await matchQuality(
          async (q) => {
            const out = await encodeWith(sharp(photo.body), 'jpeg', { quality: q, variant: 'mozjpeg' }).toBuffer()
            return { bytes: out.byteLength, ssim: (await scorer.score(ref, out)).ssim, ms: 0 }
          },
          { target, start: 80, maxSteps: 7 },
        )
        row.sharpMozjpeg = moz.pass ? { q: moz.pass.q, bytes: moz.pass.bytes, interpolated: moz.interpolated } : null
      }
      log(`    target SSIM ${target.toFixed(5)}: sharp ${sharpDefault.byteLength} bytes; worker q${row.worker.q ?? '?'} ${row.worker.bytes ?? '–'} bytes (${ratio(row.worker.bytes / sharpDefault.byteLength)})`)
      rows.push(row)
    }
  }
  return rows
}

/** Effort scale through the API: time, bytes and SSIM per effort step (full run). */
async function sweepPhase(ctx) {
  const { server, inputs, scorer } = ctx
  const rows = []
  const plan = [
    ['jpeg:1', 'jpeg', [0, 2, 3, 4, 6, 8, 9]],
    ['jpeg:1', 'webp', [0, 1, 2, 3, 4, 5, 6]],
    ['jpeg:1', 'avif', [1, 2, 3, 4, 5, 6]],
    ['screenshot', 'png', [0, 1, 2, 4, 6, 8, 9]],
  ]
  for (const [key, format, efforts] of plan) {
    const input = await inputs.get(key)
    const ref = format === 'png' ? null : await scorer.reference(input.body, null)
    for (const effort of efforts) {
      const times = []
      let out = null
      for (let i = 0; i < 2; i++) {
        const w = await post(server, input, { format, effort }, { timeoutMs: ctx.timeoutMs })
        if (w.status !== 200) break
        times.push(w.ms)
        out = w
      }
      if (!out) continue
      const row = { input: key, format, effort, used: out.effort, ms: times, encode: out.timings.encode, bytes: out.bytes.byteLength, ssim: ref ? (await scorer.score(ref, out.bytes)).ssim : null }
      log(`- ${key} → ${format} effort ${effort}: ${spread(times)} ms, ${kib(row.bytes)}${row.ssim ? `, SSIM ${row.ssim.toFixed(4)}` : ''}`)
      rows.push(row)
    }
  }
  return rows
}

/** Wait until the worker's conversion queue (GET /api/health `queue`) is empty, at most 60 s. */
async function drain(server) {
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    try {
      const health = await (await fetch(`${server.base}/api/health`, { signal: AbortSignal.timeout(5000) })).json()
      if (!health.queue) return
    } catch {
      /* busy: try again */
    }
    await sleep(250)
  }
}

async function throughputPhase(ctx) {
  const autocannon = require('autocannon')
  const { server, inputs, args } = ctx
  const input = await inputs.get('jpeg:1')
  // A fixed number of requests per level rather than a duration: the worker serves one conversion at a
  // time, and a duration would leave queued requests behind that slow the next level down.
  const amountFor = (connections) => (args.quick ? Math.max(3, connections) : Math.max(12, connections * 3))
  const rows = []
  const child = fork(path.join(ROOT, 'scripts', 'lib', 'bench-sharp-server.mjs'), [ROOT], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  try {
    const { port } = await new Promise((resolve, reject) => {
      child.once('message', resolve)
      child.once('exit', (code) => reject(new Error(`sharp server exited (${code})`)))
    })
    const targets = [
      ['worker', `${server.base}/api/compress?format=webp`],
      ['sharp', `http://127.0.0.1:${port}/?format=webp`],
    ]
    for (const connections of [1, 4, 16]) {
      for (const [side, url] of targets) {
        const t0 = performance.now()
        const result = await autocannon({ url, method: 'POST', headers: { 'content-type': 'image/jpeg' }, body: input.body, connections, amount: amountFor(connections), timeout: 120 })
        const seconds = (performance.now() - t0) / 1000
        const ok = result['2xx'] ?? 0
        const row = { side, connections, requests: amountFor(connections), seconds, ok, rps: ok / seconds, p50: result.latency.p50, p97_5: result.latency.p97_5, max: result.latency.max, non2xx: result.non2xx, errors: result.errors, timeouts: result.timeouts }
        log(`- ${side}, ${connections} connections: ${row.rps.toFixed(2)} req/s, p50 ${row.p50} ms, p97.5 ${row.p97_5} ms${row.non2xx || row.errors ? `, ${row.non2xx} non-2xx, ${row.errors} errors` : ''}`)
        rows.push(row)
        // Let queued work drain before the next load (autocannon leaves in-flight requests behind).
        if (side === 'worker') await drain(server)
        else await sleep(500)
      }
    }
  } finally {
    child.kill('SIGTERM')
  }
  return rows
}

/** First request in a fresh isolate against later identical requests; and that first request's peak memory. */
async function coldCase(ctx, server, c) {
  const input = await ctx.inputs.get(c.input)
  const query = { format: c.output, ...c.query }
  // Let start-up work (wrangler, the proxy, the asset worker) settle, so it is not counted as the isolate's.
  await sleep(1500)
  const first = await post(server, input, query, { timeoutMs: ctx.timeoutMs, memory: true })
  const row = { ...c, mp: mpOf(input), status: first.status, code: first.code, firstMs: first.ms, firstTimings: first.timings, growthMiB: first.growthMiB, estimateMiB: first.estimateMiB, effort: first.effort, warmMs: [], warmTimings: [] }
  if (first.status === 200) {
    const warmRuns = row.mp <= 1.5 ? 3 : 1
    for (let i = 0; i < warmRuns; i++) {
      const w = await post(server, input, query, { timeoutMs: ctx.timeoutMs })
      row.warmMs.push(w.ms)
      row.warmTimings.push(w.timings)
    }
  }
  row.reloaded = reloaded(server)
  log(`- ${c.id}: first ${ms(row.firstMs)} ms, then ${spread(row.warmMs)} ms (+${ms(row.firstMs - median(row.warmMs))} ms); peak growth ${fmt(row.growthMiB, 1)} MiB`)
  return row
}

async function explorePhase({ sharp, args, corpus, inputs }) {
  const scorer = createScorer(ROOT, sharp)
  const corpusDir = fs.existsSync(corpus) ? corpus : null
  inputs ??= createInputs({ root: ROOT, corpusDir, log: (m) => log(`  ${m}`) })
  log('experiment: MozJPEG settings at matched SSIM (Node, the worker\'s wasm):')
  const photos = await inputs.photoSet({ limit: 4 })
  const mozjpeg = await exploreMozjpeg({ root: ROOT, sharp, scorer, photos, log })
  log('experiment: first-call cost and V8 tiers (Node, the worker\'s wasm):')
  const jpeg1 = await inputs.get('jpeg:1')
  const tiering = await exploreTiering({ root: ROOT, input: jpeg1.file, reps: 2, log })
  log('experiment: what MozJPEG costs natively (sharp, encode from raw pixels):')
  const jpeg12 = await inputs.get('jpeg:12')
  for (const i of [jpeg1, jpeg12]) i.body ??= fs.readFileSync(i.file)
  const nativeJpeg = await exploreNativeJpeg({ sharp, inputs: [jpeg1, jpeg12], log })
  return { date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), mozjpeg, tiering, nativeJpeg }
}

// ---------------------------------------------------------------------------------------------------
// Environment

function versions(server) {
  const pkg = (name) => {
    try {
      return JSON.parse(fs.readFileSync(require.resolve(`${name}/package.json`), 'utf8')).version
    } catch {
      return 'unknown'
    }
  }
  const sharp = loadSharp(ROOT)
  return {
    node: process.version,
    wrangler: pkg('wrangler'),
    workerd: server ? workerdVersion(server.worker.cmdline[0]) : null,
    sharp: sharp.versions.sharp,
    libvips: sharp.versions.vips,
    sharpLibs: { mozjpeg: sharp.versions.mozjpeg, webp: sharp.versions.webp, aom: sharp.versions.aom, heif: sharp.versions.heif, png: sharp.versions.png, zlib: sharp.versions['zlib-ng'] },
    sharpConcurrency: sharp.concurrency(),
    sharpSimd: sharp.simd(),
    jsquash: Object.fromEntries(['jpeg', 'webp', 'avif', 'png', 'oxipng', 'resize'].map((n) => [n, pkg(`@jsquash/${n}`)])),
    ssim: pkg('ssim.js'),
    autocannon: pkg('autocannon'),
  }
}

function machine() {
  const git = (...a) => {
    try {
      return execFileSync('git', a, { cwd: ROOT, encoding: 'utf8' }).trim()
    } catch {
      return null
    }
  }
  const dirty = git('status', '--porcelain', '--', 'src', 'wasm', 'wrangler.toml')
  return {
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.availableParallelism?.() ?? os.cpus().length,
    memoryGiB: os.totalmem() / 1024 ** 3,
    kernel: `${os.type()} ${os.release()}`,
    commit: git('rev-parse', '--short', 'HEAD'),
    dirty: Boolean(dirty),
  }
}

// ---------------------------------------------------------------------------------------------------
// Report

const caseLabel = (r) => {
  const input = r.inputLabel ?? r.input
  const size = r.mp ? `${r.mp.toFixed(1)} MP` : ''
  const resize = r.qs ? `, ${r.qs.replace(/&/g, ', ')}${r.outWidth ? ` → ${r.outWidth}×${r.outHeight}` : ''}` : ''
  return `${input} ${size} → ${r.output.toUpperCase()}${resize}`
}
const shortLabel = (r) =>
  `${r.input.replace(/:(\d+)$/, ' $1 MP').replace(/^jpeg/, 'JPEG').replace(/^webp/, 'WebP').replace(/^png/, 'PNG')} → ${r.output.toUpperCase()}${r.query.width ? ` @${r.query.width}w` : ''}${r.query.effort !== undefined ? ` e${r.query.effort}` : ''}`

function stepMedians(list) {
  return ['decode', 'transform', 'encode'].map((k) => median(list.map((t) => t[k])))
}

/**
 * The worker's time inside its Server-Timing steps against sharp's, per pair of runs, and the worker's time outside
 * them (HTTP through wrangler's proxy, reading the body, sniffing, planning, answering): what a conversion costs beside
 * what a request costs, most of which is `wrangler dev`'s and none of which sharp, called in the benchmark's own
 * process, pays. Runs without Server-Timing are left out; none left: null.
 */
function stepsAndRest(r) {
  const runs = r.worker.timings.map((t, i) => ({ steps: (t.decode ?? 0) + (t.transform ?? 0) + (t.encode ?? 0), ms: r.worker.ms[i], sharp: r.sharp.ms[i] })).filter((x) => x.steps > 0 && x.sharp > 0)
  if (!runs.length) return null
  return { ratios: runs.map((x) => x.steps / x.sharp), restMs: median(runs.map((x) => x.ms - x.steps)) }
}

/** A timing target's evidence: the median ratio of paired runs, their range, and both sides' median times. */
const pairedSummary = (pairs, workerMs, sharpMs) => `${ratio(median(pairs))} (paired runs ${ratio(min(pairs))}–${ratio(max(pairs))}); ${ms(median(workerMs))} vs ${ms(median(sharpMs))} ms`

function targetsOf(data) {
  const rows = []
  const byId = (id) => data.timing.find((r) => r.id === id && r.status === 'ok')
  for (const [id, label] of [
    ['jpeg:1>jpeg', 'JPEG → JPEG, 1 MP (effort 4: MozJPEG, trellis)'],
    ['jpeg:1>jpeg@effort=2', "JPEG → JPEG, 1 MP (effort 2: libjpeg-turbo, sharp's settings)"],
    ['jpeg:1>webp', 'JPEG → WebP, 1 MP'],
    ['jpeg:12>jpeg', 'JPEG → JPEG, 12 MP (effort 4: MozJPEG, trellis a row at a time)'],
    ['jpeg:12>jpeg@effort=2', "JPEG → JPEG, 12 MP (effort 2: libjpeg-turbo, sharp's settings)"],
    ['jpeg:12>webp', 'JPEG → WebP, 12 MP'],
  ]) {
    const r = byId(id)
    const v = r ? median(r.pairs) : null
    rows.push([`Whole-request time ≤ 1.3× sharp: ${label}`, v === null ? 'not measured' : v <= 1.3 ? 'met' : '**not met**', r ? pairedSummary(r.pairs, r.worker.ms, r.sharp.ms) : '–'])
  }
  // Issue 19: JPEG at sharp's own settings (effort 2: libjpeg-turbo's profile) within 1.5x of sharp.
  for (const mp of [1, 4, 12]) {
    const r = byId(`jpeg:${mp}>jpeg@effort=2`)
    const v = r ? median(r.pairs) : null
    const rest = r ? stepsAndRest(r) : null
    const inside = rest ? `; the worker's steps alone ${ratio(median(rest.ratios))}, ${ms(rest.restMs)} ms outside them` : ''
    rows.push([`JPEG → JPEG at sharp's settings (effort 2) ≤ 1.5× sharp, ${mp} MP`, v === null ? 'not measured' : v <= 1.5 ? 'met' : rest && median(rest.ratios) <= 1.5 ? '**not met** (met inside the steps)' : '**not met**', r ? `${pairedSummary(r.pairs, r.worker.ms, r.sharp.ms)}${inside}` : '–'])
  }
  // MozJPEG against MozJPEG: the default effort's JPEG against sharp's `mozjpeg: true`, same quality.
  for (const mp of [1, 12]) {
    const r = byId(`jpeg:${mp}>jpeg`)
    const m = r?.sharpMoz
    const v = m ? median(m.pairs) : null
    rows.push([`Default JPEG time ≤ 2× sharp with mozjpeg: true, ${mp} MP`, v === null ? 'not measured' : v <= 2 ? 'met' : '**not met**', m ? pairedSummary(m.pairs, r.worker.ms, m.ms) : '–'])
    const b = m ? r.worker.bytes / m.bytes : null
    const ssimOk = m?.ssim !== undefined && r.worker.ssim !== undefined ? r.worker.ssim >= m.ssim - 0.0001 : null
    rows.push([`Default JPEG bytes ≤ 1.05× sharp with mozjpeg: true at the same quality, SSIM no worse (within 0.0001), ${mp} MP`, b === null ? 'not measured' : b <= 1.05 && ssimOk !== false ? 'met' : '**not met**', m ? `${ratio(b)} (${kib(r.worker.bytes)} vs ${kib(m.bytes)})${ssimOk === null ? '' : `; SSIM ${r.worker.ssim.toFixed(5)} vs ${m.ssim.toFixed(5)}`}` : '–'])
  }
  // AVIF at the same output quality: the worker at the quality matching sharp's default SSIM, against sharp's default.
  const avif = data.matched.filter((m) => m.format === 'avif' && m.worker?.ms?.length)
  if (avif.length) {
    const ratios = avif.map((m) => median(m.worker.ms) / median(m.sharp.ms))
    const v = median(ratios)
    rows.push(['AVIF time ≤ 2× sharp at the same output quality (1 MP photos)', v <= 2 ? (max(ratios) <= 2 ? 'met' : 'met on the median') : '**not met**', `${ratio(v)} median over ${avif.length} photo(s) (${ratio(min(ratios))}–${ratio(max(ratios))}): worker at the quality that reaches the SSIM of sharp's default AVIF, against that default`])
  } else {
    const r = byId('jpeg:1>avif')
    const v = r ? median(r.pairs) : null
    rows.push(['AVIF time ≤ 2× sharp at the same output quality', v === null ? 'not measured' : v <= 2 ? 'met at the same settings' : '**not met** at the same settings', r ? `${ratio(v)} at the same nominal settings, 1 MP (matched-quality timing in the full run)` : '–'])
  }
  const need = { jpeg: 0.85, webp: 1, avif: 1 }
  for (const format of ['jpeg', 'webp', 'avif']) {
    const ms_ = data.matched.filter((m) => m.format === format && m.worker?.bytes)
    if (!ms_.length) {
      rows.push([`Bytes at matched SSIM ≤ ${need[format] === 1 ? "sharp's default" : '0.85× sharp'}: ${format.toUpperCase()}`, 'not measured', format === 'avif' ? 'matched AVIF runs in the full run' : '–'])
      continue
    }
    const rs = ms_.map((m) => m.worker.bytes / m.sharp.bytes)
    const worst = max(rs)
    rows.push([
      `Bytes at matched SSIM ${need[format] === 1 ? "≤ sharp's default" : '≥ 15 % smaller than sharp (libjpeg-turbo)'}: ${format.toUpperCase()}`,
      worst <= need[format] ? 'met' : median(rs) <= need[format] ? '**not met** on every photo (met on the median)' : '**not met**',
      `${ratio(median(rs))} median (${pct(median(rs))}), worst ${ratio(worst)} over ${rs.length} photo(s)`,
    ])
  }
  const png = data.lossless.filter((l) => l.worker[4] && l.sharp.same)
  if (png.length) {
    const rs = png.map((l) => Math.min(l.worker[4].bytes, l.worker[9]?.bytes ?? Infinity) / l.sharp.best.bytes)
    const rs4 = png.map((l) => l.worker[4].bytes / l.sharp.best.bytes)
    rows.push(["Lossless PNG ≥ 10 % smaller than sharp's best (smallest of level 9 with/without adaptive filtering and the default)", max(rs4) <= 0.9 ? 'met' : max(rs) <= 0.9 ? 'met only at effort 9' : '**not met**', `default effort: ${png.map((l, i) => `${l.input} ${ratio(rs4[i])}`).join(', ')}${png.some((l) => l.worker[9]) ? `; best effort: ${png.map((l, i) => `${l.input} ${ratio(rs[i])}`).join(', ')}` : ''}`])
  }
  for (const format of ['jpeg', 'webp']) {
    const c = data.cold.find((r) => r.input === 'jpeg:1' && r.output === format && r.status === 200)
    const added = c ? c.firstMs - median(c.warmMs) : null
    rows.push([`Cold start adds < 50 ms: JPEG → ${format.toUpperCase()}, 1 MP`, added === null ? 'not measured' : added < 50 ? 'met' : '**not met**', c ? `${sign(added)} (first ${dur(c.firstMs)}, then ${spread(c.warmMs)} ms)` : '–'])
  }
  const twelve = memoryRows(data).filter((m) => m.mp > 10 && m.growthMiB !== null)
  const refused12 = data.cold.filter((c) => c.input === 'jpeg:12' && c.status === 422).map((c) => c.output.toUpperCase())
  if (twelve.length) {
    const over = twelve.filter((m) => m.growthMiB > ISOLATE_MIB)
    const fromDoc = twelve.some((m) => !m.source.startsWith('this run'))
    const budget = data.meta.defaultBudgetMiB
    const verdict = (m) => (budget && m.estimateMiB !== null && m.estimateMiB !== undefined && m.estimateMiB > budget ? ' refused by default (422)' : '')
    const status = over.length ? `**not met** for ${over.map((m) => m.output.toUpperCase()).join(', ')}` : refused12.length ? `met where allowed; ${refused12.join(', ')} refused` : 'met'
    const refusedText = refused12.length ? `; ${refused12.join(', ')}: refused with 422 operation_too_large by the memory budget, never run over it` : ''
    rows.push([`12 MP photo with peak memory < ${ISOLATE_MIB} MiB, every output format`, status, `${twelve.map((m) => `${m.output.toUpperCase()} ${fmt(m.growthMiB, 0)} MiB${verdict(m)}`).join(', ')}${fromDoc ? ' (some from the last `npm run memory`)' : ''}${refusedText}`])
  }
  if (data.animation) rows.push(...animationTargets(data.animation))
  return rows
}

function render(data) {
  const { meta } = data
  const out = []
  const budget = meta.defaultBudgetMiB
  out.push('# Benchmarks: imgedge against sharp')
  out.push('')
  out.push(`Generated by \`scripts/bench.mjs\`; rerun it rather than editing the figures. Only the notes after the marker at the end are written by hand (the script keeps them).`)
  out.push('')
  out.push(table(['', ''], [
    ['command', `\`${meta.command}\``],
    ['mode', meta.quick ? '**quick** (`--quick`: fewer cases and runs; see the full run for every case)' : '**full**'],
    ['duration', `${fmt(meta.seconds / 60, 1)} min`],
    ['CPU', `${meta.machine.cpu}, ${meta.machine.cores} cores`],
    ['memory', `${fmt(meta.machine.memoryGiB, 1)} GiB`],
    ['kernel', meta.machine.kernel],
    ['load average (1 min) at start / end', `${fmt(meta.loadStart, 2)} / ${fmt(meta.loadEnd, 2)} (a shared machine: other test suites were running)`],
    ['Node', meta.versions.node],
    ['wrangler / workerd', `${meta.versions.wrangler} / ${workerdPackageVersion(ROOT)}`],
    ['imgedge codecs', `wasm/lean (MozJPEG 4.1.5, libwebp 1.5.0, libpng 1.6.39 with zlib 1.2.13, libdeflate 1.23, giflib 5.2.2, dav1d 1.5.1, libavif 1.4.2, libaom 3.12.1: every decode and every encode); the explorations below also run ${Object.entries(meta.versions.jsquash).map(([n, v]) => `@jsquash/${n} ${v}`).join(', ')}`],
    ['sharp', `${meta.versions.sharp} (libvips ${meta.versions.libvips}; mozjpeg ${meta.versions.sharpLibs.mozjpeg}, libwebp ${meta.versions.sharpLibs.webp}, libaom ${meta.versions.sharpLibs.aom}, libheif ${meta.versions.sharpLibs.heif}, libpng ${meta.versions.sharpLibs.png}, zlib-ng ${meta.versions.sharpLibs.zlib}); \`sharp.concurrency()\` = ${meta.versions.sharpConcurrency} (libvips threads per image), SIMD ${meta.versions.sharpSimd ? 'on' : 'off'}`],
    ['scores, load', `ssim.js ${meta.versions.ssim}, autocannon ${meta.versions.autocannon}`],
    ...(meta.reruns ?? []).map((r) => ['rerun since', `\`${r.command}\` (${r.cases.join(', ')}), merged into these results`]),
    ['worker code', `the tree as committed${meta.machine.dirty ? ', with uncommitted changes in src/, wasm/ or wrangler.toml' : ''}, copied when the run started`],
  ]))
  out.push('')
  out.push('## How it is measured')
  out.push('')
  out.push([
    `- **Worker**: \`wrangler dev\` on 127.0.0.1 (workerd, the runtime Cloudflare runs), started from a copy of the tree, with \`--var ${Object.entries(VARS).map(([k, v]) => `${k}:${v}`).join(' --var ')}\`: rate limiting off and the pixel limits lifted; the memory budget stays at its default, because it also decides how a JPEG is converted (one pass, DCT scale, MozJPEG or libjpeg-turbo), so conversions it refuses show as 422 \`operation_too_large\` (docs/results/memory.md measures them with the budget lifted). Whole-request time is measured by the client, from sending \`POST /api/compress\` (raw body) to the last byte of the answer; the decode / transform / encode split is the answer's \`Server-Timing\`.`,
    '- **sharp**: in the benchmark process, buffer to buffer (`sharp(input)…toBuffer()`), the same steps with the same settings (table below); its step split is measured by running each step on its own (decode to raw, resize raw to raw, encode raw), which adds copies: the fused pipeline is the number to compare.',
    `- Each case has a warm-up (the worker's first request of a kind also compiles its codecs; cold start is measured separately), then ${meta.quick ? '2 runs (1 MP) or 1 run (AVIF and 12 MP; their warm-up is skipped when the same kind of conversion already ran at 1 MP)' : '5 (1 MP) or 3 (4 and 12 MP) runs'} that alternate worker and sharp, so that load from other processes hits both alike. **Ratios are worker/sharp per pair of runs**: the median, with min–max over the pairs. Times are medians with (min–max) in ms.`,
    "- **Quality**: both outputs decoded by sharp to RGBA (flattened on white) and scored against the input's pixels (for a resized output: the input resized by sharp with Lanczos3 from full resolution) with **SSIM on the Y, Cb and Cr planes**, each box-downsampled by round(min(w, h) / 256) as the original SSIM paper recommends, computed by ssim.js (`weber`) and combined 6:1:1 (`scripts/lib/bench-quality.mjs`). ssim.js alone scores luma only, which hides colour: MozJPEG's default output and the same with explicit 4:2:0 have the same luma SSIM and differ by 18 % in size. The luma-only figure is shown too. npm has no maintained SSIMULACRA2 or butteraugli package (`ssimulacra2` does not exist, `butteraugli` is one 0.0.2 release). Lossless outputs are checked pixel for pixel instead.",
    "- **Matched quality**: the target is the SSIM of sharp's default output (JPEG quality 80 libjpeg-turbo style; WebP quality 80 effort 4; AVIF quality 50 effort 4, 4:4:4) for each photo; the worker's quality is bisected (integer steps, at most 7 encodes) to the lowest quality reaching it. Inputs are lossless PNGs so both sides start from the same pixels.",
    `- **Memory**: peak RSS growth (VmHWM after − VmRSS before, peak counter reset; \`scripts/lib/devserver.mjs\`) of the workerd process that runs the Worker. *Fresh process* figures come from a new \`wrangler dev\` whose first request is the measured one, as in docs/results/memory.md; *warm process* figures from the long-running benchmark server, where earlier garbage may still be resident (treat as approximate).`,
    '- **Cold start**: a new `wrangler dev` whose readiness is checked with a static asset (answered without running the Worker), so the measured request is the isolate\'s first; cold cost = its time − the median of the identical requests that follow.',
    `- **Throughput**: autocannon, POST of the 1 MP JPEG to \`?format=webp\`, a fixed number of requests per level (${meta.quick ? 'max(3, connections)' : 'max(12, 3 × connections)'}; requests/s = 2xx answers / elapsed time), against the worker and against a minimal Node HTTP server running sharp with the same settings (\`scripts/lib/bench-sharp-server.mjs\`, default libuv pool of 4 threads).`,
  ].join('\n'))
  out.push('')
  out.push('### Settings mapping')
  out.push('')
  out.push(table(['', 'imgedge (worker)', 'sharp'], SETTINGS_MAPPING))
  out.push('')
  out.push('Inputs: ' + [...new Set(data.timing.map((r) => `${r.input} = ${r.inputLabel} ${r.inputWidth}×${r.inputHeight}, ${kib(r.inputBytes)}`))].join('; ') + '. Photos are made by `scripts/lib/inputs.mjs` (a corpus photo resized, with light grain, written like a phone camera\'s JPEG q90) and `scripts/lib/bench-inputs.mjs`.')
  out.push('')

  // Time
  out.push('## Time')
  out.push('')
  out.push('![worker/sharp time ratios](benchmarks-time.svg)')
  out.push('')
  out.push(`Chart: [SVG](benchmarks-time.svg), [PNG](benchmarks-time.png). Green: within the 1.3× target; amber: within 2×; red: over.`)
  out.push('')
  const timingRows = data.timing.map((r) => {
    if (r.status !== 'ok') return [caseLabel(r), r.status + (r.detail ? `: ${r.detail}` : ''), '', '', '', '', '', '', '', '']
    const [wd, wt, we] = stepMedians(r.worker.timings)
    const [sd, st, se] = stepMedians(r.sharp.steps)
    const stepRatio = (a, b) => (b > 0.5 ? ratio(a / b) : '–')
    const inside = stepsAndRest(r)
    return [
      caseLabel(r),
      spread(r.worker.ms),
      `${ms(wd)} / ${ms(wt)} / ${ms(we)}`,
      spread(r.sharp.ms),
      `${ms(sd)} / ${r.qs ? ms(st) : '–'} / ${ms(se)}`,
      `**${ratio(median(r.pairs))}** (${ratio(min(r.pairs))}–${ratio(max(r.pairs))})`,
      inside ? ratio(median(inside.ratios)) : '–',
      inside ? ms(inside.restMs) : '–',
      `${stepRatio(wd, sd)} / ${r.qs ? stepRatio(wt, st) : '–'} / ${stepRatio(we, se)}`,
      `${r.effort ?? '–'}${r.sharpEffort !== null && r.sharpEffort !== undefined ? ` / ${r.sharpEffort}` : ''}`,
    ]
  })
  out.push(table(['conversion', 'worker ms', 'worker decode / transform / encode', 'sharp ms', 'sharp decode / resize / encode (separately)', 'worker / sharp', 'worker steps / sharp', 'worker outside the steps ms', 'ratio decode / transform / encode', 'effort (worker / sharp)'], timingRows))
  out.push('')

  // Bytes and quality at nominal settings
  out.push('## Output size and quality at the same nominal settings')
  out.push('')
  const q = (x) => (x.identical !== undefined ? losslessLabel(x.identical) : x.ssim === undefined ? '–' : `${fmt(x.ssim, 4)} (${fmt(x.ssimY, 4)})`)
  out.push(table(['conversion', 'worker bytes', 'worker SSIM YCbCr (Y)', 'sharp bytes', 'sharp SSIM YCbCr (Y)', 'worker / sharp bytes'], data.timing.filter((r) => r.status === 'ok').map((r) => [
    caseLabel(r),
    kib(r.worker.bytes),
    q(r.worker),
    kib(r.sharp.bytes),
    q(r.sharp),
    ratio(r.worker.bytes / r.sharp.bytes),
  ])))
  out.push('')

  // Matched
  out.push('## Bytes at matched quality')
  out.push('')
  out.push("Target: the SSIM (YCbCr 6:1:1) of sharp's default output for the format. *worker bytes* are at the lowest integer quality that reaches the target (its SSIM is at or above it); *interpolated* is the size at exactly the target, linearly between the two neighbouring qualities.")
  out.push('')
  out.push(table(['photo', 'format', 'target SSIM (sharp default)', "sharp's default bytes", 'worker quality', 'worker bytes (SSIM)', 'interpolated', 'worker / sharp', 'sharp mozjpeg:true at the target', 'time worker / sharp'], data.matched.map((m) => [
    m.photo,
    m.format.toUpperCase(),
    fmt(m.target, 5),
    kib(m.sharp.bytes),
    m.worker.unreachable ? 'unreachable' : `${m.worker.q}${m.worker.identical ? ' (identical output)' : ''}`,
    m.worker.bytes ? `${kib(m.worker.bytes)} (${fmt(m.worker.ssim, 5)})` : '–',
    m.worker.interpolated ? kib(m.worker.interpolated) : '–',
    m.worker.bytes ? `**${ratio(m.worker.bytes / m.sharp.bytes)}** (${pct(m.worker.bytes / m.sharp.bytes)})` : '–',
    m.sharpMozjpeg ? `q${m.sharpMozjpeg.q}: ${kib(m.sharpMozjpeg.bytes)} (${ratio(m.sharpMozjpeg.bytes / m.sharp.bytes)})` : '–',
    m.worker.ms?.length ? `${ms(median(m.worker.ms))} / ${ms(median(m.sharp.ms))} ms (${ratio(median(m.worker.ms) / median(m.sharp.ms))})` : '–',
  ])))
  out.push('')

  // Lossless PNG
  out.push('## Lossless PNG')
  out.push('')
  const bestName = { default: 'default', level9: 'level 9', same: 'level 9 adaptive' }
  out.push(table(['input', 'input bytes', 'worker effort 4 (libdeflate level 10, filter trials)', 'worker effort 9 (level 12, every filter)', 'sharp level 9, adaptive filtering', 'sharp level 9', "sharp's default (level 6)", "worker (effort 4) / sharp's best", 'worker (effort 9) / sharp\'s best', 'all outputs lossless'], data.lossless.map((l) => [
    `${l.label} ${l.width}×${l.height}`,
    kib(l.inputBytes),
    l.worker[4] ? `${kib(l.worker[4].bytes)}, ${spread(l.worker[4].ms, dur)}` : '–',
    l.worker[9] ? `${kib(l.worker[9].bytes)}, ${spread(l.worker[9].ms, dur)}` : '–',
    `${kib(l.sharp.same.bytes)}, ${spread(l.sharp.same.ms, dur)}`,
    `${kib(l.sharp.level9.bytes)}, ${spread(l.sharp.level9.ms, dur)}`,
    `${kib(l.sharp.default.bytes)}, ${spread(l.sharp.default.ms, dur)}`,
    l.worker[4] ? `**${ratio(l.worker[4].bytes / l.sharp.best.bytes)}** (best: ${bestName[l.sharp.best.variant]})` : '–',
    l.worker[9] ? ratio(l.worker[9].bytes / l.sharp.best.bytes) : '–',
    (() => {
      const all = [l.worker[4], l.worker[9], l.sharp.same, l.sharp.level9, l.sharp.default].filter(Boolean)
      if (!all.every((x) => x.identical)) return 'NO'
      return all.some((x) => x.identical === 'visible') ? `yes (${all.filter((x) => x.identical === 'visible').length === 1 ? 'one' : 'some'} with the colour of fully transparent pixels changed)` : 'yes, pixel for pixel'
    })(),
  ])))
  out.push('')

  // Memory
  out.push('## Memory')
  out.push('')
  out.push(`A Worker isolate has ${ISOLATE_MIB} MB. The API estimates each conversion's peak (its \`X-Memory-Estimate\` answer header) and refuses, with 422 \`operation_too_large\`, one whose estimate is over \`MEMORY_BUDGET_MIB\` (default ${budget ?? '?'} MiB). The benchmark keeps the default budget; figures for refused conversions come from docs/results/memory.md, which lifts it.`)
  out.push('')
  const memRows = memoryRows(data).map((m) => [
    m.label,
    m.growthMiB === null ? m.status : `**${fmt(m.growthMiB, 1)}**${m.growthMiB > ISOLATE_MIB ? ' ⚠ over 128' : ''}`,
    m.source,
    fmt(m.estimateMiB),
    budget && m.estimateMiB !== null && m.estimateMiB !== undefined ? (m.estimateMiB > budget ? 'refused (422)' : 'allowed') : '–',
  ])
  out.push(table(['conversion', 'peak RSS growth (MiB)', 'measured', 'model estimate (MiB)', `default budget (${budget} MiB)`], memRows))
  out.push('')
  out.push('Only fresh-process figures are reported: in the long-running benchmark server, garbage of earlier conversions is resident or reused and the growth of one request means little. docs/results/memory.md (`npm run memory`) has more cases, the method and the model.')
  out.push('')

  // Cold start
  out.push('## Cold start')
  out.push('')
  out.push(table(['conversion', 'first request ms (decode / transform / encode)', 'later requests ms (decode / transform / encode)', 'added by the cold start'], data.cold.filter((c) => c.status === 200).map((c) => {
    const [d, t, e] = stepMedians(c.warmTimings)
    const f = c.firstTimings
    return [caseLabel({ ...c, inputLabel: 'JPEG photo' }), `${ms(c.firstMs)} (${ms(f.decode)} / ${ms(f.transform)} / ${ms(f.encode)})`, `${spread(c.warmMs)} (${ms(d)} / ${ms(t)} / ${ms(e)})`, `**+${dur(c.firstMs - median(c.warmMs))}** (decode ${sign(f.decode - d)}, encode ${sign(f.encode - e)})`]
  })))
  out.push('')

  // Throughput
  out.push('## Throughput (1 MP JPEG → WebP)')
  out.push('')
  out.push(table(['connections', 'worker req/s', 'worker latency p50 / p97.5 / max ms', 'worker errors', 'sharp server req/s', 'sharp latency p50 / p97.5 / max ms', 'worker / sharp req/s'], [1, 4, 16].map((n) => {
    const w = data.throughput.find((t) => t.side === 'worker' && t.connections === n)
    const s = data.throughput.find((t) => t.side === 'sharp' && t.connections === n)
    if (!w || !s) return [n, '–', '–', '–', '–', '–', '–']
    return [n, fmt(w.rps, 2), `${w.p50} / ${w.p97_5} / ${w.max}`, `${w.non2xx} non-2xx, ${w.errors} errors, ${w.timeouts} timeouts`, fmt(s.rps, 2), `${s.p50} / ${s.p97_5} / ${s.max}`, ratio(w.rps / s.rps)]
  })))
  out.push('')
  out.push('One `wrangler dev` is one isolate, and imgedge runs one conversion at a time per isolate (`src/lib/slot.ts`, for the 128 MB limit), so its throughput does not grow with connections: requests queue and latency grows instead. On Cloudflare, concurrent requests spread over many isolates and machines. sharp uses up to 4 libuv threads on the 2 cores.')
  out.push('')

  // Delivery
  if (data.delivery?.length) {
    out.push('## Delivery (GET /img, 1 MP JPEG from a loopback origin → WebP)')
    out.push('')
    out.push(deliveryTable(data.delivery))
    out.push('')
    out.push('A miss fetches the origin and converts (one conversion at a time per isolate, as above); a hit is the Cache API\'s stored answer, and a 304 an If-None-Match on it, neither counted against the quota. `wrangler dev` keeps the Cache API on local disk; on Cloudflare it is per data centre, and does nothing on `*.workers.dev`.')
    out.push('')
  }

  if (data.smart) {
    out.push(smartSection(data.smart))
  }

  if (data.animation) {
    out.push(animationSection(data.animation))
  }

  // Sweep
  if (data.sweep.length) {
    out.push('## Effort sweep (through the API, 1 MP photo; PNG: the screenshot)')
    out.push('')
    out.push(table(['format', 'effort (used)', 'whole request ms', 'encode ms', 'bytes', 'SSIM'], data.sweep.map((s) => [s.format.toUpperCase(), `${s.effort}${s.used !== null && s.used !== s.effort ? ` (${s.used})` : ''}`, spread(s.ms), ms(s.encode), kib(s.bytes), fmt(s.ssim, 5)])))
    out.push('')
  }

  if (data.explore) renderExplore(out, data.explore)

  // Targets
  out.push('## Targets')
  out.push('')
  out.push(table(['target', 'status', 'measured'], targetsOf(data)))
  out.push('')
  return out.join('\n')
}

/** Peak memory rows: this run's fresh-process measurements, plus (quick run) 12 MP figures of the last `npm run memory`. */
function memoryRows(data) {
  const rows = data.cold.map((c) => ({ output: c.output, mp: c.mp, label: caseLabel({ ...c, inputLabel: 'JPEG photo' }), growthMiB: c.status === 200 ? c.growthMiB : null, status: `${c.status} ${c.code ?? ''}`, estimateMiB: c.estimateMiB, source: 'this run, fresh process' }))
  for (const m of data.memoryDoc?.rows ?? []) {
    if (rows.some((r) => r.output === m.output && Math.abs(r.mp - m.mp) < 0.5)) continue
    rows.push({ ...m, label: `JPEG photo ${m.mp.toFixed(1)} MP → ${m.output.toUpperCase()}`, source: '`npm run memory` (docs/results/memory.md), fresh process' })
  }
  return rows
}

const sign = (n) => (n === null || n === undefined ? '–' : n < 0 ? `−${dur(-n)}` : `+${dur(n)}`)

function losslessLabel(identical) {
  if (identical === 'visible') return 'lossless ✓ (colour of fully transparent pixels changed)'
  return identical ? 'lossless ✓' : 'NOT lossless'
}

function renderExplore(out, explore) {
  out.push("## Experiments in Node on the worker's own wasm")
  out.push('')
  out.push("These try what the API cannot be asked for (`scripts/lib/bench-explore.mjs`; `npm run bench -- --explore` reruns them alone). Same @jsquash .wasm files as the worker, run by Node's V8 instead of workerd's.")
  out.push('')
  const photos = [...new Set(explore.mozjpeg.map((r) => r.photo))]
  out.push("**MozJPEG settings: bytes to reach the SSIM of sharp's default JPEG** (worker / sharp bytes at the lowest integer quality reaching the target; the quality found in brackets):")
  out.push('')
  out.push(table(['MozJPEG setting', ...photos, 'median'], MOZJPEG_VARIANTS.map(([name]) => {
    const rs = photos.map((p) => explore.mozjpeg.find((r) => r.photo === p && r.variant === name))
    const ratios = rs.map((r) => (r?.bytes ? r.bytes / r.sharpBytes : null))
    return [name, ...rs.map((r, i) => (r?.bytes ? `${ratio(ratios[i])} (q${r.q})` : '–')), `**${ratio(median(ratios))}**`]
  })))
  out.push('')
  if (explore.nativeJpeg?.length) {
    out.push('**What MozJPEG costs natively**: sharp encoding the same raw pixels at quality 80 with its bundled mozjpeg, each feature alone (median of 5 encodes):')
    out.push('')
    const ins = [...new Set(explore.nativeJpeg.map((r) => r.input))]
    out.push(table(['sharp jpeg() options', ...ins.map((k) => { const r = explore.nativeJpeg.find((x) => x.input === k); return `${k} (${r.width}×${r.height}): ms, bytes` })], NATIVE_JPEG_VARIANTS.map(([name]) => [name, ...ins.map((k) => {
      const r = explore.nativeJpeg.find((x) => x.input === k && x.variant === name)
      const base = explore.nativeJpeg.find((x) => x.input === k && x.variant === NATIVE_JPEG_VARIANTS[0][0])
      return r ? `${ms(r.ms)} (${ratio(r.ms / base.ms)}), ${kib(r.bytes)}` : '–'
    })])))
    out.push('')
  }
  out.push('**First call against later calls** (ms for four identical calls in a fresh process, 1 MP photo; median over the repetitions):')
  out.push('')
  const keys = [...new Set(explore.tiering.map((r) => `${r.codec}|${r.flags}`))]
  out.push(table(['codec', 'V8 tiers', '1st call', '2nd', '3rd', '4th', '1st − median(2nd–4th)'], keys.map((k) => {
    const [codec, flags] = k.split('|')
    const reps = explore.tiering.filter((r) => r.codec === codec && r.flags === flags)
    const at = (i) => median(reps.map((r) => r.times[i]))
    return [codec, flags, ms(at(0)), ms(at(1)), ms(at(2)), ms(at(3)), sign(at(0) - median([at(1), at(2), at(3)]))]
  })))
  out.push('')
}

function chartBars(data) {
  return data.timing.map((r) => ({ label: shortLabel(r), median: r.status === 'ok' ? median(r.pairs) : null, min: r.status === 'ok' ? min(r.pairs) : null, max: r.status === 'ok' ? max(r.pairs) : null, note: r.status }))
}

async function writeDocs(data) {
  const previous = fs.existsSync(DOC) ? fs.readFileSync(DOC, 'utf8') : ''
  const notes = previous.includes(NOTES_MARKER) ? previous.slice(previous.indexOf(NOTES_MARKER)) : `${NOTES_MARKER}\n\n## What we tried\n\n(Write here, by hand.)\n`
  fs.writeFileSync(DOC, `${render(data)}\n${notes.trimEnd()}\n`)
  const svg = ratioChartSvg(chartBars(data), {
    title: 'imgedge (wrangler dev) vs sharp: whole-request time ratio',
    subtitle: `${data.meta.quick ? 'quick' : 'full'} run, ${data.meta.machine.cpu.replace(/\s+/g, ' ')} × ${data.meta.machine.cores}; bar = median of paired runs, whiskers = min–max`,
  })
  fs.writeFileSync(CHART, svg)
  await loadSharp(ROOT)(Buffer.from(svg), { density: 144 }).png().toFile(CHART_PNG)
  log(`wrote ${path.relative(ROOT, DOC)}, ${path.relative(ROOT, CHART)}, ${path.relative(ROOT, CHART_PNG)}`)
}

// ---------------------------------------------------------------------------------------------------
// Main

/** One phase run alone (--delivery, --smart, --animation) put into the last run's results, or kept beside them when there are none. */
function mergePhase(phase, result, args) {
  if (!fs.existsSync(RESULTS)) {
    fs.mkdirSync(CACHE, { recursive: true })
    fs.writeFileSync(path.join(CACHE, `bench-${phase}.json`), JSON.stringify(result, null, 1))
    log(`no ${path.relative(ROOT, RESULTS)} to merge into: written to .cache/bench-${phase}.json, docs left alone`)
    return
  }
  const data = JSON.parse(fs.readFileSync(RESULTS, 'utf8'))
  // (--palette: the palette rows replace the last run's, its quality=auto and max_bytes rows stay)
  data[phase] = args.palette ? { ...data[phase], palette: result.palette } : result
  const command = args.palette ? 'npm run bench -- --palette' : `npm run bench -- --${phase}`
  data.meta.reruns = [...(data.meta.reruns ?? []), { date: new Date().toISOString(), command, cases: [args.palette ? 'palette' : phase] }]
  fs.writeFileSync(RESULTS, JSON.stringify(data, null, 1))
  if (args.docs) return writeDocs(data)
}

async function main() {
  const args = parseArgs(process.argv.slice(2))
  if (args.reportOnly) {
    await writeDocs(JSON.parse(fs.readFileSync(RESULTS, 'utf8')))
    return
  }
  if (args.explore) {
    const data = JSON.parse(fs.readFileSync(RESULTS, 'utf8'))
    data.explore = await explorePhase({ sharp: loadSharp(ROOT), args, corpus: args.corpus })
    fs.writeFileSync(RESULTS, JSON.stringify(data, null, 1))
    if (args.docs) await writeDocs(data)
    return
  }
  if (args.burst) {
    const tree = snapshotTree()
    let result
    try {
      result = await burstPhase({ root: ROOT, cwd: tree, sharp: loadSharp(ROOT), corpusDir: fs.existsSync(args.corpus) ? args.corpus : null, log })
    } finally {
      removeTempDir(tree)
    }
    console.log(`\n${burstSection(result)}`)
    await mergePhase('burst', result, { ...args, docs: false })
    if (args.docs) writeBurstDoc(ROOT, result)
    if (!burstGoals(result).every((goal) => goal.met)) process.exitCode = 1
    return
  }
  if (args.steady) {
    const run = await steadyCheck({ root: ROOT, corpusDir: args.corpus, cacheDir: path.join(CACHE, 'memory-inputs'), ...(args.quick ? { rounds: 12, seconds: 10, tail: 6 } : {}), log })
    console.log(`\nRSS in MiB (over idle); V8 heaps in MiB\n\n${run.table}\n\n${run.verdict.line}`)
    fs.writeFileSync(path.join(CACHE, 'bench-steady.json'), JSON.stringify(run, null, 1))
    process.exitCode = run.verdict.pass ? 0 : 1
    return
  }
  if (args.delivery || args.smart || args.animation) {
    const corpusDir = fs.existsSync(args.corpus) ? args.corpus : null
    const inputs = createInputs({ root: ROOT, corpusDir, log: (m) => log(`  ${m}`) })
    const phase = args.delivery ? 'delivery' : args.smart ? 'smart' : 'animation'
    // The animation phase makes its GIFs before the tree is copied: the first run spends minutes on them.
    if (args.animation) await animations({ root: ROOT, corpusDir, names: args.quick ? ['pan', 'cartoon', 'screen'] : undefined, log: (m) => log(`  ${m}`) })
    const tree = snapshotTree()
    let result
    try {
      if (args.delivery) {
        const photo = fs.readFileSync((await inputs.get('jpeg:1')).file)
        result = await deliveryPhase({ root: ROOT, cwd: tree, vars: VARS, photo, log, quick: args.quick })
        console.log(`\n${deliveryTable(result)}`)
      } else {
        const server = await startServer(tree)
        try {
          const options = { root: ROOT, server, post, sharp: loadSharp(ROOT), corpusDir, timeoutMs: args.timeout * 1000, log, quick: args.quick }
          result = args.smart ? await smartPhase({ ...options, inputs, paletteOnly: args.palette }) : await animationPhase({ ...options, runs: args.runs })
          if (reloaded(server)) log('WARNING: the dev server reloaded during the run')
        } finally {
          await server.stop()
        }
        console.log(`\n${args.smart ? smartSection(result) : animationSection(result)}`)
      }
    } finally {
      removeTempDir(tree)
    }
    await mergePhase(phase, result, args)
    return
  }
  const started = Date.now()
  const loadStart = os.loadavg()[0]
  const sharp = loadSharp(ROOT)
  const corpusDir = fs.existsSync(args.corpus) ? args.corpus : null
  if (!corpusDir) log(`no corpus at ${args.corpus}: synthesising photo-like inputs`)
  const inputsRaw = createInputs({ root: ROOT, corpusDir, log: (m) => log(`  ${m}`) })
  // Inputs with their bytes loaded once.
  const inputs = {
    async get(key) {
      const input = await inputsRaw.get(key)
      if (input && !input.body) input.body = fs.readFileSync(input.file)
      return input
    },
    photoSet: (o) => inputsRaw.photoSet(o),
  }
  const scorer = createScorer(ROOT, sharp)
  let cases = allCases(args.quick)
  if (args.only) cases = cases.filter((c) => args.only.some((s) => c.id.includes(s)))
  const phases = !args.only || args.allPhases

  // Make every input first, so that making them is not timed.
  for (const key of new Set([...cases.map((c) => c.input), ...(phases ? ['jpeg:1', 'screenshot'] : [])])) await inputs.get(key)
  if (phases) await inputs.photoSet({ limit: args.quick ? 1 : 4 })
  if (phases) await animations({ root: ROOT, corpusDir, names: args.quick ? ['pan', 'cartoon', 'screen'] : undefined, log: (m) => log(`  ${m}`) })
  const tree = snapshotTree()
  const data = { meta: {}, timing: [], lossless: [], matched: [], sweep: [], throughput: [], cold: [] }
  const ctx = { inputs, sharp, scorer, args, timeoutMs: args.timeout * 1000 }
  let server = null
  try {
    log('starting wrangler dev ...')
    server = await startServer(tree)
    ctx.server = server
    data.meta.versions = versions(server)
    const cold = phases ? coldCases(args.quick) : []
    // The benchmark server is itself a fresh isolate: its first request is the first cold case.
    if (cold.length) {
      log('cold start and peak memory (fresh isolate):')
      data.cold.push(await coldCase(ctx, server, cold[0]))
    }
    log('timing:')
    data.timing = await timingPhase(ctx, cases)
    if (args.merge) {
      const keys = [...new Set(cases.filter((c) => c.output === 'png' && !c.qs && ['screenshot', 'graphic', 'alpha'].includes(c.input)).map((c) => c.input))]
      if (keys.length) {
        log('lossless PNG:')
        data.lossless = await losslessPhase(ctx, keys, data.timing)
      }
    }
    if (phases) {
      log('lossless PNG:')
      data.lossless = await losslessPhase(ctx, args.quick ? ['screenshot'] : ['screenshot', 'graphic', 'alpha'], data.timing)
      log('matched quality:')
      data.matched = await matchedPhase(ctx)
      if (!args.quick) {
        log('effort sweep:')
        data.sweep = await sweepPhase(ctx)
      }
      log('throughput:')
      data.throughput = await throughputPhase(ctx)
      log('delivery (GET /img):')
      data.delivery = await deliveryPhase({ root: ROOT, cwd: tree, vars: VARS, photo: (await inputs.get('jpeg:1')).body, log, quick: args.quick })
      log('smarter compression (quality=auto, palette PNG, max_bytes):')
      data.smart = await smartPhase({ root: ROOT, server, post, sharp, inputs, corpusDir, timeoutMs: ctx.timeoutMs, log, quick: args.quick })
      log('animation (GIF and animated WebP to animated WebP):')
      data.animation = await animationPhase({ root: ROOT, server, post, sharp, corpusDir, timeoutMs: ctx.timeoutMs, log, quick: args.quick })
    }
    if (reloaded(server)) log('WARNING: the dev server reloaded during the run')
    await server.stop()
    server = null
    for (const c of cold.slice(1)) {
      const fresh = await startServer(tree)
      try {
        data.cold.push(await coldCase(ctx, fresh, c))
      } finally {
        await fresh.stop()
      }
    }
    if (phases && !args.quick) data.explore = await explorePhase({ sharp, args, corpus: args.corpus, inputs })
  } finally {
    if (server) await server.stop().catch(() => {})
    removeTempDir(tree)
  }
  data.meta = {
    ...data.meta,
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
    quick: args.quick,
    only: args.only,
    seconds: (Date.now() - started) / 1000,
    loadStart,
    loadEnd: os.loadavg()[0],
    machine: machine(),
    defaultBudgetMiB: defaultBudgetMiB(ROOT),
  }
  // The 12 MP figures of the last `npm run memory`, for the formats this run did not measure fresh.
  const memoryJson = path.join(CACHE, 'memory-results.json')
  if (fs.existsSync(memoryJson)) {
    try {
      const m = JSON.parse(fs.readFileSync(memoryJson, 'utf8'))
      const rows = m.results
        .filter((r) => r.case.input === 'jpeg' && !r.case.qs && r.result?.status === 'ok' && r.case.mp >= 4)
        .map((r) => ({ output: r.case.output, mp: (r.case.width * r.case.height) / 1e6, growthMiB: r.result.growthMiB, estimateMiB: r.result.estimateMiB }))
      data.memoryDoc = { date: m.date, rows }
    } catch (error) {
      log(`(could not read ${memoryJson}: ${error.message})`)
    }
  }
  fs.mkdirSync(CACHE, { recursive: true })
  if (args.merge) {
    const base = JSON.parse(fs.readFileSync(RESULTS, 'utf8'))
    for (const r of data.timing) {
      const i = base.timing.findIndex((t) => t.id === r.id)
      if (i >= 0) base.timing[i] = r
      else base.timing.push(r)
    }
    for (const l of data.lossless) {
      const i = base.lossless.findIndex((t) => t.input === l.input)
      if (i >= 0) base.lossless[i] = l
      else base.lossless.push(l)
    }
    base.meta.reruns = [...(base.meta.reruns ?? []), { date: data.meta.date, command: data.meta.command, cases: data.timing.map((r) => r.id) }]
    fs.writeFileSync(RESULTS, JSON.stringify(base, null, 1))
    log(`merged ${data.timing.length} case(s) into ${path.relative(ROOT, RESULTS)}; ${fmt(data.meta.seconds, 0)} s`)
    if (args.docs) await writeDocs(base)
    return
  }
  // A partial run (--only) keeps its results apart, so it does not replace the last full or quick run's.
  const file = args.only ? RESULTS.replace(/\.json$/, '-only.json') : RESULTS
  fs.writeFileSync(file, JSON.stringify(data, null, 1))
  log(`results in ${path.relative(ROOT, file)}; ${fmt(data.meta.seconds, 0)} s`)
  if (args.docs && !args.only) await writeDocs(data)
  else if (args.docs) log('--only: docs/results/benchmarks.md left alone (use --merge to put the cases into the last run\'s results)')
}

main().catch((error) => {
  console.error(error)
  killStarted()
  process.exit(1)
})
