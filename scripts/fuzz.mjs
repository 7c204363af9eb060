#!/usr/bin/env node
// Seeded, bounded mutation fuzzing of POST /api/compress against a real `wrangler dev`.
//
//   npm run fuzz                       # 2000 mutants per input format (10000 in all), at most 12 min;
//                                      # writes the "fuzz" section of docs/results/robustness.md
//   npm run fuzz -- --quick            # 100 per format, at most 90 s (what CI runs; FUZZ_QUICK=1 too)
//   npm run fuzz -- --seed 7 --count 300 --minutes 5
//   npm run fuzz -- --base http://127.0.0.1:8787   # against a server you started (rate limit off!)
//
// (without npm: node_modules/.bin/node scripts/fuzz.mjs ...; needs Node >= 22 and Linux for memory)
//
// Each mutant is one of the fixtures of its format (test/fixtures/, the small conformance copies
// included) after 1-4 seeded mutations from test/helpers/hostile.ts: bit flips, byte sets, chunk
// deletions and duplications, truncations, 16/32-bit header field edits, splices; PNG mutants
// half the time with their chunk CRCs fixed so the change reaches the decoder. Most are sent with
// `effort=0&width=96` (cheap to encode), about one in four with random options, boundary values
// included (huge width/height, fit, format, quality, lossless...), so the planner and the encoders
// are fuzzed too.
//
// Every answer is classified: 2xx, 4xx by problem code, 5xx, a 4xx that is not problem+json,
// connection error (dropped, reset), timeout (no answer in --timeout s). Any 5xx, connection error,
// timeout or non-problem 4xx fails the run (exit 1), and its input is saved to --out (default
// .cache/fuzz-findings/) as <format>-<n>.<ext> with a .json beside it saying how to resend it.
// After the run the script checks that the worker still converts a valid image, and (for a server
// it started) reports the workerd process's memory before, at its peak and after.
//
// Options:
//   --quick            100 per format, 90 s budget, no docs
//   --count N          mutants per format (default 2000)
//   --minutes M        overall time budget (default 12); the run stops early, and says so, at it
//   --seed S           PRNG seed (default 1); the same seed sends the same inputs
//   --concurrency C    requests in flight (default 2; the worker converts one at a time anyway)
//   --timeout S        per-request timeout in seconds (default 30)
//   --formats LIST     e.g. png,gif (default jpeg,png,webp,avif,gif)
//   --query Q          the options most mutants are sent with (default effort=0&width=96; e.g. format=webp&effort=0&width=96
//                      sends GIFs down the animation path too)
//   --base URL         use a running server instead of starting wrangler dev
//   --out DIR          where findings go (default .cache/fuzz-findings)
//   --docs / --no-docs write docs/results/robustness.md (default: full runs only)

import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { killStarted, memoryOf, resetPeak, startWorker } from './lib/devserver.mjs'
import { markdownTable, mib, percentile, replaceSection } from './lib/report.mjs'
import { mutate, pick, prng } from '../test/helpers/hostile.ts'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const FIXTURES = path.join(ROOT, 'test', 'fixtures')
const DOCS = path.join(ROOT, 'docs', 'results', 'robustness.md')

function parseArgs(argv) {
  const quick = argv.includes('--quick') || process.env.FUZZ_QUICK === '1'
  const args = {
    quick,
    count: quick ? 100 : 2000,
    minutes: quick ? 1.5 : 12,
    seed: 1,
    concurrency: 2,
    timeout: 30,
    formats: ['jpeg', 'png', 'webp', 'avif', 'gif'],
    query: 'effort=0&width=96',
    base: null,
    out: path.join(ROOT, '.cache', 'fuzz-findings'),
    docs: null,
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    const value = () => {
      const v = argv[++i]
      if (v === undefined) fail(`${arg} needs a value`)
      return v
    }
    switch (arg) {
      case '--quick': break
      case '--count': args.count = Number(value()); break
      case '--minutes': args.minutes = Number(value()); break
      case '--seed': args.seed = Number(value()); break
      case '--concurrency': args.concurrency = Number(value()); break
      case '--timeout': args.timeout = Number(value()); break
      case '--formats': args.formats = value().split(','); break
      case '--query': args.query = value(); break
      case '--base': args.base = value().replace(/\/$/, ''); break
      case '--out': args.out = path.resolve(value()); break
      case '--docs': args.docs = true; break
      case '--no-docs': args.docs = false; break
      case '-h': case '--help': {
        const lines = fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(1)
        console.log(lines.slice(0, lines.findIndex((l) => !l.startsWith('//'))).map((l) => l.slice(3)).join('\n'))
        process.exit(0)
      }
      default: fail(`unknown argument ${arg} (see --help)`)
    }
  }
  for (const name of ['count', 'minutes', 'seed', 'concurrency', 'timeout']) {
    if (!Number.isFinite(args[name]) || args[name] <= 0) fail(`--${name} must be a positive number`)
  }
  args.docs ??= !quick && !args.base
  return args
}

function fail(message) {
  console.error(`fuzz: ${message}`)
  process.exit(2)
}

/** The inputs each format's mutants start from: small files, so that thousands fit in minutes. */
const SEEDS = {
  jpeg: ['photo.jpg', 'progressive.jpg', 'exif-6.jpg', 'corpus/bad/jsquash/test.jpeg', 'corpus/bad/thumbor/invalid_quantization.jpg'],
  png: ['basi6a08.png', 'basn3p08.png', 'tbrn2c08.png', 's09i3p02.png', 'basn0g16.png', 'corpus/pngsuite/oi9n0g16.png', 'corpus/bad/jsquash/test-16bit.png'],
  webp: ['photo.webp', 'anim.webp', 'corpus/formats/lossy_alpha.webp', 'corpus/bad/jsquash/test.webp', 'corpus/formats/test.webp'],
  avif: ['photo.avif', 'corpus/formats/circle_custom_properties.avif', 'corpus/bad/jsquash/test-10bit.avif', 'corpus/formats/colors-animated-8bpc.avif'],
  gif: ['alpha.gif', 'anim.gif'],
}
const EXT = { jpeg: 'jpg', png: 'png', webp: 'webp', avif: 'avif', gif: 'gif' }

/** Random options, boundary values included; invalid combinations get 400, which is fine. */
function randomQuery(random) {
  const params = new URLSearchParams()
  const maybe = (p) => random() < p
  const oneOf = (list) => list[pick(random, list.length)]
  if (maybe(0.7)) params.set('format', oneOf(['jpeg', 'png', 'webp', 'avif', 'auto', 'jpg']))
  if (maybe(0.5)) params.set('width', String(oneOf([1, 2, 17, 64, 300, 1000, 4096, 16383, 16384, 16385, 0, -1])))
  if (maybe(0.4)) params.set('height', String(oneOf([1, 3, 64, 999, 16384, 65535])))
  if (maybe(0.3)) params.set('fit', oneOf(['inside', 'cover', 'contain', 'fill']))
  if (maybe(0.3)) params.set('enlarge', oneOf(['true', 'false']))
  if (maybe(0.3)) params.set('quality', String(oneOf([1, 50, 100, 0, 101])))
  if (maybe(0.2)) params.set('lossless', oneOf(['true', '1']))
  params.set('effort', String(maybe(0.9) ? 0 : oneOf([0, 1, 2])))
  if (maybe(0.2)) params.set('background', oneOf(['000', '#ff00ff', 'zzz']))
  return params.toString()
}

async function send(base, bytes, query, timeoutMs) {
  const started = performance.now()
  try {
    const res = await fetch(`${base}/api/compress?${query}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/octet-stream' },
      body: bytes,
      signal: AbortSignal.timeout(timeoutMs),
    })
    const body = await res.arrayBuffer()
    const ms = performance.now() - started
    if (res.status < 400) return { kind: `${res.status}`, ok: true, ms }
    let code = '?'
    const problem = res.headers.get('content-type') === 'application/problem+json'
    try {
      code = JSON.parse(new TextDecoder().decode(body)).code ?? '?'
    } catch {
      /* not JSON */
    }
    if (res.status >= 500) return { kind: `5xx ${res.status} ${code}`, ok: false, ms, detail: new TextDecoder().decode(body).slice(0, 300) }
    if (!problem) return { kind: `${res.status} not problem+json`, ok: false, ms }
    return { kind: `4xx ${code}`, ok: true, ms }
  } catch (error) {
    const ms = performance.now() - started
    if (error?.name === 'TimeoutError') return { kind: 'timeout', ok: false, ms }
    return { kind: 'connection error', ok: false, ms, detail: String(error?.cause?.code ?? error?.cause ?? error) }
  }
}

async function stillServing(base) {
  const png = fs.readFileSync(path.join(FIXTURES, 'basn3p08.png'))
  const res = await fetch(`${base}/api/compress?format=webp`, { method: 'POST', headers: { 'Content-Type': 'image/png' }, body: png, signal: AbortSignal.timeout(30_000) })
  await res.arrayBuffer()
  return res.status === 200
}

async function main() {
  const args = parseArgs(process.argv.slice(2))
  const deadline = Date.now() + args.minutes * 60_000

  let dev = null
  let base = args.base
  if (!base) {
    console.log('starting wrangler dev ...')
    dev = await startWorker({ root: ROOT, prefix: 'imgedge-fuzz-', vars: { RATE_LIMIT_ANON_PER_MINUTE: '0' } })
    base = dev.base
  }
  const pid = dev?.worker?.pid
  if (!(await stillServing(base))) fail('the server does not convert a valid PNG before the run')
  const memStart = pid ? memoryOf(pid) : null
  if (pid) resetPeak(pid)

  console.log(`fuzzing ${base}: seed ${args.seed}, ${args.count} per format (${args.formats.join(', ')}), concurrency ${args.concurrency}, budget ${args.minutes} min`)
  const started = Date.now()
  const results = {}
  const findings = []
  let stoppedEarly = false
  for (const [f, format] of args.formats.entries()) {
    const seeds = (SEEDS[format] ?? fail(`unknown format ${format}`)).map((name) => new Uint8Array(fs.readFileSync(path.join(FIXTURES, name))))
    const random = prng(args.seed * 1000 + f)
    const stats = (results[format] = { sent: 0, kinds: {}, ms: [] })
    let next = 0
    const worker = async () => {
      while (next < args.count && Date.now() < deadline) {
        const n = next++
        const source = seeds[pick(random, seeds.length)]
        const mutant = mutate(source, random)
        const query = random() < 0.25 ? randomQuery(random) : args.query
        const result = await send(base, mutant.bytes, query, args.timeout * 1000)
        stats.sent++
        stats.kinds[result.kind] = (stats.kinds[result.kind] ?? 0) + 1
        stats.ms.push(result.ms)
        if (!result.ok) {
          fs.mkdirSync(args.out, { recursive: true })
          const file = path.join(args.out, `${format}-seed${args.seed}-${n}.${EXT[format]}`)
          fs.writeFileSync(file, mutant.bytes)
          const finding = { file: path.relative(ROOT, file), format, query, mutation: mutant.description, got: result.kind, detail: result.detail, resend: `curl -sS -D - --data-binary @${path.relative(ROOT, file)} -H 'Content-Type: application/octet-stream' '${base}/api/compress?${query}'` }
          fs.writeFileSync(`${file}.json`, `${JSON.stringify(finding, null, 2)}\n`)
          findings.push(finding)
          console.log(`  FINDING ${format} #${n}: ${result.kind} (${mutant.description}; ?${query}) -> ${finding.file}`)
        }
      }
    }
    await Promise.all(Array.from({ length: args.concurrency }, worker))
    if (stats.sent < args.count) stoppedEarly = true
    const summary = Object.entries(stats.kinds).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k}: ${v}`).join(', ')
    console.log(`${format.padEnd(5)} ${String(stats.sent).padStart(5)} sent, p50 ${percentile(stats.ms, 50).toFixed(0)} ms, p99 ${percentile(stats.ms, 99).toFixed(0)} ms | ${summary}`)
  }
  const seconds = (Date.now() - started) / 1000

  const serving = await stillServing(base)
  let memory = null
  if (pid) {
    const peak = memoryOf(pid)
    await new Promise((resolve) => setTimeout(resolve, 5000))
    const after = memoryOf(pid)
    memory = { start: memStart?.rss, peak: peak?.hwm, after: after?.rss, alive: Boolean(after) }
    console.log(memory.alive ? `workerd RSS: ${mib(memory.start)} MiB at the start, peak ${mib(memory.peak)} MiB, ${mib(memory.after)} MiB 5 s after the run` : 'workerd is gone!')
  }
  const total = Object.values(results).reduce((n, s) => n + s.sent, 0)
  console.log(`${total} requests in ${seconds.toFixed(0)} s; ${findings.length} findings; still serving: ${serving}${stoppedEarly ? '; stopped at the time budget' : ''}`)

  if (args.docs) {
    const kinds = [...new Set(Object.values(results).flatMap((s) => Object.keys(s.kinds)))].sort()
    const rows = Object.entries(results).map(([format, s]) => [format, s.sent, ...kinds.map((k) => s.kinds[k] ?? 0), `${percentile(s.ms, 50).toFixed(0)} / ${percentile(s.ms, 99).toFixed(0)}`])
    const md = [
      `Last run: \`npm run fuzz -- --seed ${args.seed} --count ${args.count}\` against a fresh \`wrangler dev\` (rate limit off),`,
      `${os.cpus().length} CPUs. ${total} requests in ${seconds.toFixed(0)} s${stoppedEarly ? ' (stopped at the time budget)' : ''}; **${findings.length} findings** (5xx, connection errors, timeouts, 4xx without problem+json).`,
      '',
      markdownTable(['format', 'sent', ...kinds, 'ms p50 / p99'], rows),
      '',
      memory
        ? `workerd RSS: ${mib(memory.start)} MiB before the run, peak ${mib(memory.peak)} MiB during it, ${mib(memory.after)} MiB 5 s after. A valid conversion succeeded after the run: ${serving ? 'yes' : 'NO'}.`
        : '',
      findings.length ? `\nFindings:\n\n${findings.map((f) => `- \`${f.file}\`: ${f.got} (${f.mutation}; \`?${f.query}\`)`).join('\n')}` : '',
    ].join('\n')
    replaceSection(DOCS, 'fuzz', md)
    console.log(`wrote the fuzz section of ${path.relative(ROOT, DOCS)}`)
  }

  if (dev) await dev.stop()
  const failed = findings.length > 0 || !serving || (memory && !memory.alive)
  process.exit(failed ? 1 : 0)
}

main().catch((error) => {
  console.error(error)
  killStarted()
  process.exit(1)
})
