#!/usr/bin/env node
// How close imgedge's colours are to the colour-correct rendering, against sharp's (issue: colour management).
//
//   node scripts/colour-check.mjs [photo.jpg ...]
//
// Each photo (default: ../shared/corpus/photos/*.jpg) is given a profile the way phones and editors give one:
// converted by sharp (Little CMS) into Display P3 and into Adobe RGB-like primaries (sharp's built-in 'p3' and a
// profile from the same maths as test/fixtures/colour), saved as a JPEG with the profile embedded (quality 92).
// The colour-correct rendering is that file converted back to sRGB by sharp at full precision and resized to
// 1200 px wide; imgedge (a fresh `wrangler dev`) and sharp each convert the file to WebP, JPEG, PNG and AVIF at
// 1200 px (each at its default quality: 80 for WebP and JPEG, 50 for AVIF), and the table gives the mean absolute channel error of each answer against the rendering. A CMYK JPEG
// with a profile (../shared/corpus/bad/thumbor/cmyk-icc.jpg when present) is compared the same way for WebP.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import sharp from 'sharp'
import { killStarted, startWorker } from './lib/devserver.mjs'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const CORPUS = path.join(ROOT, '..', 'shared', 'corpus')
const photos = process.argv.slice(2).length
  ? process.argv.slice(2)
  : fs.readdirSync(path.join(CORPUS, 'photos')).filter((f) => f.endsWith('.jpg')).map((f) => path.join(CORPUS, 'photos', f))
const WIDTH = 1200
const FORMATS = ['webp', 'jpeg', 'png', 'avif']

/** Mean absolute difference over RGB of two same-size raw RGB(A) buffers. */
function meanError(a, b, channelsA, channelsB, pixels) {
  let sum = 0
  for (let i = 0; i < pixels; i++) for (let k = 0; k < 3; k++) sum += Math.abs(a[i * channelsA + k] - b[i * channelsB + k])
  return sum / (pixels * 3)
}
const rawOf = async (input) => sharp(input).toColourspace('srgb').raw().toBuffer({ resolveWithObject: true })

const sharpEncode = (image, format) =>
  format === 'webp' ? image.webp({ quality: 80 }) : format === 'jpeg' ? image.jpeg({ quality: 80 }) : format === 'png' ? image.png() : image.avif({ quality: 50 })

async function row(dev, name, file) {
  const reference = await rawOf(await sharp(file).resize({ width: WIDTH, kernel: 'lanczos3', withoutEnlargement: true }).toColourspace('srgb').png().toBuffer())
  const pixels = reference.info.width * reference.info.height
  const cells = [name]
  for (const format of FORMATS) {
    const res = await fetch(`${dev.base}/api/compress?format=${format}&width=${WIDTH}`, { method: 'POST', body: file, headers: { 'Content-Type': 'application/octet-stream' } })
    if (!res.ok) throw new Error(`${name} ${format}: ${res.status} ${await res.text()}`)
    const ours = await rawOf(Buffer.from(await res.arrayBuffer()))
    const theirs = await rawOf(await sharpEncode(sharp(file).resize({ width: WIDTH, kernel: 'lanczos3', withoutEnlargement: true }), format).toBuffer())
    cells.push(`${meanError(ours.data, reference.data, ours.info.channels, reference.info.channels, pixels).toFixed(2)} / ${meanError(theirs.data, reference.data, theirs.info.channels, reference.info.channels, pixels).toFixed(2)}`)
  }
  return cells
}

const dev = await startWorker({ root: ROOT, prefix: 'imgedge-colour-', vars: { RATE_LIMIT_ANON_PER_MINUTE: '0' } })
try {
  const lines = [`| photo (profile) | ${FORMATS.map((f) => `${f}: imgedge / sharp`).join(' | ')} |`, `|---|${FORMATS.map(() => '---').join('|')}|`]
  for (const photo of photos) {
    const base = path.basename(photo, path.extname(photo))
    const p3 = await sharp(photo).withIccProfile('p3').jpeg({ quality: 92 }).toBuffer()
    lines.push(`| ${(await row(dev, `${base} (P3)`, p3)).join(' | ')} |`)
    // Without a profile: the control (both should be about equally far from the rendering: compression alone).
    const plain = await sharp(photo).jpeg({ quality: 92 }).toBuffer()
    lines.push(`| ${(await row(dev, `${base} (sRGB, no profile)`, plain)).join(' | ')} |`)
  }
  const cmyk = path.join(CORPUS, 'bad', 'thumbor', 'cmyk-icc.jpg')
  if (fs.existsSync(cmyk)) lines.push(`| ${(await row(dev, 'cmyk-icc.jpg (CMYK, SWOP profile)', fs.readFileSync(cmyk))).join(' | ')} |`)
  console.log(lines.join('\n'))
} finally {
  await dev.stop()
  killStarted()
}
