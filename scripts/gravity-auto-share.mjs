#!/usr/bin/env node
// gravity=auto's share of a conversion: a 12 MP JPEG to square WebP covers of 300, 640 and 1600 px, with gravity=auto
// and with gravity=center, alternating, in a `wrangler dev`; the median of each and the difference as a share of the
// centred conversion, and the median of each pair's difference, which moves less on a shared machine
// (docs/results/transformations.md). The input is the memory matrix's (scripts/lib/inputs.mjs).
//
//   node_modules/.bin/node scripts/gravity-auto-share.mjs [--runs 7] [--corpus DIR]   (DIR: default ../shared/corpus/photos)
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { startWorker } from './lib/devserver.mjs'
import { makeInput, SIZES } from './lib/inputs.mjs'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const argument = (name) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined)
const runs = Number(argument('--runs') ?? 7)
const corpusDir = path.resolve(argument('--corpus') ?? path.join(ROOT, '..', 'shared', 'corpus', 'photos'))
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

const [w, h] = SIZES[12]
const body = fs.readFileSync((await makeInput({ format: 'jpeg', width: w, height: h }, { root: ROOT, corpusDir, cacheDir: path.join(ROOT, '.cache', 'memory-inputs'), log: console.error })).file)
const server = await startWorker({ root: ROOT, cwd: ROOT, vars: { RATE_LIMIT_ANON_PER_MINUTE: '0' }, log: () => {} })
try {
  console.log(`load average ${os.loadavg().map((l) => l.toFixed(2)).join(', ')}; median of ${runs}\n`)
  console.log('| 12 MP JPEG to a WebP cover | gravity=center ms | gravity=auto ms | auto adds | share | auto adds, median of pairs |\n|---|---|---|---|---|---|')
  for (const side of [300, 640, 1600]) {
    const times = { auto: [], center: [], pairs: [] }
    // (the first round warms both up)
    for (let run = 0; run <= runs; run++) {
      for (const gravity of ['auto', 'center']) {
        const started = performance.now()
        const res = await fetch(`${server.base}/api/compress?format=webp&width=${side}&height=${side}&fit=cover&gravity=${gravity}`, { method: 'POST', headers: { 'Content-Type': 'image/jpeg' }, body })
        await res.arrayBuffer()
        if (res.status !== 200) throw new Error(`${side} ${gravity}: ${res.status}`)
        if (run > 0) times[gravity].push(performance.now() - started)
      }
      if (run > 0) times.pairs.push(times.auto.at(-1) - times.center.at(-1))
    }
    const [auto, center] = [median(times.auto), median(times.center)]
    console.log(`| ${side}x${side} | ${center.toFixed(0)} | ${auto.toFixed(0)} | ${(auto - center).toFixed(0)} | ${((100 * (auto - center)) / center).toFixed(0)} % | ${median(times.pairs).toFixed(0)} |`)
  }
  console.log(`\nload average after ${os.loadavg().map((l) => l.toFixed(2)).join(', ')}`)
} finally {
  await server.stop?.()
}
