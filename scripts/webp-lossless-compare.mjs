// Lossless WebP sizes and times: our streaming VP8L coder (wasm/lean/sink_webpll.c) against libwebp's lossless
// encoder at effort 0, 2, 4 and 6 and against the PNG writer, all in lean.wasm in Node (one thread, as the Worker),
// each image decoded once by sharp. `ours` and `libwebp` at the effort the API would use for the image's size
// (WEBP_EFFORT_CAPS), PNG at the PNG cap; every answer of ours is decoded by sharp and checked against the source.
//
//   node_modules/.bin/node --experimental-transform-types scripts/webp-lossless-compare.mjs FILE.png...
import fs from 'node:fs'
import path from 'node:path'
import sharp from 'sharp'

import '../wasm/imagedata.ts'
import { LeanCodec } from '../wasm/lean.ts'
import { MemoryCap } from '../wasm/cap.ts'

// src/codecs' caps and PNG settings (src/codecs/{webp,png}.ts import the Worker's bundle, which Node cannot), as they
// are for these sizes: WebP effort 4 up to 13 MP, 2 up to 16; PNG effort 4 (level 10) up to 4.9 MP, 3 (level 9) up to
// 8.5, 2 (level 7) up to 16, each with filter trials.
const webpEffort = (pixels) => (pixels <= 13e6 ? 4 : pixels <= 16e6 ? 2 : 0)
const pngLevel = (pixels) => (pixels <= 2.3e6 ? 10 : pixels <= 4.9e6 ? 10 : pixels <= 8.5e6 ? 9 : pixels <= 16e6 ? 7 : 5)
const TRIALS = 1 | 32 | 64
const module = new WebAssembly.Module(fs.readFileSync(new URL('../wasm/lean/lean.wasm', import.meta.url)))
const codec = () => new LeanCodec(module, new MemoryCap(2 ** 31))
const bytesOf = (parts) => parts.reduce((n, p) => n + p.length, 0)
const timed = (f) => {
  const t = performance.now()
  const out = f()
  return [out, performance.now() - t]
}

function ours(image, effort) {
  const c = codec()
  const ptr = c.pixelsIn(image)
  const build = () => c.exports.px_pixels(ptr, image.width, image.height, 1)
  build()
  return c.rowsToWebpLossless(build, effort)
}

const libwebp = (image, effort) => codec().encodeWebpRgba(image, { quality: Math.min(100, effort * 11), method: Math.min(6, effort), lossless: true, lowMemory: false })
const png = (image, level) => codec().encodePng(image, { level, strategies: TRIALS }).parts

console.log('| image | size | ours | libwebp 0 | 2 | 4 | 6 | ours / libwebp at the API\'s effort | PNG output | ours ms | libwebp ms | pixel-exact |')
console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |')
for (const file of process.argv.slice(2)) {
  const { data, info } = await sharp(file).ensureAlpha().raw().toBuffer({ resolveWithObject: true })
  const image = new ImageData(new Uint8ClampedArray(data.buffer, data.byteOffset, data.length), info.width, info.height)
  const pixels = info.width * info.height
  const effort = webpEffort(pixels)
  const [mine, ms] = timed(() => Buffer.concat(ours(image, effort)))
  const sizes = {}
  let libMs = 0
  for (const e of [0, 2, 4, 6]) {
    const [out, t] = timed(() => libwebp(image, e))
    sizes[e] = out.length
    if (e === effort || (e === 2 && effort < 4 && effort > 0)) libMs = t
  }
  const pngBytes = bytesOf(png(image, pngLevel(pixels)))
  const back = await sharp(mine).ensureAlpha().raw().toBuffer()
  for (let i = 0; i < data.length; i += 4) if (data[i + 3] === 0) data.fill(0, i, i + 3)
  const exact = Buffer.compare(back, data) === 0
  const kb = (n) => `${(n / 1024).toFixed(0)} K`
  const at = sizes[effort] ?? sizes[2]
  console.log(`| ${path.basename(file)} | ${info.width}x${info.height} | ${kb(mine.length)} | ${kb(sizes[0])} | ${kb(sizes[2])} | ${kb(sizes[4])} | ${kb(sizes[6])} | ${(mine.length / at).toFixed(3)} (effort ${effort}) | ${kb(pngBytes)} (${(mine.length / pngBytes).toFixed(2)}x) | ${ms.toFixed(0)} | ${libMs.toFixed(0)} | ${exact ? 'yes' : 'NO'} |`)
}
