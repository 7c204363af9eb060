#!/usr/bin/env node
// Memory of a Worker isolate that serves request after request, not only its first one: peak RSS of
// workerd over its idle RSS (after one GET /api/health) while one `wrangler dev` serves
//
//   a sequence: the same conversion N times back to back (the worst and each peak), and
//   clients:    K clients at once, each sending its conversions one after another (the peak while they
//               run, and what stays resident after them).
//
//   npm run memory:steady                                  # the default plan below; prints a table
//   npm run memory:steady -- --only jpeg:12 --times 6      # one sequence
//   npm run memory:steady -- --clients 12 --mix jpeg:12,webp:12,jpeg:4@width=1200 --requests 3
//   npm run memory:steady -- --rounds 20                   # sustained traffic, against the control too
//
// (without npm: node_modules/.bin/node scripts/measure-steady.mjs ...; needs Node >= 22 and Linux)
//
// Case keys as in scripts/measure-memory.mjs (both read by scripts/lib/inputs.mjs): OUTPUT:MP for a
// phone-like JPEG (webp:12), INPUT>OUTPUT:MP for other inputs (png>webp:4, avif>jpeg:12), @QUERY for options. The default memory budget applies: a request it
// refuses counts as refused and measures only what refusing costs.
//
// Options:
//   --only LIST      sequences to run (default: jpeg:12, webp:12, jpeg:12@width=1600, webp:4@width=1200)
//   --times N        conversions per sequence (default 6)
//   --clients K      also run K concurrent clients (default 12; 0: none)
//   --mix LIST       the cases the clients cycle through (default jpeg:12,webp:12,webp:4@width=1200,jpeg:1)
//   --requests R     conversions per client (default 3)
//   --corpus DIR     photos to make the inputs from (default ../shared/corpus/photos)
//   --control        also send the clients' requests, the same bodies in the same order, to a Worker that
//                    answers at once and never reads them (scripts/lib/control-worker): what workerd grows by
//                    for the request bytes alone under wrangler dev, whatever the Worker does
//   --rounds N       instead: N rounds of sustained traffic (scripts/lib/steady-rounds.mjs): --clients clients (12)
//                    sending small conversions of held-out photos back to back for --seconds (20) each round, then
//                    both workerd processes' RSS, the isolate's V8 heap and what it says it holds
//                    (/api/health?memory=1); the same rounds, as many requests each, against the control Worker
//   --seconds S      a round's length (default 20)
//   --no-control     rounds: imgedge only
//   --observability  rounds: leave wrangler's local traces on (X_LOCAL_OBSERVABILITY; off by default in both runs)
//   --var NAME:VALUE rounds: a var for both Workers over the mode's own (repeatable; e.g. RATE_LIMIT_ANON_PER_MINUTE:0)
//   --json FILE      also write the results as JSON

import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { memoryOf, resetPeak, startWorker } from './lib/devserver.mjs'
import { caseOfKey, INPUT_KINDS, inputOf } from './lib/inputs.mjs'
import { answerStatus, steadyCheck } from './lib/steady-rounds.mjs'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const INPUTS = path.join(ROOT, '.cache', 'memory-inputs')
const VARS = { MAX_INPUT_BYTES: '104857600', RATE_LIMIT_ANON_PER_MINUTE: '0', QUEUE_TIMEOUT_MS: '600000' }
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

function parseArgs(argv) {
  const args = {
    only: ['jpeg:12', 'webp:12', 'jpeg:12@width=1600', 'webp:4@width=1200'],
    times: 6,
    clients: 12,
    mix: ['jpeg:12', 'webp:12', 'webp:4@width=1200', 'jpeg:1'],
    requests: 3,
    corpus: path.resolve(ROOT, '..', 'shared', 'corpus', 'photos'),
    json: null,
    control: false,
    rounds: 0,
    seconds: 20,
    roundsControl: true,
    vars: {},
    observability: false,
  }
  for (let i = 0; i < argv.length; i++) {
    const [name, inline] = argv[i].includes('=') && argv[i].startsWith('--') ? [argv[i].slice(0, argv[i].indexOf('=')), argv[i].slice(argv[i].indexOf('=') + 1)] : [argv[i], undefined]
    const value = () => inline ?? argv[++i]
    const list = () => value().split(',').map((s) => s.trim()).filter(Boolean)
    switch (name) {
      case '--only': args.only = list(); break
      case '--times': args.times = Number(value()); break
      case '--clients': args.clients = Number(value()); break
      case '--mix': args.mix = list(); break
      case '--requests': args.requests = Number(value()); break
      case '--corpus': args.corpus = path.resolve(value()); break
      case '--json': args.json = value(); break
      case '--control': args.control = true; break
      case '--rounds': args.rounds = Number(value()); break
      case '--seconds': args.seconds = Number(value()); break
      case '--no-control': args.roundsControl = false; break
      case '--observability': args.observability = true; break
      case '--var': {
        const [key, ...rest] = value().split(':')
        args.vars[key] = rest.join(':')
        break
      }
      default:
        console.error(`measure-steady: unknown argument ${argv[i]}`)
        process.exit(2)
    }
  }
  return args
}

async function inputFor(testCase, corpus) {
  const made = await inputOf(testCase, { root: ROOT, corpusDir: corpus, cacheDir: INPUTS, log: console.log })
  return fs.readFileSync(made.file)
}

async function convert(base, testCase, body) {
  const res = await fetch(`${base}/api/compress?format=${testCase.output}${testCase.qs ? `&${testCase.qs}` : ''}`, {
    method: 'POST',
    headers: { 'Content-Type': INPUT_KINDS[testCase.input].mime },
    body,
    signal: AbortSignal.timeout(300_000),
  })
  return answerStatus(res)
}

/** A fresh wrangler dev, idle after one GET /api/health: `work` gets its base URL, pid and idle RSS (KiB). */
async function withServer(work, cwd = ROOT) {
  const server = await startWorker({ root: ROOT, cwd, vars: VARS, prefix: 'imgedge-steady-', log: () => {} })
  try {
    await (await fetch(`${server.base}/api/health`)).arrayBuffer()
    await sleep(500)
    const pid = server.worker.pid
    return await work({ base: server.base, pid, idle: memoryOf(pid).rss })
  } finally {
    await server.stop()
  }
}

const mib = (kib) => Math.round((kib / 1024) * 10) / 10

async function sequence(testCase, body, times) {
  return withServer(async ({ base, pid, idle }) => {
    const peaks = []
    const statuses = []
    for (let i = 0; i < times; i++) {
      resetPeak(pid)
      statuses.push(await convert(base, testCase, body))
      peaks.push(mib(memoryOf(pid).hwm - idle))
    }
    await sleep(1000)
    return { key: testCase.key, peaks, statuses: [...new Set(statuses)], worst: Math.max(...peaks), after: mib(memoryOf(pid).rss - idle) }
  })
}

async function clients(mix, bodies, count, requests, cwd = ROOT) {
  return withServer(async ({ base, pid, idle }) => {
    resetPeak(pid)
    let sampled = 0
    const sampler = setInterval(() => {
      const m = memoryOf(pid)
      if (m) sampled = Math.max(sampled, m.rss)
    }, 20)
    const statuses = {}
    const t0 = performance.now()
    await Promise.all(
      Array.from({ length: count }, async (_, client) => {
        for (let r = 0; r < requests; r++) {
          const testCase = mix[(client + r) % mix.length]
          const status = await convert(base, testCase, bodies.get(testCase.key)).catch((e) => e.message)
          statuses[status] = (statuses[status] ?? 0) + 1
        }
      }),
    )
    clearInterval(sampler)
    const seconds = (performance.now() - t0) / 1000
    const peak = mib(memoryOf(pid).hwm - idle)
    await sleep(1000)
    return { clients: count, requests, mix: mix.map((c) => c.key), peak, sampledPeak: mib(sampled - idle), after: mib(memoryOf(pid).rss - idle), statuses, seconds: Math.round(seconds) }
  }, cwd)
}

/** `--rounds`: imgedge, then the control, each a fresh wrangler dev (scripts/lib/steady-rounds.mjs). */
async function roundsMode(args) {
  const run = await steadyCheck({
    root: ROOT,
    corpusDir: args.corpus,
    cacheDir: INPUTS,
    rounds: args.rounds,
    clients: args.clients || 12,
    seconds: args.seconds,
    vars: args.vars,
    control: args.roundsControl,
    observability: args.observability,
  })
  console.log(`\nMiB; RSS over the idle RSS after one GET /api/health. The Worker's process runs the isolate, the proxy owns the port.\n`)
  console.log(run.table)
  console.log(`\n${run.verdict.line}`)
  if (args.json) fs.writeFileSync(args.json, `${JSON.stringify(run, null, 2)}\n`)
  return run.verdict
}

const args = parseArgs(process.argv.slice(2))
if (args.rounds > 0) {
  const verdict = await roundsMode(args)
  process.exit(verdict.pass ? 0 : 1)
}
const sequences = args.only.map(caseOfKey)
const mix = args.clients > 0 ? args.mix.map(caseOfKey) : []
const bodies = new Map()
for (const c of [...sequences, ...mix]) if (!bodies.has(c.key)) bodies.set(c.key, await inputFor(c, args.corpus))

const results = { sequences: [], clients: null, control: null }
console.log(`| conversion | ${Array.from({ length: args.times }, (_, i) => `#${i + 1}`).join(' | ')} | worst | resident after | answers |`)
console.log(`|---|${'---|'.repeat(args.times)}---|---|---|`)
for (const c of sequences) {
  const r = await sequence(c, bodies.get(c.key), args.times)
  results.sequences.push(r)
  console.log(`| ${r.key} | ${r.peaks.join(' | ')} | ${r.worst} | ${r.after} | ${r.statuses.join(', ')} |`)
}
if (mix.length) {
  const r = await clients(mix, bodies, args.clients, args.requests)
  results.clients = r
  console.log(`\n${r.clients} clients x ${r.requests} conversions (${r.mix.join(', ')}): peak +${r.peak} MiB over idle (sampled +${r.sampledPeak}), +${r.after} MiB resident after, ${r.seconds} s; answers ${JSON.stringify(r.statuses)}`)
  if (args.control) {
    const k = await clients(mix, bodies, args.clients, args.requests, path.join(ROOT, 'scripts', 'lib', 'control-worker'))
    results.control = k
    console.log(`control (the same requests to a Worker that never reads them): peak +${k.peak} MiB over idle (sampled +${k.sampledPeak}), +${k.after} MiB resident after, ${k.seconds} s; answers ${JSON.stringify(k.statuses)}`)
  }
}
if (args.json) fs.writeFileSync(args.json, `${JSON.stringify(results, null, 2)}\n`)
