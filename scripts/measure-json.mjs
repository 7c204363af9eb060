#!/usr/bin/env node
// format=json on a 12 MP JPEG: the worker's steps (Server-Timing: decode = header and the shrink-on-load preview,
// transform = ThumbHash and dominant colour) and the peak memory growth of the workerd process that runs the Worker.
//
//   node_modules/.bin/node scripts/measure-json.mjs [--runs 3] [--warm 5] [--progressive]
//
// Each run starts a fresh `wrangler dev` whose ORIGIN_URL is a loopback origin holding the photo, warms up with
// GET /api/health, resets the process's peak counter (VmHWM), asks GET /img/format=json/photo.jpg once (the first
// request: codec start-up included), reads the growth, then asks `--warm` more times with other variants (no cache
// hit) for the steady times, the first of them with its own peak growth, and the rest with the CPU time the workerd
// process used for them (user + system, whole request: routing, cache, origin fetch, JSON), which a busy machine
// distorts less than wall time. The photo is a corpus photo (../shared/corpus/photos/Storm.jpg) else
// test/fixtures/large.jpg, resized to 4032x3024 by sharp at quality 90.

import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import sharp from 'sharp'
import { memoryOf, parseServerTiming, resetPeak, startWorker } from './lib/devserver.mjs'

const ROOT = path.resolve(import.meta.dirname, '..')
const arg = (name, fallback) => {
  const at = process.argv.indexOf(name)
  return at >= 0 ? Number(process.argv[at + 1]) : fallback
}
const runs = arg('--runs', 3)
const warm = arg('--warm', 5)
const progressive = process.argv.includes('--progressive')

const corpus = path.join(ROOT, '..', '..', 'shared', 'corpus', 'photos', 'Storm.jpg')
const from = fs.existsSync(corpus) ? corpus : path.join(ROOT, 'test', 'fixtures', 'large.jpg')
const photo = await sharp(from).resize(4032, 3024, { fit: 'fill' }).jpeg({ quality: 90, progressive }).toBuffer()
console.log(`input: ${path.basename(from)} as a 4032x3024 ${progressive ? 'progressive' : 'baseline'} JPEG, ${(photo.length / 2 ** 20).toFixed(2)} MiB`)

const origin = http.createServer((req, res) => res.writeHead(200, { 'Content-Type': 'image/jpeg', 'Content-Length': photo.length }).end(photo))
await new Promise((resolve) => origin.listen(0, '127.0.0.1', resolve))
const originUrl = `http://127.0.0.1:${origin.address().port}/`

/** CPU time the process has used, user and system, in ms (clock ticks of 10 ms): less distorted by a busy machine than wall time. */
const cpuMs = (pid) => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}

const ask = async (base, options) => {
  const res = await fetch(`${base}/img/${options}/photo.jpg`)
  const body = await res.json()
  if (res.status !== 200) throw new Error(`${res.status}: ${JSON.stringify(body)}`)
  const timing = parseServerTiming(res.headers.get('server-timing'))
  return { steps: (timing.decode ?? 0) + (timing.transform ?? 0), timing, body }
}

const rows = []
try {
  for (let run = 1; run <= runs; run++) {
    const dev = await startWorker({ root: ROOT, prefix: 'imgedge-json-', vars: { ORIGIN_URL: originUrl, RATE_LIMIT_ANON_PER_MINUTE: '0', MAX_INPUT_BYTES: String(50 * 2 ** 20) } })
    try {
      const pid = dev.worker.pid
      await (await fetch(`${dev.base}/api/health`)).arrayBuffer()
      const idle = memoryOf(pid).rss
      resetPeak(pid)
      const first = await ask(dev.base, 'format=json')
      const growthMiB = (memoryOf(pid).hwm - idle) / 1024
      // the next request, its codec already started: what one more format=json costs the isolate
      const before = memoryOf(pid).rss
      resetPeak(pid)
      const steady = [(await ask(dev.base, 'format=json,width=999')).steps]
      const warmGrowthMiB = (memoryOf(pid).hwm - before) / 1024
      const cpuBefore = cpuMs(pid)
      for (let i = 1; i < warm; i++) steady.push((await ask(dev.base, `format=json,width=${1000 + i}`)).steps)
      const cpuPerRequest = (cpuMs(pid) - cpuBefore) / Math.max(1, warm - 1)
      steady.sort((a, b) => a - b)
      rows.push({ run, firstMs: first.steps, timing: first.timing, steadyMedianMs: steady[Math.floor(steady.length / 2)], steadyMaxMs: steady.at(-1), growthMiB, warmGrowthMiB, cpuPerRequest })
      if (run === 1) console.log(JSON.stringify({ ...first.body, placeholder: { ...first.body.placeholder, data_url: `${first.body.placeholder.data_url.slice(0, 40)}...` } }))
    } finally {
      await dev.stop()
    }
  }
} finally {
  origin.close()
}
console.log('| run | first request: decode + transform ms | its growth over idle MiB | next requests: median / max ms | the second\'s growth MiB | workerd CPU ms a request |')
console.log('| --- | --- | --- | --- | --- | --- |')
for (const r of rows) console.log(`| ${r.run} | ${r.firstMs.toFixed(1)} (${r.timing.decode} + ${r.timing.transform}) | ${r.growthMiB.toFixed(1)} | ${r.steadyMedianMs.toFixed(1)} / ${r.steadyMaxMs.toFixed(1)} | ${r.warmGrowthMiB.toFixed(1)} | ${r.cpuPerRequest.toFixed(0)} |`)
