#!/usr/bin/env node
// A photo PNG read as it arrives (streamed) against the same PNG held whole, through one `wrangler dev`, alternating,
// the median of each and of the paired ratios (docs/results/camera-size.md). The held path is forced with
// metadata=copyright (which reads the file's chunks, so holds it); the PNGs carry no EXIF, so the pixels and the
// encoder's work are the same. The budget and byte limit are lifted so that the held path converts too.
//
//   node_modules/.bin/node scripts/png-stream-timing.mjs [--runs 5] [--sizes 24,50] [--corpus DIR]
//
// Timings on a shared machine move from run to run: read them with that caveat (the load average is printed).

import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { startWorker } from './lib/devserver.mjs'
import { makeInput, SIZES } from './lib/inputs.mjs'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const argument = (name) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined)
const runs = Number(argument('--runs') ?? 5)
const sizes = (argument('--sizes') ?? '24,50').split(',').map(Number)
const corpusDir = path.resolve(argument('--corpus') ?? path.join(ROOT, '..', 'shared', 'corpus', 'photos'))
const inputOptions = { root: ROOT, corpusDir, cacheDir: path.join(ROOT, '.cache', 'memory-inputs'), log: console.error }
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const WIDTH = { 24: 1600, 36: 2048, 50: 2048 }

const vars = { RATE_LIMIT_ANON_PER_MINUTE: '0', MAX_INPUT_BYTES: '104857600', MEMORY_BUDGET_MIB: '100000', QUEUE_TIMEOUT_MS: '600000', BODY_TIMEOUT_MS: '600000' }
const server = await startWorker({ root: ROOT, cwd: ROOT, vars, log: () => {} })
const time = async (query, body) => {
  const started = performance.now()
  const res = await fetch(`${server.base}/api/compress?${query}`, { method: 'POST', headers: { 'Content-Type': 'image/png' }, body })
  await res.arrayBuffer()
  if (res.status !== 200) throw new Error(`${query}: ${res.status}`)
  return performance.now() - started
}
try {
  console.log('| input | output | streamed ms | held ms | streamed / held | load average |')
  console.log('| --- | --- | --- | --- | --- | --- |')
  for (const mp of sizes) {
    const [w, h] = SIZES[mp]
    const body = fs.readFileSync((await makeInput({ format: 'png', width: w, height: h }, inputOptions)).file)
    for (const format of ['jpeg', 'webp', 'avif']) {
      const query = `format=${format}&width=${WIDTH[mp]}`
      const streamed = []
      const held = []
      // (the first pair warms both up)
      for (let run = 0; run <= runs; run++) {
        const s = await time(query, body)
        const k = await time(`${query}&metadata=copyright`, body)
        if (run > 0) {
          streamed.push(s)
          held.push(k)
        }
      }
      const ratio = median(streamed.map((s, i) => s / held[i]))
      const load = os.loadavg().map((l) => l.toFixed(1)).join(' ')
      console.log(`| ${mp} MP PNG (${(body.length / 2 ** 20).toFixed(1)} MiB) | ${format} ${WIDTH[mp]} px | ${median(streamed).toFixed(0)} | ${median(held).toFixed(0)} | ${ratio.toFixed(2)}x | ${load} |`)
    }
  }
} finally {
  await server.stop()
}
