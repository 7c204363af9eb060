#!/usr/bin/env node
// gravity=auto's share of a conversion: a 12 MP JPEG to square WebP covers of 300, 640 and 1600 px, with gravity=auto
// and with gravity=center, alternating, in a `wrangler dev`; the median of each and the difference as a share of the
// centred conversion, and the median of each pair's difference, which moves less on a shared machine; then the same for
// the pipeline alone, the sum of each answer's Server-Timing steps (what wrangler dev's own transfer of the body does not
// blur), and the CPU time workerd's threads spent on each request (/proc/PID/task/*/schedstat: what a shared machine's
// waits do not count) (docs/results/transformations.md). The input is the memory matrix's (scripts/lib/inputs.mjs).
//
//   node_modules/.bin/node scripts/gravity-auto-share.mjs [--runs 7] [--corpus DIR] [--gravity face]
//   (DIR: default ../shared/corpus/photos; --gravity face measures gravity=face in gravity=auto's place)
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { startWorker } from './lib/devserver.mjs'
import { makeInput, SIZES } from './lib/inputs.mjs'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const argument = (name) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined)
const runs = Number(argument('--runs') ?? 7)
const tested = argument('--gravity') ?? 'auto'
const corpusDir = path.resolve(argument('--corpus') ?? path.join(ROOT, '..', 'shared', 'corpus', 'photos'))
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
/** The CPU time, in ms, of every thread of every workerd process on the machine (only the one started here runs). */
function workerdCpuMs() {
  let ns = 0
  for (const pid of fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (!fs.readFileSync(`/proc/${pid}/comm`, 'utf8').startsWith('workerd')) continue
      for (const task of fs.readdirSync(`/proc/${pid}/task`)) ns += Number(fs.readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0])
    } catch {
      // (a process or thread that ended meanwhile)
    }
  }
  return ns / 1e6
}
/** The sum of an answer's Server-Timing durations, in ms. */
const stepsMs = (res) => [...(res.headers.get('server-timing') ?? '').matchAll(/dur=([\d.]+)/g)].reduce((sum, m) => sum + Number(m[1]), 0)

const [w, h] = SIZES[12]
const body = fs.readFileSync((await makeInput({ format: 'jpeg', width: w, height: h }, { root: ROOT, corpusDir, cacheDir: path.join(ROOT, '.cache', 'memory-inputs'), log: console.error })).file)
const server = await startWorker({ root: ROOT, cwd: ROOT, vars: { RATE_LIMIT_ANON_PER_MINUTE: '0' }, log: () => {} })
try {
  console.log(`load average ${os.loadavg().map((l) => l.toFixed(2)).join(', ')}; median of ${runs}\n`)
  const rows = { request: [], steps: [], cpu: [] }
  for (const side of [300, 640, 1600]) {
    const times = { auto: [], center: [], pairs: [] }
    const steps = { auto: [], center: [], pairs: [] }
    const cpu = { auto: [], center: [], pairs: [] }
    // (the first round warms both up)
    for (let run = 0; run <= runs; run++) {
      for (const gravity of ['auto', 'center']) {
        const started = performance.now()
        const cpuBefore = workerdCpuMs()
        const res = await fetch(`${server.base}/api/compress?format=webp&width=${side}&height=${side}&fit=cover&gravity=${gravity === 'auto' ? tested : gravity}`, { method: 'POST', headers: { 'Content-Type': 'image/jpeg' }, body })
        await res.arrayBuffer()
        if (res.status !== 200) throw new Error(`${side} ${gravity}: ${res.status}`)
        if (run > 0) times[gravity].push(performance.now() - started)
        if (run > 0) steps[gravity].push(stepsMs(res))
        if (run > 0) cpu[gravity].push(workerdCpuMs() - cpuBefore)
      }
      if (run > 0) times.pairs.push(times.auto.at(-1) - times.center.at(-1))
      if (run > 0) steps.pairs.push(steps.auto.at(-1) - steps.center.at(-1))
      if (run > 0) cpu.pairs.push(cpu.auto.at(-1) - cpu.center.at(-1))
    }
    for (const [kind, of] of [['request', times], ['steps', steps], ['cpu', cpu]]) {
      const [auto, center] = [median(of.auto), median(of.center)]
      rows[kind].push(`| ${side}x${side} | ${center.toFixed(0)} | ${auto.toFixed(0)} | ${(auto - center).toFixed(0)} | ${((100 * (auto - center)) / center).toFixed(0)} % | ${median(of.pairs).toFixed(0)} |`)
    }
  }
  for (const [kind, title] of [['request', 'whole request'], ['steps', 'Server-Timing steps'], ['cpu', "workerd's CPU time"]]) {
    console.log(`${title}:\n\n| 12 MP JPEG to a WebP cover | gravity=center ms | gravity=${tested} ms | ${tested} adds | share | ${tested} adds, median of pairs |\n|---|---|---|---|---|---|`)
    console.log(`${rows[kind].join('\n')}\n`)
  }
  console.log(`\nload average after ${os.loadavg().map((l) => l.toFixed(2)).join(', ')}`)
} finally {
  await server.stop?.()
}
