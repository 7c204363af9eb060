// Inputs for scripts/bench.mjs. Photos come from scripts/lib/inputs.mjs (the same files, and the same
// cache, as the memory measurements); the few kinds that module does not make (a WebP input, a
// screenshot, the corpus graphics, a set of real photos at about 1 MP) are made here with sharp and
// cached in .cache/bench-inputs/.

import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import { findSource, makeInput } from './inputs.mjs'

/** Bump when the way the inputs made here change. */
const RECIPE = 1

/** Phone-photo sizes (4:3), as in scripts/measure-memory.mjs. */
export const SIZES = { 1: [1152, 864], 4: [2304, 1728], 12: [4032, 3024] }

/** Real photos (no added grain) for the matched-quality comparison, besides the grained Wood photo. */
const PHOTO_SET = ['Dune.jpg', 'Storm.jpg', 'Blinds.jpg', 'LadyBird.jpg', 'FreshFlower.jpg']

export function createInputs({ root, corpusDir, log = () => {} }) {
  const require = createRequire(path.join(root, 'package.json'))
  const sharp = require('sharp')
  const memoryCache = path.join(root, '.cache', 'memory-inputs')
  const cache = path.join(root, '.cache', 'bench-inputs')
  fs.mkdirSync(cache, { recursive: true })
  const made = new Map()

  const describe = (file, extra) => {
    const bytes = fs.statSync(file).size
    return { file, bytes, ...extra }
  }

  async function cached(name, make) {
    const file = path.join(cache, name)
    if (!fs.existsSync(file)) {
      log(`making ${path.relative(root, file)} ...`)
      const bytes = await make()
      fs.writeFileSync(`${file}.tmp`, bytes)
      fs.renameSync(`${file}.tmp`, file)
    }
    return file
  }

  /** A photo-like JPEG or PNG of `mp` megapixels (scripts/lib/inputs.mjs: a corpus photo, resized, with grain). */
  async function photo(format, mp) {
    const [width, height] = SIZES[mp]
    const made = await makeInput({ format, width, height }, { root, corpusDir, cacheDir: memoryCache, log })
    return { ...made, mime: `image/${format}`, label: `${format === 'jpeg' ? 'JPEG' : 'PNG'} photo`, kind: `${format}-photo` }
  }

  /** The same photo as a lossy WebP (quality 90, as a site or a phone app would store it). */
  async function webpPhoto(mp) {
    const jpeg = await photo('jpeg', mp)
    const base = path.basename(jpeg.file, path.extname(jpeg.file))
    const file = await cached(`${base}-q90-b${RECIPE}.webp`, () => sharp(jpeg.file).webp({ quality: 90 }).toBuffer())
    return describe(file, { width: jpeg.width, height: jpeg.height, format: 'webp', mime: 'image/webp', label: 'WebP photo', kind: 'webp-photo', source: `${jpeg.source}, as WebP q90` })
  }

  /** A synthetic screenshot of a web app: flat colours, text, thin lines (rendered from SVG by librsvg). */
  async function screenshot() {
    const width = 1280
    const height = 800
    const file = await cached(`screenshot-${width}x${height}-b${RECIPE}.png`, () => sharp(Buffer.from(screenshotSvg(width, height))).png().toBuffer())
    return describe(file, { width, height, format: 'png', mime: 'image/png', label: 'PNG screenshot', kind: 'screenshot', source: 'synthetic web-app screenshot (SVG rendered by sharp/librsvg)' })
  }

  /** A PNG graphic from the corpus as it is (Float-into-MATE.png: artwork, RGBA with unused alpha; Gulp.png: real alpha). */
  async function corpusGraphic(name) {
    const file = corpusDir ? path.join(corpusDir, name) : null
    if (!file || !fs.existsSync(file)) return null
    const meta = await sharp(file).metadata()
    return describe(file, { width: meta.width, height: meta.height, format: 'png', mime: 'image/png', label: `PNG graphic (${name})`, kind: 'graphic', source: `corpus photos/${name}` })
  }

  /**
   * Real photos at about 1 MP as lossless PNGs, so a matched-quality comparison measures the encoders
   * only: both sides decode exactly the same pixels. The first is the grained Wood photo of the timing
   * cases; the others are corpus photos without added grain, resized (lanczos3) to about 1 MP.
   */
  async function photoSet({ limit = Infinity } = {}) {
    const set = [{ ...(await photo('png', 1)), name: path.basename(findSource(corpusDir) ?? 'synthetic') + ' (1 MP, grain)' }]
    for (const name of PHOTO_SET) {
      if (set.length >= limit) break
      const src = corpusDir ? path.join(corpusDir, name) : null
      if (!src || !fs.existsSync(src)) continue
      const meta = await sharp(src).metadata()
      const scale = Math.sqrt(1_000_000 / (meta.width * meta.height))
      const width = Math.round(meta.width * Math.min(1, scale))
      const height = Math.round(meta.height * Math.min(1, scale))
      const base = path.basename(name, path.extname(name)).toLowerCase()
      const file = await cached(`${base}-${width}x${height}-b${RECIPE}.png`, () =>
        sharp(src).resize(width, height, { kernel: 'lanczos3', fit: 'fill' }).png({ compressionLevel: 6 }).toBuffer(),
      )
      set.push(describe(file, { width, height, format: 'png', mime: 'image/png', kind: 'photo-set', name: `${name} (${(width * height / 1e6).toFixed(1)} MP)`, source: `corpus photos/${name}, resized` }))
    }
    return set
  }

  return {
    /** Input by key: jpeg:1, png:1, webp:12, screenshot, graphic, alpha. */
    async get(key) {
      if (made.has(key)) return made.get(key)
      const [kind, mp] = key.split(':')
      let input
      if (kind === 'jpeg' || kind === 'png') input = await photo(kind, Number(mp))
      else if (kind === 'webp') input = await webpPhoto(Number(mp))
      else if (kind === 'screenshot') input = await screenshot()
      else if (kind === 'graphic') input = await corpusGraphic('Float-into-MATE.png')
      else if (kind === 'alpha') input = await corpusGraphic('Gulp.png')
      else throw new Error(`unknown input ${key}`)
      if (input) input.key = key
      made.set(key, input)
      return input
    },
    photoSet,
  }
}

function screenshotSvg(width, height) {
  const lines = []
  const text = (x, y, size, fill, s, weight = 400) =>
    lines.push(`<text x="${x}" y="${y}" font-family="DejaVu Sans, Liberation Sans, sans-serif" font-size="${size}" font-weight="${weight}" fill="${fill}">${s}</text>`)
  lines.push(`<rect width="${width}" height="${height}" fill="#f6f7f9"/>`)
  lines.push(`<rect width="${width}" height="56" fill="#1f2937"/>`)
  text(24, 36, 20, '#ffffff', 'imgedge · dashboard', 700)
  for (const [i, label] of ['Overview', 'Images', 'API keys', 'Usage', 'Settings'].entries()) text(420 + i * 110, 35, 15, i === 1 ? '#93c5fd' : '#d1d5db', label)
  lines.push(`<rect x="0" y="56" width="220" height="${height - 56}" fill="#ffffff" stroke="#e5e7eb"/>`)
  for (let i = 0; i < 12; i++) text(24, 100 + i * 34, 14, i === 2 ? '#2563eb' : '#374151', ['Recent', 'Uploads', 'Compressed', 'Failed', 'Shared', 'Archive', 'Presets', 'Webhooks', 'Logs', 'Billing', 'Team', 'Help'][i])
  // Cards with numbers
  for (let i = 0; i < 4; i++) {
    const x = 248 + i * 252
    lines.push(`<rect x="${x}" y="84" width="232" height="104" rx="8" fill="#ffffff" stroke="#e5e7eb"/>`)
    text(x + 16, 114, 13, '#6b7280', ['Requests today', 'Bytes saved', 'Median time', 'Errors'][i])
    text(x + 16, 160, 32, ['#111827', '#059669', '#111827', '#dc2626'][i], ['48,213', '3.2 GB', '412 ms', '0.12 %'][i], 700)
  }
  // A table with stripes
  lines.push(`<rect x="248" y="212" width="1008" height="420" rx="8" fill="#ffffff" stroke="#e5e7eb"/>`)
  const cols = ['File', 'Format', 'Input', 'Output', 'Saved', 'Time']
  cols.forEach((c, i) => text(268 + i * 165, 244, 13, '#6b7280', c, 700))
  for (let r = 0; r < 11; r++) {
    const y = 258 + r * 34
    if (r % 2 === 0) lines.push(`<rect x="249" y="${y}" width="1006" height="34" fill="#f9fafb"/>`)
    lines.push(`<line x1="249" x2="1255" y1="${y + 34}" y2="${y + 34}" stroke="#eef0f3"/>`)
    const row = [`IMG_${4031 + r * 17}.jpg`, ['webp', 'avif', 'jpeg'][r % 3], `${(2.1 + r * 0.37).toFixed(1)} MB`, `${(310 + r * 23)} KB`, `${(84 - r).toFixed(0)} %`, `${380 + r * 41} ms`]
    row.forEach((c, i) => text(268 + i * 165, y + 22, 14, '#111827', c))
  }
  // A code block
  lines.push(`<rect x="248" y="656" width="1008" height="120" rx="8" fill="#0f172a"/>`)
  const code = ["curl -sS -H 'Content-Type: image/jpeg' --data-binary @photo.jpg \\", "  'https://imgedge.example/api/compress?format=webp&amp;width=1600' -o photo.webp", '# 200 OK  X-Output-Size: 88249  Server-Timing: decode;dur=46, encode;dur=538']
  code.forEach((c, i) => text(268, 690 + i * 28, 14, i === 2 ? '#94a3b8' : '#e2e8f0', c))
  // A small chart
  for (let i = 0; i < 24; i++) {
    const h = 20 + ((i * 37) % 60)
    lines.push(`<rect x="${24 + i * 7}" y="${740 - h}" width="5" height="${h}" fill="#60a5fa"/>`)
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">${lines.join('')}</svg>`
}
