#!/usr/bin/env node
// Peak memory of one conversion in a fresh `wrangler dev`, for photos of 1, 2, 4 and 12 MP (and animated
// GIFs to animated WebP), next to the estimate of the API's memory model (src/pipeline/limits.ts, answer header X-Memory-Estimate).
//
//   npm run memory                      # every case; writes docs/results/memory.md
//   npm run memory -- --quick           # 1 and 12 MP to jpeg and webp only
//   npm run memory -- --only jpeg:12,webp:12@width=1600 --runs 3
//   npm run memory -- --matrix --out docs/memory-matrix.md   # input x size x output x width, as a table
//   npm run memory -- --matrix --sizes 1 --inputs jpeg,png --outputs webp,jpeg
//
// (without npm: node_modules/.bin/node scripts/measure-memory.mjs ...; needs Node >= 22 and Linux)
//
// A deployed Worker isolate has 128 MB, shared by its concurrent requests; local workerd enforces no
// limit, so we measure what one request costs. For each case (and each run) the script starts a fresh
// `wrangler dev`, waits for GET /api/health, warms up with one more GET /api/health, reads VmRSS of
// the workerd process that runs the Worker, resets its peak counter (VmHWM), sends the one
// conversion, reads VmHWM, and stops wrangler (its whole process group). Growth = VmHWM - VmRSS.
// Each case runs first with the default memory budget, which also decides how the API converts it
// (a JPEG -> JPEG too large for MozJPEG goes through libjpeg-turbo); a case the default budget
// refuses (422) is measured again with --var MEMORY_BUDGET_MIB:100000, so every case is measured.
//
// Options:
//   --quick            only jpeg:1, webp:1, jpeg:12, webp:12
//   --only LIST        comma-separated case keys: OUTPUT:MP for JPEG input (jpeg:12, webp:4, avif:1,
//                      png:12), or INPUT>OUTPUT:MP for other inputs (png>webp:12, pjpeg>webp:12, avif>jpeg:4,
//                      gif>png:1; WebP input: webp lossy, webpll lossless, webpa lossy with alpha), with
//                      @QUERY for a case with options (webp:12@width=1600, jpeg:4@width=1200&fit=cover);
//                      any combination of input, output, 1/2/4/12/16/24/36/50 MP and options, not only the full run's;
//                      a file in place of MP (png>webp:shots/2880x1800.png@width=1200) sends that file;
//                      gifanim>webp:NAME an animated GIF of scripts/lib/animations.mjs (pan: 18 frames of
//                      640x400, cartoon, screen, pan720: 100 frames of 1280x720), e.g. gifanim>webp:pan720@width=640
//                      (the keys are read by scripts/lib/inputs.mjs, as measure-steady.mjs reads them)
//   --runs N           measure each case N times (each in a fresh wrangler), report the largest growth
//   --corpus DIR       photos to make the inputs from (default ../shared/corpus/photos); when absent,
//                      test/fixtures/large.jpg enlarged
//   --timeout S        per-request timeout in seconds (default 180)
//   --docs / --no-docs write docs/results/memory.md (default: only for a full run, i.e. no --quick/--only)
//   --deep-warmup      warm up with GET /api/health?deep=1 instead, which runs every codec once on a
//                      16x16 image first: the growth then leaves out the codecs' one-time start-up
//                      costs (compiled code, glue), which a real isolate's first conversion does pay
//
// The matrix (--matrix; scripts/lib/memory-matrix.mjs): rows are input formats at each size (plus two
// screenshot PNGs, 5.2, 8.3 and 14.7 MP, when PNG is an input), columns are output formats at full size and at
// each width; every cell is the first request of its own fresh `wrangler dev` at the API's default limits
// (only rate limiting off), and shows the status, the peak growth and the model's estimate (X-Memory-Estimate,
// or for a 422 the problem's estimateMiB). A 200 over the default MEMORY_BUDGET_MIB is flagged. Prints the
// table; --out writes it as a page.
//   --matrix           measure the matrix instead of the cases above (whole: 405 cells, hours; measure a part with --merge)
//   --quick            with --matrix: 1 and 12 MP JPEG, PNG and WebP to JPEG and WebP, full and 1600 px
//   --sizes LIST       MP of the rows (default 1,4,12,16,24,36,50; 4:3, 24 MP is 5712x4284, 50 MP 8160x6120)
//   --inputs LIST      input formats (default jpeg,pjpeg,png,webp,avif,gif; pjpeg: progressive JPEG)
//   --outputs LIST     output formats (default jpeg,webp,png,avif,webpll; webpll: lossless WebP, full size only)
//   --widths LIST      full and/or widths in px (default full,1600)
//   --no-screenshots   leave out the screenshot rows
//   --screenshots-only only the screenshot rows (with --inputs png): 5.2, 8.3 and 14.7 MP
//   --jobs N           cells measured at once, each on its own dev server (default 1). VmHWM is per process,
//                      but 2 read about 1 MiB higher on average (up to 5 in a cell; the garbage collector
//                      runs later on a busy CPU): faster, for a first look
//   --measure-refused  measure a cell refused for memory again with MEMORY_BUDGET_MIB:100000
//   --var NAME:VALUE   a wrangler --var for every cell's server (repeatable), e.g. MAX_INPUT_BYTES:52428800
//   --out FILE         also write the table, its legend and the machine to FILE (e.g. docs/memory-matrix.md)
//   --merge            with --out: lay the cells measured over FILE's table instead of writing a new page (a part
//                      of the matrix measured again: its rows and columns replace or join the page's, the rest stay)

import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { memoryOf, parseServerTiming, resetPeak, startWorker, workerdPackageVersion, workerdVersion } from './lib/devserver.mjs'
import { caseOfKey, INPUT_KINDS, inputOf, makeCase, OUTPUTS, sourcePhoto } from './lib/inputs.mjs'
import { MATRIX, MATRIX_QUICK, matrixLegend, matrixList, mergeMatrix, runMatrix, writeMatrix } from './lib/memory-matrix.mjs'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const CACHE = path.join(ROOT, '.cache')
const INPUTS = path.join(CACHE, 'memory-inputs')
/** The isolate's memory limit: Cloudflare documents 128 MB; figures are compared with 128 MiB. */
const BUDGET_MIB = 128
/** Default of MEMORY_BUDGET_MIB, read from src/env.ts (`MEMORY_BUDGET_MIB: positiveInt.default(N)`). */
const DEFAULT_MEMORY_BUDGET_MIB = (() => {
  const text = fs.readFileSync(path.join(ROOT, 'src', 'env.ts'), 'utf8')
  const m = /MEMORY_BUDGET_MIB:\s*positiveInt\.default\(\s*([\d_]+)\s*\)/.exec(text)
  if (!m) throw new Error('MEMORY_BUDGET_MIB: positiveInt.default(N) not found in src/env.ts')
  return Number(m[1].replace(/_/g, ''))
})()
const NOTES_MARKER = '<!-- Everything below this line is written by hand and kept when the script rewrites this file. -->'
const MiB = 1024 * 1024
// Lift the configurable limits so that every case is measured; the memory budget only for a case the
// default budget refuses.
const VARS = { MAX_INPUT_PIXELS: '40000000', MAX_OUTPUT_PIXELS: '40000000', MAX_INPUT_BYTES: '104857600', RATE_LIMIT_ANON_PER_MINUTE: '0' }
const LIFTED_VARS = { ...VARS, MEMORY_BUDGET_MIB: '100000' }
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

// ---------------------------------------------------------------------------------------------------
// Command line

function parseArgs(argv) {
  const args = { quick: false, only: null, runs: 1, corpus: path.resolve(ROOT, '..', 'shared', 'corpus', 'photos'), timeout: 180, docs: null, deepWarmup: false, matrix: false, plan: {}, jobs: 1, measureRefused: false, vars: {}, out: null, merge: false }
  const list = (name, text) => {
    try {
      return matrixList(name, text)
    } catch (error) {
      return fail(error.message)
    }
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    const [name, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined]
    const value = () => {
      const v = inline ?? argv[++i]
      if (v === undefined) fail(`${name} needs a value`)
      return v
    }
    switch (name) {
      case '--quick': args.quick = true; break
      case '--only': args.only = value().split(',').map((s) => s.trim()).filter(Boolean); break
      case '--runs': args.runs = Number(value()); break
      case '--corpus': args.corpus = path.resolve(value()); break
      case '--timeout': args.timeout = Number(value()); break
      case '--docs': args.docs = true; break
      case '--no-docs': args.docs = false; break
      case '--deep-warmup': args.deepWarmup = true; break
      case '--matrix': args.matrix = true; break
      case '--sizes': case '--inputs': case '--outputs': case '--widths': args.plan[name.slice(2)] = list(name.slice(2), value()); break
      case '--no-screenshots': args.plan.screenshots = false; break
      case '--screenshots-only': args.plan.sizes = []; args.plan.screenshots = true; break
      case '--jobs': args.jobs = Number(value()); break
      case '--measure-refused': args.measureRefused = true; break
      case '--var': {
        const [varName, ...rest] = value().split(':')
        if (!/^[A-Z_]+$/.test(varName) || !rest.length) fail('--var takes NAME:VALUE')
        args.vars[varName] = rest.join(':')
        break
      }
      case '--out': args.out = path.resolve(value()); break
      case '--merge': args.merge = true; break
      case '-h': case '--help':
        {
          // The comment block at the top of this file.
          const lines = fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(1)
          const end = lines.findIndex((l) => !l.startsWith('//'))
          console.log(lines.slice(0, end).map((l) => l.slice(3)).join('\n'))
        }
        process.exit(0)
      default: fail(`unknown argument ${arg} (see --help)`)
    }
  }
  if (!Number.isInteger(args.runs) || args.runs < 1) fail('--runs must be a positive integer')
  if (!(args.timeout > 0)) fail('--timeout must be a positive number of seconds')
  if (!Number.isInteger(args.jobs) || args.jobs < 1) fail('--jobs must be a positive integer')
  const matrixOnly = Object.keys(args.plan).length || args.out || args.merge || args.measureRefused || Object.keys(args.vars).length
  if (!args.matrix && matrixOnly) fail('--sizes, --inputs, --outputs, --widths, --no-screenshots, --measure-refused, --var, --out and --merge go with --matrix')
  if (args.merge && !args.out) fail('--merge needs --out FILE, the page to merge into')
  if (args.matrix && (args.only || args.docs || args.runs > 1)) fail('--matrix measures each cell once and writes no docs/results/memory.md: leave out --only, --runs and --docs')
  const full = !args.quick && !args.only && !args.matrix
  args.docs ??= full
  return args
}

function fail(message) {
  console.error(`measure-memory: ${message}`)
  process.exit(2)
}

// ---------------------------------------------------------------------------------------------------
// Cases

function allCases() {
  const cases = []
  for (const mp of [1, 4, 12]) {
    for (const output of OUTPUTS) cases.push(makeCase('jpeg', output, mp))
  }
  cases.push(makeCase('png', 'webp', 12))
  // Not in the phone-photo brief, but common on the web: a progressive JPEG makes the decoder keep
  // every DCT coefficient of the image.
  cases.push(makeCase('pjpeg', 'webp', 12))
  // Resized outputs, the common web requests: a photo scaled down to a display width. 1 MP → 800 and
  // 4 MP → 1200/2048 and 2 MP → 800 decode at full size; 12 MP → 1600 at 4/8, leaving Lanczos3 1.26x.
  cases.push(makeCase('jpeg', 'jpeg', 1, { width: 800 }))
  cases.push(makeCase('jpeg', 'webp', 1, { width: 800 }))
  cases.push(makeCase('jpeg', 'jpeg', 2, { width: 800 }))
  cases.push(makeCase('jpeg', 'webp', 2, { width: 800 }))
  cases.push(makeCase('jpeg', 'jpeg', 4, { width: 1200 }))
  cases.push(makeCase('jpeg', 'webp', 4, { width: 1200 }))
  cases.push(makeCase('jpeg', 'webp', 4, { width: 2048 }))
  cases.push(makeCase('jpeg', 'jpeg', 12, { width: 1600 }))
  cases.push(makeCase('jpeg', 'webp', 12, { width: 1600 }))
  // Animated GIF to animated WebP, every frame: the budget's case (100 frames of 1280x720), the same scaled down,
  // and a typical 640x400 clip.
  cases.push(makeCase('gifanim', 'webp', 'pan720'))
  cases.push(makeCase('gifanim', 'webp', 'pan720', { width: 640 }))
  cases.push(makeCase('gifanim', 'webp', 'pan'))
  // Transformations at the largest input (src/pipeline/stages.ts, wasm/lean/op_*.c): the quarter turn (the image held
  // once, as for EXIF), blur and sharpen at full size (their windows of rows), gravity=auto's preview beside a cover crop,
  // and gravity=face's, whose face detector has a memory of its own.
  cases.push(makeCase('jpeg', 'webp', 16, { rotate: 90 }))
  cases.push(makeCase('jpeg', 'jpeg', 16, { rotate: 90 }))
  cases.push(makeCase('jpeg', 'webp', 16, { blur: 50 }))
  cases.push(makeCase('jpeg', 'webp', 16, { sharpen: 2 }))
  cases.push(makeCase('jpeg', 'webp', 16, { width: 1600, height: 1600, fit: 'cover', gravity: 'auto' }))
  cases.push(makeCase('jpeg', 'webp', 16, { width: 1600, height: 1600, fit: 'cover', gravity: 'face' }))
  return cases
}

function parseCase(key) {
  try {
    return caseOfKey(key)
  } catch (error) {
    return fail(error.message)
  }
}

function selectCases(args) {
  const cases = allCases()
  if (args.quick) return cases.filter((c) => c.input === 'jpeg' && [1, 12].includes(c.mp) && ['jpeg', 'webp'].includes(c.output) && !c.qs)
  if (args.only) {
    const seen = new Set()
    return args.only.map(parseCase).filter((c) => !seen.has(c.key) && seen.add(c.key))
  }
  return cases
}

// ---------------------------------------------------------------------------------------------------
// One measurement

function estimateOf(response, problem) {
  const m = /^\s*([\d.]+)\s*MiB\s*$/i.exec(response?.headers.get('x-memory-estimate') ?? '')
  if (m) return Number(m[1])
  return typeof problem?.estimateMiB === 'number' ? problem.estimateMiB : null
}

/** One conversion in a fresh `wrangler dev` run with `vars`; the result's figures are described in rowOf and in docs/results/memory.md. */
async function measureOnce(testCase, input, { cwd, timeoutMs, deepWarmup, log }, vars) {
  const lifted = vars.MEMORY_BUDGET_MIB !== undefined
  const server = await startWorker({ root: ROOT, cwd, vars, prefix: 'imgedge-memory-', log })
  const worker = server.worker.pid
  const proxy = server.proxy?.pid
  const readyLogLength = server.log.length
  try {
    // Warm-up: one more request through the same path, then let the process settle.
    const warm = await fetch(`${server.base}/api/health${deepWarmup ? '?deep=1' : ''}`)
    await warm.arrayBuffer()
    await sleep(500)

    const before = memoryOf(worker)
    const peakReset = resetPeak(worker)
    if (proxy) resetPeak(proxy)
    const baseline = memoryOf(worker)
    const proxyBaseline = proxy ? memoryOf(proxy) : null

    // Sample RSS while the request runs, to see in which step the peak falls.
    const samples = []
    const t0 = performance.now()
    const sampler = setInterval(() => {
      const m = memoryOf(worker)
      if (m) samples.push({ t: performance.now() - t0, rss: m.rss })
    }, 10)

    const body = fs.readFileSync(input.file)
    let response
    let responseBytes = 0
    let error = null
    let code = null
    let problem = null
    let headersMs = null
    try {
      response = await fetch(`${server.base}/api/compress?format=${testCase.output}${testCase.qs ? `&${testCase.qs}` : ''}`, {
        method: 'POST',
        headers: { 'Content-Type': INPUT_KINDS[testCase.input].mime },
        body,
        signal: AbortSignal.timeout(timeoutMs),
      })
      headersMs = performance.now() - t0
      const bytes = new Uint8Array(await response.arrayBuffer())
      responseBytes = bytes.byteLength
      if (!response.ok) {
        try {
          problem = JSON.parse(new TextDecoder().decode(bytes))
          code = problem.code ?? null
        } catch {
          /* not a problem+json answer */
        }
      }
    } catch (e) {
      error = e.name === 'TimeoutError' ? `timeout after ${timeoutMs / 1000} s` : e.message
    }
    const wallMs = performance.now() - t0
    clearInterval(sampler)
    const after = memoryOf(worker)
    const proxyAfter = proxy ? memoryOf(proxy) : null

    const reloaded = /Reloading local server|Local server updated/.test(server.log.slice(readyLogLength))
    let status
    if (error) status = `error: ${error}`
    else if (response.ok) status = 'ok'
    else if (response.status === 422 && code === 'operation_too_large') status = lifted ? `refused (422) despite MEMORY_BUDGET_MIB:${vars.MEMORY_BUDGET_MIB}` : 'refused (422)'
    else status = `error ${response.status}${code ? ` ${code}` : ''}`
    if (!after) status += ' (the measured workerd process exited)'
    if (reloaded) status += ' (dev server reloaded during the request)'
    const result = {
      key: testCase.key,
      status,
      httpStatus: response?.status ?? null,
      code,
      wallMs,
      headersMs,
      timings: response ? parseServerTiming(response.headers.get('server-timing')) : {},
      effort: response?.headers.get('x-effort') ?? null,
      // The model's estimate (rounded to whole MiB by the API): the X-Memory-Estimate header of a 200
      // answer, or the estimateMiB member of a 422 operation_too_large.
      estimateMiB: estimateOf(response, problem),
      outputWidth: response?.ok ? Number(response.headers.get('x-output-width')) || null : null,
      outputHeight: response?.ok ? Number(response.headers.get('x-output-height')) || null : null,
      outputBytes: response?.ok ? Number(response.headers.get('x-output-size') ?? responseBytes) : null,
      baselineKiB: baseline?.rss ?? null,
      hwmKiB: after?.hwm ?? null,
      peakReset,
      // Without the reset, VmHWM may still hold a peak from start-up; the growth is then an upper bound.
      upperBound: !peakReset && after && before && after.hwm <= before.hwm,
      growthMiB: after && baseline ? (after.hwm - (peakReset ? baseline.rss : before.rss)) / 1024 : null,
      proxyGrowthMiB: proxyAfter && proxyBaseline ? (proxyAfter.hwm - proxyBaseline.rss) / 1024 : null,
      workerExited: after === null,
      reloaded,
      samples,
      workerdBinary: server.worker.cmdline[0],
    }
    result.phases = phasePeaks(result, samples, baseline?.rss ?? 0)
    return result
  } finally {
    await server.stop()
  }
}

/**
 * The largest sampled RSS growth in each step. Server-Timing gives the steps' durations; they run back
 * to back and end just before the answer is sent, so their windows are laid out backwards from the
 * moment the answer's headers arrived. Approximate (10 ms samples, and the proxy hop).
 */
function phasePeaks(result, allSamples, baselineKiB) {
  const samples = allSamples.filter((s) => Number.isFinite(s.rss))
  if (!samples.length || result.httpStatus !== 200) return null
  const { decode = 0, transform = 0, encode = 0 } = result.timings
  const end = result.headersMs ?? result.wallMs
  const windows = {
    upload: [0, end - encode - transform - decode],
    decode: [end - encode - transform - decode, end - encode - transform],
    transform: [end - encode - transform, end - encode],
    encode: [end - encode, end],
  }
  const peaks = {}
  for (const [name, [from, to]] of Object.entries(windows)) {
    const inside = samples.filter((s) => s.t >= from && s.t <= to)
    peaks[name] = inside.length ? Math.max(...inside.map((s) => s.rss - baselineKiB)) / 1024 : null
  }
  // The step in which RSS first came within 1 MiB plus the answer's size of its maximum: copying the
  // answer out adds about its size afterwards, and later samples on the plateau only show that the
  // memory was not yet given back.
  const max = Math.max(...samples.map((s) => s.rss))
  const top = samples.find((s) => s.rss >= max - 1024 - (result.outputBytes ?? 0) / 1024)
  peaks.peakIn = Object.entries(windows).find(([, [from, to]]) => top.t >= from && top.t <= to)?.[0] ?? 'respond'
  return peaks
}

async function measureCase(testCase, input, options) {
  const runs = []
  for (let run = 1; run <= options.runs; run++) {
    let attempt = 0
    for (;;) {
      attempt++
      let result = await measureOnce(testCase, input, options, VARS)
      if (result.code === 'operation_too_large') {
        options.log(`  refused under the default budget; measuring again with MEMORY_BUDGET_MIB:${LIFTED_VARS.MEMORY_BUDGET_MIB}`)
        result = { ...(await measureOnce(testCase, input, options, LIFTED_VARS)), refusedByDefault: true }
      }
      if (result.reloaded && attempt < 3) {
        options.log('  the dev server reloaded during the measurement (src/ changed); measuring again')
        continue
      }
      runs.push(result)
      break
    }
  }
  // Report the run with the largest growth, and keep every run's figure.
  const worst = runs.reduce((a, b) => ((b.growthMiB ?? -1) > (a.growthMiB ?? -1) ? b : a))
  return { ...worst, runsGrowthMiB: runs.map((r) => r.growthMiB) }
}

// ---------------------------------------------------------------------------------------------------
// Output

const fmt = (n, digits = 0) => (n === null || n === undefined || Number.isNaN(n) ? '–' : n.toFixed(digits))
const mp = (c) => `${((c.width * c.height) / 1e6).toFixed(1)} MP (${c.width}×${c.height})${c.frames ? ` × ${c.frames} frames` : ''}`
const kib = (bytes) => (bytes === null || bytes === undefined ? '–' : bytes >= MiB ? `${(bytes / MiB).toFixed(1)} MiB` : `${Math.round(bytes / 1024)} KiB`)

/** What the API would answer with the default MEMORY_BUDGET_MIB, from the (rounded) estimate. */
function budgetDecision(r) {
  if (r.refusedByDefault !== undefined && r.status === 'ok') return r.refusedByDefault ? 'refused (422)' : 'allowed'
  if (r.estimateMiB === null || r.estimateMiB === undefined) return '–'
  // The API refuses when its unrounded estimate is over the budget; the header is rounded to whole MiB.
  if (r.estimateMiB === DEFAULT_MEMORY_BUDGET_MIB) return 'allowed or refused (rounds to the budget)'
  return r.estimateMiB > DEFAULT_MEMORY_BUDGET_MIB ? 'refused (422)' : 'allowed'
}

/** Measured growth above the model's estimate (the dangerous direction), in MiB; null when not both known. */
const underestimate = (r) => (r.growthMiB === null || r.estimateMiB === null || r.estimateMiB === undefined ? null : r.growthMiB - r.estimateMiB)

function caseLabel(testCase, r) {
  const base = `${INPUT_KINDS[testCase.input].label}${testCase.animation ? ` (${testCase.animation})` : ''} → ${testCase.output.toUpperCase()}`
  if (!testCase.qs) return base
  const size = r.outputWidth && r.outputHeight ? ` → ${r.outputWidth}×${r.outputHeight}` : ''
  return `${base}, ${testCase.qs.replace(/&/g, ', ')}${size}`
}

function rowOf(testCase, input, r) {
  const over = r.growthMiB !== null && r.growthMiB > BUDGET_MIB
  const spread = r.runsGrowthMiB?.length > 1 ? ` (runs: ${r.runsGrowthMiB.map((g) => fmt(g, 1)).join(', ')})` : ''
  const growth = r.growthMiB === null ? '–' : `${r.upperBound ? '≤ ' : ''}${fmt(r.growthMiB, 1)}${over ? ' **⚠ over 128**' : ''}${spread}`
  const t = r.timings
  const steps = r.httpStatus === 200 ? `${fmt(t.decode)} / ${fmt(t.transform)} / ${fmt(t.encode)}` : '–'
  const phases = r.phases ? `${fmt(r.phases.decode, 0)} / ${fmt(r.phases.transform, 0)} / ${fmt(r.phases.encode, 0)} (${r.phases.peakIn})` : '–'
  return [
    caseLabel(testCase, r),
    mp(testCase),
    kib(input.bytes),
    growth,
    fmt(r.estimateMiB),
    budgetDecision(r),
    fmt(r.wallMs),
    steps,
    phases,
    r.outputBytes ? kib(r.outputBytes) : '–',
    r.effort ?? '–',
    r.status,
  ]
}

const HEADER = [
  'input → output',
  'pixels',
  'input size',
  'peak RSS growth (MiB)',
  'model estimate (MiB)',
  `default budget (${DEFAULT_MEMORY_BUDGET_MIB} MiB)`,
  'wall ms',
  'decode / transform / encode ms',
  'sampled growth in decode / transform / encode (MiB) (peak in)',
  'output size',
  'effort',
  'status',
]

function markdownTable(rows, header = HEADER) {
  const line = (cells) => `| ${cells.join(' | ')} |`
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n')
}

function machine(workerdBinary) {
  const cpu = /model name\s*:\s*(.*)/.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? os.cpus()[0]?.model ?? 'unknown'
  const wranglerVersion = JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', 'wrangler', 'package.json'), 'utf8')).version
  const git = (...args) => {
    try {
      return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim()
    } catch {
      return ''
    }
  }
  return {
    nproc: os.availableParallelism?.() ?? os.cpus().length,
    cpu,
    memoryGiB: os.totalmem() / 1024 ** 3,
    kernel: `${os.type()} ${os.release()}`,
    node: process.version,
    wrangler: wranglerVersion,
    workerdRun: workerdBinary ? workerdVersion(workerdBinary) : 'unknown',
    workerdBin: workerdVersion(path.join(ROOT, 'node_modules', '.bin', 'workerd')),
    workerdPackage: workerdPackageVersion(ROOT),
    commit: git('rev-parse', '--short', 'HEAD'),
    dirty: git('status', '--porcelain', '--', 'src', 'wasm', 'wrangler.toml') !== '',
  }
}

function peakSummary(results) {
  const done = results.filter(({ r }) => r.phases)
  if (!done.length) return ''
  const counts = {}
  for (const { r } of done) counts[r.phases.peakIn] = (counts[r.phases.peakIn] ?? 0) + 1
  const parts = Object.entries(counts).sort((a, b) => b[1] - a[1]).map(([step, n]) => `${step} in ${n}`)
  return `Step holding the sampled peak, over the ${done.length} conversions that ran: ${parts.join(', ')}.`
}

/** Summary lines under the table: over 128, refused by the default budget, and where the model is low. */
function summaryLines(results) {
  const over = results.filter(({ r }) => r.growthMiB > BUDGET_MIB)
  const refused = results.filter(({ r }) => budgetDecision(r).startsWith('refused'))
  const allowedOver = results.filter(({ r }) => budgetDecision(r) !== 'refused (422)' && r.growthMiB > BUDGET_MIB)
  const low = results.filter(({ r }) => underestimate(r) > 0).sort((a, b) => underestimate(b.r) - underestimate(a.r))
  // The header is rounded to whole MiB, so a figure up to 0.5 MiB below it may still be above the model.
  const close = results.filter(({ r }) => underestimate(r) !== null && underestimate(r) <= 0 && underestimate(r) >= -0.5)
  const failed = results.filter(({ r }) => r.status !== 'ok')
  const keys = (list) => list.map(({ c }) => c.key).join(', ')
  return [
    over.length ? `Over 128 MiB measured: ${keys(over)}.` : 'No case that ran went over 128 MiB.',
    refused.length
      ? `Refused under the default budget of ${DEFAULT_MEMORY_BUDGET_MIB} MiB (422 operation_too_large; measured here with MEMORY_BUDGET_MIB:100000): ${keys(refused)}.`
      : `Every case is allowed under the default budget of ${DEFAULT_MEMORY_BUDGET_MIB} MiB.`,
    allowedOver.length ? `**Allowed by the default budget but measured over 128 MiB: ${keys(allowedOver)}.**` : 'No case allowed by the default budget measured over 128 MiB.',
    low.length
      ? `**Measured above the model's estimate** (the model is too low there): ${low.map(({ c, r }) => `${c.key} by ${fmt(underestimate(r), 1)} MiB (${fmt(r.growthMiB, 1)} measured, ${fmt(r.estimateMiB)} estimated)`).join('; ')}.`
      : 'No case measured above the model\'s estimate.',
    close.length
      ? `Within 0.5 MiB below the (rounded) estimate, so possibly at or above the model's unrounded figure: ${close.map(({ c, r }) => `${c.key} (${fmt(r.growthMiB, 1)} measured, ${fmt(r.estimateMiB)} estimated)`).join('; ')}.`
      : '',
    failed.length ? `Not measured as intended: ${failed.map(({ c, r }) => `${c.key} (${r.status})`).join(', ')}.` : '',
  ].filter(Boolean).join('\n')
}

function writeDocs({ results, machineInfo, args, source, date }) {
  const goal = results.filter(({ c }) => c.input === 'jpeg' && c.mp === 12 && !c.qs && ['jpeg', 'webp'].includes(c.output))
  const goalLine = goal.length
    ? goal
        .map(({ c, r }) => `12 MP JPEG → ${c.output.toUpperCase()}: ${r.status === 'ok' ? `${fmt(r.growthMiB, 1)} MiB (${r.growthMiB < BUDGET_MIB ? 'under' : 'OVER'} 128 MiB; model ${fmt(r.estimateMiB)} MiB, ${budgetDecision(r)} under the default budget)` : r.status}`)
        .join('; ')
    : 'not measured in this run'
  const animated = results.filter(({ c }) => c.animation)
  const big = animated.filter(({ c }) => c.frames >= 100 && c.width * c.height >= 1280 * 720)
  const animationGoal = big.length
    ? `\n\n**Goal (animation):** 100 frames of 1280×720, animated GIF → animated WebP, with peak growth under the ${DEFAULT_MEMORY_BUDGET_MIB} MiB budget: ${big
        .map(({ c, r }) => `${c.qs ? `${c.qs}: ` : ''}${r.status === 'ok' ? `${fmt(r.growthMiB, 1)} MiB (${r.growthMiB < DEFAULT_MEMORY_BUDGET_MIB ? 'under' : 'OVER'}; model ${fmt(r.estimateMiB)} MiB, ${budgetDecision(r)} under the default budget)` : r.status}`)
        .join('; ')}.`
    : ''
  const animationInputs = animated.length
    ? ` Animated GIFs (\`gifanim\` cases) are made by \`scripts/lib/animations.mjs\` with sharp (256 colours a frame, dithered), cached in \`.cache/animations/\`: ${[...new Map(animated.map(({ c, input }) => [c.animation, `*${c.animation}*: ${input.source}, ${kib(input.bytes)}`])).values()].join('; ')}.`
    : ''
  const text = `# Memory per conversion

Generated by \`scripts/measure-memory.mjs\`; rerun it rather than editing the figures. Only the
notes after the marker at the end are written by hand (the script keeps them).

## What is measured

A deployed Worker isolate has **128 MB**, shared by every request it serves at the same time; an
isolate that goes over is killed mid-request. Local \`workerd\` enforces no limit, so we measure what one
conversion costs:

**peak RSS growth** = VmHWM of the workerd process running the Worker after the conversion − its VmRSS
right before it, both from \`/proc/<pid>/status\`.

For each case (and each run of it) the script:

1. starts a **fresh** \`wrangler dev\` (own process group, free port, throw-away \`--persist-to\`), with
   \`--var MAX_INPUT_PIXELS:40000000 --var MAX_OUTPUT_PIXELS:40000000 --var MAX_INPUT_BYTES:104857600
   --var MEMORY_BUDGET_MIB:100000\` so that no configurable limit, and in particular not the memory
   budget, refuses a case: every case is measured, including those the API refuses by default;
2. polls \`GET /api/health\` until it answers 200, then warms up with one more \`GET /api/health\` and
   waits 0.5 s;
3. finds the workerd process that runs the Worker: \`wrangler dev\` runs two, a proxy that owns the
   public port (\`--socket-addr=entry=127.0.0.1:PORT\`; it grows by at most a few MiB, for the bodies)
   and the runtime behind it, which is the one measured;
4. reads its VmRSS (the baseline) and resets its VmHWM to the current RSS (\`echo 5 > /proc/<pid>/clear_refs\`),
   so a peak from start-up cannot hide in the figure;
5. sends the one conversion, \`POST /api/compress?format=OUTPUT\` (plus the case's options, e.g.
   \`&width=1600\`) with the raw image as the body (default quality and effort), sampling VmRSS every
   10 ms meanwhile;
6. reads VmHWM, and stops wrangler (SIGTERM, then SIGKILL, to the process group; checks that no
   workerd is left).

**Why a fresh process per case:** WebAssembly memory never shrinks while its instance lives, and
V8 collects dropped instances whenever it likes; in a process that has already converted a large image,
the next conversion can reuse pages that are already resident and show little or no growth. A fresh
process makes each figure the cost of that conversion alone. It is therefore the cost of one request
in an otherwise idle isolate: concurrent requests wait for the isolate's single conversion slot
(\`src/lib/slot.ts\`), but their bodies and the garbage of the previous conversion may still be resident.

The figure is the whole process's resident memory, so it also counts things a deployed isolate's limit
may count differently (V8 heap headroom, allocator caches, the request body in workerd's buffers). Treat it
as a close upper estimate of what the isolate needs, and keep a margin.

The **model estimate** is the API's own estimate of the same conversion: the \`X-Memory-Estimate\`
header of the answer, computed by \`estimateMiB\` with \`MEMORY_MODEL\` in \`src/pipeline/limits.ts\`
(rounded to whole MiB). **default budget** is what the API answers with the default
\`MEMORY_BUDGET_MIB\` of ${DEFAULT_MEMORY_BUDGET_MIB} MiB (\`src/env.ts\`): *refused (422)* (\`operation_too_large\`) when the
estimate is over it, otherwise *allowed*. A row whose measured growth is **above** its estimate is one
where the model is too low, the dangerous direction: the budget check lets through more than it counts.

The **sampled growth in decode / transform / encode** columns are the largest 10 ms RSS samples within each step's
window (laid out backwards from the arrival of the answer's headers with the Server-Timing
durations): approximate, but they show which step holds the peak; *peak in* names the step in which
RSS first came within 1 MiB plus the answer's size of its maximum (copying the answer out adds about
its size afterwards; *respond*: after the headers left). Memory of the decoder is garbage once decode returns but is
only returned when V8 collects it, so the encode window can still include it.

## Inputs

${source}. JPEG inputs are written like a phone camera's (baseline, quality 90, 4:2:0); the PNG input
is RGB (oxipng level 1). Cached in \`.cache/memory-inputs/\`.${animationInputs}

## Machine

| | |
| --- | --- |
| CPU | ${machineInfo.cpu}, nproc ${machineInfo.nproc} |
| memory | ${fmt(machineInfo.memoryGiB, 1)} GiB |
| kernel | ${machineInfo.kernel} |
| node | ${machineInfo.node} |
| wrangler | ${machineInfo.wrangler} |
| workerd | ${machineInfo.workerdPackage} |
| tree | as committed${machineInfo.dirty ? ', with uncommitted changes in src/ or wasm/' : ''} |

## Rerun

\`\`\`
npm run memory                 # all cases; rewrites this file (about ${args.minutes ?? '?'} minutes here)
npm run memory -- --quick      # 1 and 12 MP to JPEG and WebP; prints only
npm run memory -- --only 'webp:12,png>webp:12,webp:12@width=1600' --runs 3
npm run memory -- --only 'gifanim>webp:pan720,gifanim>webp:pan720@width=640,gifanim>webp:pan'
\`\`\`

Run it on an otherwise quiet machine: memory figures do not depend on load, but wall times do.

## Results

Command: \`${args.command}\`${args.deepWarmup ? ' (warm-up: GET /api/health?deep=1)' : ''}${args.runs > 1 ? ` (largest growth of ${args.runs} runs per case)` : ''}.

**Goal:** a 12 MP phone photo to WebP and to JPEG with peak growth under 128 MiB: ${goalLine}.${animationGoal}

${markdownTable(results.map(({ c, input, r }) => rowOf(c, input, r)))}

${peakSummary(results)}

${summaryLines(results)}
`
  // Hand-written notes after the marker survive a rerun.
  const file = path.join(ROOT, 'docs', 'results', 'memory.md')
  const previous = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : ''
  const kept = previous.includes(NOTES_MARKER) ? previous.slice(previous.indexOf(NOTES_MARKER) + NOTES_MARKER.length) : '\n'
  fs.writeFileSync(file, `${text.replace(/\n{3,}/g, '\n\n').trimEnd()}\n\n${NOTES_MARKER}${kept}`)
}

// ---------------------------------------------------------------------------------------------------

/** `--matrix`: the table of scripts/lib/memory-matrix.mjs, printed, and written to --out. */
async function matrix(args, { source, log }) {
  const plan = { ...(args.quick ? MATRIX_QUICK : MATRIX), ...args.plan }
  const options = { cwd: ROOT, timeoutMs: args.timeout * 1000, deepWarmup: args.deepWarmup, log }
  let workerdBinary = null
  const measure = async (testCase, input, vars) => {
    for (let attempt = 1; ; attempt++) {
      const r = await measureOnce(testCase, input, options, vars)
      workerdBinary ??= r.workerdBinary
      if (!r.reloaded || attempt === 3) return r
      log(`  ${testCase.key}: the dev server reloaded during the measurement (src/ changed); measuring again`)
    }
  }
  const result = await runMatrix({
    plan,
    measure,
    vars: { RATE_LIMIT_ANON_PER_MINUTE: '0', ...args.vars },
    flagMiB: DEFAULT_MEMORY_BUDGET_MIB,
    measureRefused: args.measureRefused,
    jobs: args.jobs,
    inputOptions: { root: ROOT, corpusDir: args.corpus, cacheDir: INPUTS, log },
    log,
  })
  const date = new Date().toISOString().replace(/\.\d+Z$/, 'Z')
  console.log(`\n${matrixLegend(DEFAULT_MEMORY_BUDGET_MIB)}\n\n${result.table}\n\n${result.summary}`)
  fs.mkdirSync(CACHE, { recursive: true })
  fs.writeFileSync(path.join(CACHE, 'memory-matrix.json'), JSON.stringify({ date, args, plan, cells: result.cells }, null, 2))
  if (args.out && args.merge && fs.existsSync(args.out)) {
    mergeMatrix(args.out, { ...result, command: args.command, date, machine: machine(workerdBinary) })
    log(`\nmerged into ${path.relative(process.cwd(), args.out)}`)
  } else if (args.out) {
    writeMatrix(args.out, { ...result, command: args.command, date, machine: machine(workerdBinary), flagMiB: DEFAULT_MEMORY_BUDGET_MIB, source })
    log(`\nwrote ${path.relative(process.cwd(), args.out)}`)
  }
}

async function main() {
  if (process.platform !== 'linux') fail('needs Linux (/proc)')
  if (Number(process.versions.node.split('.')[0]) < 22) fail(`Node ${process.version}: wrangler needs Node >= 22 (run with node_modules/.bin/node)`)
  const args = parseArgs(process.argv.slice(2))
  args.command = ['npm run memory', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])].join(' ')
  const log = (message) => console.error(message)
  const source = sourcePhoto(args.corpus, ROOT)
  const sourceText = source?.startsWith(args.corpus)
    ? `Made from the corpus photo \`${path.basename(source)}\`, resized (lanczos3, with @jsquash/resize in Node) to each size, plus light deterministic grain (σ≈5) so file sizes are near a phone's`
    : `No corpus photo was found, so the inputs are \`test/fixtures/${path.basename(source ?? '?')}\` enlarged (lanczos3) to each size, plus light deterministic grain (σ≈5)`

  if (args.matrix) return matrix(args, { source: sourceText, log })

  const cases = selectCases(args)
  const inputs = new Map()
  for (const c of cases) inputs.set(c.key, await inputOf(c, { root: ROOT, corpusDir: args.corpus, cacheDir: INPUTS, log }))

  const started = Date.now()
  const options = { cwd: ROOT, timeoutMs: args.timeout * 1000, runs: args.runs, deepWarmup: args.deepWarmup, log }
  const results = []
  let workerdBinary = null
  for (const [index, c] of cases.entries()) {
    const input = inputs.get(c.key)
    log(`[${index + 1}/${cases.length}] ${c.key}: ${INPUT_KINDS[c.input].label} ${c.width}x${c.height}${c.frames ? ` x ${c.frames} frames` : ''} (${kib(input.bytes)}) -> ${c.output}`)
    const r = await measureCase(c, input, options)
    workerdBinary ??= r.workerdBinary
    log(`  ${r.status}: growth ${fmt(r.growthMiB, 1)} MiB, wall ${fmt(r.wallMs)} ms, ${JSON.stringify(r.timings)}`)
    results.push({ c, input, r })
  }

  const date = new Date().toISOString().replace(/\.\d+Z$/, 'Z')
  args.minutes = Math.max(1, Math.round((Date.now() - started) / 60_000))
  console.log(`\n${markdownTable(results.map(({ c, input, r }) => rowOf(c, input, r)))}\n\n${summaryLines(results)}`)

  fs.mkdirSync(CACHE, { recursive: true })
  const strip = (list) => list.map(({ c, input, r }) => ({ case: c, input: { ...input, file: path.relative(ROOT, input.file) }, result: { ...r, samples: undefined } }))
  fs.writeFileSync(path.join(CACHE, 'memory-results.json'), JSON.stringify({ date, args, defaultMemoryBudgetMiB: DEFAULT_MEMORY_BUDGET_MIB, results: strip(results) }, null, 2))
  if (args.docs) {
    writeDocs({ results, machineInfo: machine(workerdBinary), args, source: sourceText, date })
    log('\nwrote docs/results/memory.md')
  }
  const over = results.filter(({ r }) => r.growthMiB > BUDGET_MIB).map(({ c }) => c.key)
  if (over.length) log(`over ${BUDGET_MIB} MiB: ${over.join(', ')}`)
}

main().catch((error) => {
  console.error(error.stack ?? error)
  process.exit(1)
})
