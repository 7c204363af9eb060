#!/usr/bin/env node
// Each transformation alone on a 12 MP image, in the lean codec (its row stages over RGBA pixels, wasm/lean/op_*.c and
// pipeline.c's turn) against sharp doing the same to the same raw pixels, in this process, best of --runs. sharp runs
// on one thread (sharp.concurrency(1)), as a Worker does; the machine's other work moves both.
//
//   node_modules/.bin/node --experimental-transform-types scripts/transform-bench.mjs [--runs 3] [--mp 12] [--only blur,flip] [--wasm lean.wasm]
//
// --only runs the cases whose label holds one of the words; --wasm measures another build (an older lean.wasm, say).
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import sharp from 'sharp'
import '../wasm/imagedata.ts'
import { LeanCodec } from '../wasm/lean.ts'
import { MemoryCap } from '../wasm/cap.ts'
import { bestWindow, PREVIEW_SIDE } from '../src/pipeline/smartcrop.ts'
import { makeInput, SIZES } from './lib/inputs.mjs'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const arg = (name, fallback) => {
  const at = process.argv.indexOf(name)
  return at > 0 ? process.argv[at + 1] : fallback
}
const RUNS = Number(arg('--runs', 3))
const MP = Number(arg('--mp', 12))
const ONLY = arg('--only', '').split(',').filter(Boolean)
const WASM = arg('--wasm', path.join(ROOT, 'wasm/lean/lean.wasm'))
sharp.concurrency(1)

const [width, height] = SIZES[MP]
const input = await makeInput({ format: 'jpeg', width, height }, { root: ROOT, corpusDir: path.join(ROOT, '..', 'shared', 'corpus', 'photos'), cacheDir: path.join(ROOT, '.cache', 'memory-inputs'), log: console.log })
const jpeg = fs.readFileSync(input.file)
const module = await WebAssembly.compile(fs.readFileSync(WASM))
// One instance over one memory, reset before each pass, as a Worker's conversions share theirs (wasm/session.ts): its
// memory has grown to the largest pass already, so a pass's time is its work, not the memory's growth.
const shared = new LeanCodec(module, new MemoryCap(2 ** 31))
const codec = () => {
  shared.reset(new MemoryCap(2 ** 31))
  return shared
}
const pixels = (() => {
  const lean = codec()
  lean.rowsFromJpeg(jpeg, 8)
  const image = lean.rowsToRgba()
  return new ImageData(image.data.slice(), image.width, image.height)
})()
const raw = Buffer.from(pixels.data.buffer)
const sharpOf = () => sharp(raw, { raw: { width, height, channels: 4 } })

// trim=border's case: the pixels inside a 64 px white frame, so that both find the frame and cut it
const framed = await (async () => {
  const { data, info } = await sharpOf().extend({ top: 64, bottom: 64, left: 64, right: 64, background: '#ffffff' }).raw().toBuffer({ resolveWithObject: true })
  return new ImageData(new Uint8ClampedArray(data.buffer, data.byteOffset, data.length), info.width, info.height)
})()

/** The lean codec: the pixels copied in as a row source, `stages` added, every row collected (one copy in, one out). */
const lean = (stages) => () => {
  const c = codec()
  c.throughRows(pixels, () => stages(c))
}
const CASES = [
  ['copy (no stage)', lean(() => {}), () => sharpOf().raw().toBuffer()],
  ['rotate=90', lean((c) => c.orientRows(6)), () => sharpOf().rotate(90).raw().toBuffer()],
  ['flip=h', lean((c) => c.orientRows(2)), () => sharpOf().flop().raw().toBuffer()],
  ['blur=4 (sigma 2, kernel)', lean((c) => c.blurRows(2)), () => sharpOf().blur(2).raw().toBuffer()],
  ['blur=6 (sigma 3, kernel)', lean((c) => c.blurRows(3)), () => sharpOf().blur(3).raw().toBuffer()],
  ['blur=10 (sigma 5, boxes)', lean((c) => c.blurRows(5)), () => sharpOf().blur(5).raw().toBuffer()],
  ['blur=50 (sigma 25, boxes)', lean((c) => c.blurRows(25)), () => sharpOf().blur(25).raw().toBuffer()],
  ['blur=250 (sigma 125, boxes)', lean((c) => c.blurRows(125)), () => sharpOf().blur(125).raw().toBuffer()],
  ['sharpen=2 (sigma 1)', lean((c) => c.sharpenRows(1, 0.7)), () => sharpOf().sharpen({ sigma: 1 }).raw().toBuffer()],
  ['trim=border (a 64 px white frame)', () => {
    const c = codec()
    const ptr = c.pixelsIn(framed)
    c.exports.px_pixels(ptr, framed.width, framed.height, 1)
    const box = c.rowsBorderBox(10)
    c.exports.px_pixels(ptr, framed.width, framed.height, 1)
    c.cropRows(box)
    c.rowsToRgba()
  }, () => sharp(Buffer.from(framed.data.buffer), { raw: { width: framed.width, height: framed.height, channels: 4 } }).trim({ threshold: 10 }).raw().toBuffer()],
  ['brightness, contrast, gamma, saturation', lean((c) => c.adjustRows({ brightness: 1.2, contrast: 1.1, gamma: 1.2, saturation: 1.3 })), () => sharpOf().linear(1.32, -12.75).gamma(2.2, 2.64).modulate({ saturation: 1.3 }).raw().toBuffer()],
]

async function best(run, runs = RUNS) {
  let least = Number.POSITIVE_INFINITY
  for (let i = 0; i < runs; i++) {
    const started = performance.now()
    await run()
    least = Math.min(least, performance.now() - started)
  }
  return least
}

console.log(`load average ${os.loadavg().map((l) => l.toFixed(2)).join(', ')}\n`)
console.log(`| ${MP} MP (${width}x${height}) RGBA, best of ${RUNS} | lean ms | sharp ms (1 thread) | lean / sharp |\n|---|---|---|---|`)
for (const [label, ours, theirs] of CASES) {
  if (ONLY.length > 0 && !ONLY.some((word) => label.includes(word))) continue
  // (the two alternate, so that a change in the machine's load falls on both)
  let [a, b] = [Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY]
  for (let i = 0; i < RUNS; i++) {
    a = Math.min(a, await best(ours, 1))
    b = Math.min(b, await best(theirs, 1))
  }
  console.log(`| ${label} | ${a.toFixed(0)} | ${b.toFixed(0)} | ${(a / b).toFixed(2)} |`)
}

// From the JPEG to a 1600 px square's RGBA: gravity=auto as the conversion runs it (src/pipeline/rows.ts: the image
// decoded and resized whole as the crop will be, kept; the preview from it, the map, the window; the window cut out)
// against the centred crop, and sharp's attention strategy against its centred cover.
const SIDE = 1600
const centreCover = () => {
  const c = codec()
  c.rowsFromJpeg(jpeg, 8)
  c.cropRows({ x: Math.floor((width - height) / 2), y: 0, width: height, height })
  c.resizeRows(SIDE, SIDE)
  c.rowsToRgba()
}
const autoCover = () => {
  const c = codec()
  c.rowsFromJpeg(jpeg, 8)
  const keptWidth = Math.round((width * SIDE) / height)
  c.resizeRows(keptWidth, SIDE)
  const kept = c.rowsToKept()
  c.rowsFromKept(kept)
  let factor = 1
  while (factor < 16 && keptWidth / (factor * 2) >= PREVIEW_SIDE) factor *= 2
  if (factor > 1) c.shrinkRows(factor)
  const [pw, ph] = [PREVIEW_SIDE, Math.round((PREVIEW_SIDE * SIDE) / keptWidth)]
  c.resizeRows(pw, ph)
  const rows = c.rowsToRgba()
  const preview = new ImageData(rows.data.slice(), pw, ph)
  const best = bestWindow(c.saliency(preview), pw, ph, Math.round((SIDE * pw) / keptWidth), ph)
  c.rowsFromKept(kept)
  c.cropRows({ x: Math.max(0, Math.min(keptWidth - SIDE, Math.round((best.x * keptWidth) / pw))), y: 0, width: SIDE, height: SIDE })
  c.rowsToRgba()
}
const sharpCover = (position) => () => sharp(jpeg).resize(SIDE, SIDE, { fit: 'cover', position }).raw().toBuffer()
if (ONLY.length === 0 || ONLY.some((word) => 'gravity=auto'.includes(word))) {
  const t = { centre: Number.POSITIVE_INFINITY, auto: Number.POSITIVE_INFINITY, sharpCentre: Number.POSITIVE_INFINITY, attention: Number.POSITIVE_INFINITY }
  for (let i = 0; i < RUNS; i++) {
    t.centre = Math.min(t.centre, await best(centreCover, 1))
    t.auto = Math.min(t.auto, await best(autoCover, 1))
    t.sharpCentre = Math.min(t.sharpCentre, await best(sharpCover('centre'), 1))
    t.attention = Math.min(t.attention, await best(sharpCover(sharp.strategy.attention), 1))
  }
  console.log(`| gravity=auto, from the JPEG to a ${SIDE} px square | ${t.auto.toFixed(0)} | ${t.attention.toFixed(0)} | ${(t.auto / t.attention).toFixed(2)} |`)
  console.log(`\n(the centred cover: lean ${t.centre.toFixed(0)} ms, sharp ${t.sharpCentre.toFixed(0)}; gravity=auto adds ${(t.auto - t.centre).toFixed(0)} ms, sharp's attention strategy ${(t.attention - t.sharpCentre).toFixed(0)})`)
}
