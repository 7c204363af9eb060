#!/usr/bin/env node
// Camera-size photos against sharp: a 24 MP JPEG to a 1600 px WebP and a 50 MP JPEG to a 2048 px WebP, imgedge in a
// `wrangler dev` and sharp (concurrency 1: the Worker has one thread) in this process, alternating, the median of the
// paired ratios (docs/results/camera-size.md). The inputs are the memory matrix's (scripts/lib/inputs.mjs).
//
//   node_modules/.bin/node scripts/camera-size-timing.mjs [--runs 8] [--corpus DIR] [--files A.jpg,B.jpg]
//
// DIR: default ../shared/corpus/photos. --files times these JPEGs instead, each to a 1600 px WebP (photos the inputs
// were not made from: a phone's or camera's own file).
//
// Timings on a shared machine move from run to run: read them with that caveat.

import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { startWorker } from './lib/devserver.mjs'
import { makeInput, SIZES } from './lib/inputs.mjs'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const argument = (name) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined)
const runs = Number(argument('--runs') ?? 8)
const corpusDir = path.resolve(argument('--corpus') ?? path.join(ROOT, '..', 'shared', 'corpus', 'photos'))
const sharp = createRequire(path.join(ROOT, 'package.json'))('sharp')
sharp.concurrency(1)
const inputOptions = { root: ROOT, corpusDir, cacheDir: path.join(ROOT, '.cache', 'memory-inputs'), log: console.error }
const files = argument('--files')?.split(',')
const CASES = files ? files.map((file) => [file, 1600]) : [[24, 1600], [50, 2048]]
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

const vars = { RATE_LIMIT_ANON_PER_MINUTE: '0', MAX_INPUT_BYTES: '104857600', MAX_INPUT_PIXELS: '50000000', MAX_OUTPUT_PIXELS: '50000000' }
const server = await startWorker({ root: ROOT, cwd: ROOT, vars, log: () => {} })
try {
  for (const [input, width] of CASES) {
    const file = typeof input === 'string' ? input : (await makeInput({ format: 'jpeg', width: SIZES[input][0], height: SIZES[input][1] }, inputOptions)).file
    const body = fs.readFileSync(file)
    const mp = typeof input === 'string' ? path.basename(input) : `${input} MP JPEG`
    const pairs = []
    // (the first pair warms both up)
    for (let run = 0; run <= runs; run++) {
      let started = performance.now()
      const res = await fetch(`${server.base}/api/compress?format=webp&width=${width}`, { method: 'POST', headers: { 'Content-Type': 'image/jpeg' }, body })
      await res.arrayBuffer()
      if (res.status !== 200) throw new Error(`${mp}: ${res.status}`)
      const ours = performance.now() - started
      started = performance.now()
      await sharp(body).resize({ width, fit: 'inside', withoutEnlargement: true, kernel: 'lanczos3' }).webp({ quality: 80, effort: 4 }).toBuffer()
      if (run > 0) pairs.push([ours, performance.now() - started])
    }
    const ms = (i) => Math.round(median(pairs.map((pair) => pair[i])))
    console.log(`${mp} to ${width} px WebP: imgedge ${ms(0)} ms, sharp ${ms(1)} ms, ${median(pairs.map(([a, b]) => a / b)).toFixed(2)}x (median of ${pairs.length} paired runs)`)
  }
} finally {
  await server.stop()
}
