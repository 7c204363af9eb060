#!/usr/bin/env node
// Lossy PNG against sharp's (libimagequant's) palette PNG and sharp's best lossless PNG.
//
//   node scripts/palette-check.mjs [image ...]
//
// Each image (default: the corpus PNG wallpapers and two photos, ../shared/corpus/photos) is resized by sharp to 1600 px
// wide and sent to a fresh `wrangler dev` as PNG with format=png&quality=Q; sharp makes its palette PNG
// (palette: true, its defaults: quality 100, 256 colours, dither 1.0) and its smallest lossless PNG (compression 9,
// adaptive filtering or not). Bytes are given as a ratio to that lossless PNG; PSNR (dB, RGB, alpha-weighted) against
// the resized source.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import sharp from 'sharp'
import { killStarted, startWorker } from './lib/devserver.mjs'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const PHOTOS = path.join(ROOT, '..', 'shared', 'corpus', 'photos')
const images = process.argv.slice(2).length ? process.argv.slice(2) : ['Gulp.png', 'Float-into-MATE.png', 'Ubuntu-Mate-Cold-no-logo.png', 'Dune.jpg', 'LadyBird.jpg'].map((f) => path.join(PHOTOS, f))
const QUALITIES = [100, 80, 60]

async function psnr(a, b) {
  const [x, y] = await Promise.all([a, b].map((img) => sharp(img).ensureAlpha().raw().toBuffer()))
  let sum = 0
  for (let i = 0; i < x.length; i += 4) {
    const wa = x[i + 3] / 255, wb = y[i + 3] / 255
    for (let k = 0; k < 3; k++) sum += (x[i + k] * wa - y[i + k] * wb) ** 2
    sum += (x[i + 3] - y[i + 3]) ** 2
  }
  const mse = sum / x.length
  return mse === 0 ? Infinity : 10 * Math.log10((255 * 255) / mse)
}

const dev = await startWorker({ root: ROOT, prefix: 'imgedge-palette-', vars: { RATE_LIMIT_ANON_PER_MINUTE: '0' } })
try {
  console.log(`| image (1600 px) | sharp lossless bytes | sharp palette: bytes, dB | ${QUALITIES.map((q) => `imgedge quality=${q}: bytes, dB, colours`).join(' | ')} |`)
  console.log(`|---|---|---|${QUALITIES.map(() => '---').join('|')}|`)
  for (const file of images) {
    const source = await sharp(file).resize({ width: 1600, kernel: 'lanczos3' }).png().toBuffer()
    const lossless = Math.min(...(await Promise.all([true, false].map(async (adaptiveFiltering) => (await sharp(source).png({ compressionLevel: 9, adaptiveFiltering }).toBuffer()).length))))
    const theirs = await sharp(source).png({ palette: true }).toBuffer()
    const cells = [path.basename(file), String(lossless), `${(theirs.length / lossless).toFixed(2)}x, ${(await psnr(source, theirs)).toFixed(1)}`]
    for (const quality of QUALITIES) {
      const res = await fetch(`${dev.base}/api/compress?format=png&quality=${quality}`, { method: 'POST', body: source, headers: { 'Content-Type': 'image/png' } })
      if (!res.ok) throw new Error(`${file} q${quality}: ${res.status} ${await res.text()}`)
      const ours = Buffer.from(await res.arrayBuffer())
      cells.push(`${(ours.length / lossless).toFixed(2)}x, ${(await psnr(source, ours)).toFixed(1)}, ${res.headers.get('x-palette-colors')}`)
    }
    console.log(`| ${cells.join(' | ')} |`)
  }
} finally {
  await dev.stop()
  killStarted()
}
