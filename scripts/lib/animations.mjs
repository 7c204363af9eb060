// Animated inputs for the animation measurements (the `--animation` phase of scripts/bench.mjs, and the gifanim cases
// of scripts/measure-memory.mjs): "typical" animated GIFs made deterministically with sharp and cached in
// .cache/animations/, plus the committed test/fixtures/anim.gif and anim.webp; and a reader of an animation's frame
// delays and loop count straight from its GIF blocks or RIFF chunks.
//
// The GIFs are written by sharp's encoder (cgif with libimagequant: 256 colours a frame, dithered), as most GIFs on the
// web are made from video or screen captures by a quantising tool:
//   pan      a pan and zoom across a photo, 640x400, 18 frames (a reaction GIF, a clip of video)
//   cartoon  flat colours with outlines, shapes moving over a plain background, 480x360, 20 frames
//   screen   a screen recording: a window whose text lines appear one by one, a moving pointer, 800x600, 15 frames
//   pan720   the memory case: a pan across a photo, 100 frames of 1280x720 (every frame differs), with the unchanged
//            pixels of a frame transparent as GIF optimisers write them
// Photos come from ../shared/corpus/photos when it is there, else test/fixtures/large.jpg, else a synthesised landscape.
//
// Needs Node >= 22 (run with node_modules/.bin/node).

import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import { prng } from '../../test/helpers/hostile.ts'

/** Bump when the way the animations are made changes, so stale cache entries are not reused. */
const RECIPE = 1

/**
 * The animations made here. `loop` is sharp's (plays: 0 forever, 1 once, N writes a NETSCAPE count of N - 1), `delays`
 * in ms (GIF keeps centiseconds). Some delays are 0 and 10 ms on purpose: browsers play those as 100 ms, and the API
 * must write what they play.
 */
export const ANIMATIONS = {
  pan: { kind: 'photo pan and zoom', width: 640, height: 400, frames: 18, delays: () => 80, loop: 0, photos: ['Dune.jpg', 'Storm.jpg'] },
  cartoon: { kind: 'flat-colour cartoon', width: 480, height: 360, frames: 20, delays: (i, n) => (i === n - 1 ? 600 : 60), loop: 3 },
  screen: { kind: 'screen recording', width: 800, height: 600, frames: 15, delays: (i, n) => (i === 0 ? 0 : i === 1 ? 10 : i === n - 1 ? 2000 : 300 + 100 * (i % 3)), loop: 1 },
  // (written as GIF optimisers write video: a pixel within 8 of the frame before is left transparent, which keeps the
  // file at 20 MB, under the default MAX_INPUT_BYTES of 25 MiB, where plain frames make 45 MB)
  pan720: { kind: 'photo pan, optimised GIF', width: 1280, height: 720, frames: 100, delays: () => 40, loop: 0, photos: ['FreshFlower.jpg', 'Storm.jpg', 'LadyBird.jpg'], gif: { interFrameMaxError: 8 } },
}

/** The committed animations, used as they are. */
const FIXTURES = [
  { name: 'anim.gif', file: 'test/fixtures/anim.gif', kind: 'test fixture, GIF', mime: 'image/gif' },
  { name: 'anim.webp', file: 'test/fixtures/anim.webp', kind: 'test fixture, animated WebP', mime: 'image/webp' },
]

const sharpOf = (root) => createRequire(path.join(root, 'package.json'))('sharp')

/** The photo to pan across: the first of `names` in the corpus, else the test fixture, else null (synthesise). */
function photoFor(names, root, corpusDir) {
  for (const name of names) {
    const file = corpusDir ? path.join(corpusDir, name) : null
    if (file && fs.existsSync(file)) return file
  }
  const fixture = path.join(root, 'test', 'fixtures', 'large.jpg')
  return fs.existsSync(fixture) ? fixture : null
}

/** A photo-like landscape when there is no photo at all: gradients and soft shapes, from a seeded generator. */
function landscapeSvg(width, height, seed) {
  const random = prng(seed)
  const shapes = []
  for (let i = 0; i < 160; i++) {
    const [x, y, r] = [random() * width, height * (0.35 + 0.65 * random()), 10 + random() * 90]
    const colour = `rgb(${40 + Math.round(random() * 120)},${70 + Math.round(random() * 120)},${30 + Math.round(random() * 80)})`
    shapes.push(`<circle cx="${x.toFixed(1)}" cy="${y.toFixed(1)}" r="${r.toFixed(1)}" fill="${colour}" opacity="0.7"/>`)
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
<defs><linearGradient id="sky" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#3b6fb6"/><stop offset="0.5" stop-color="#f2c38b"/><stop offset="1" stop-color="#5a7d3a"/></linearGradient>
<filter id="soft"><feGaussianBlur stdDeviation="3"/></filter></defs>
<rect width="${width}" height="${height}" fill="url(#sky)"/><g filter="url(#soft)">${shapes.join('')}</g></svg>`
}

/** The source photo's pixels as raw RGBA: { data, width, height, source }. */
async function sourcePixels(sharp, spec, root, corpusDir) {
  const file = photoFor(spec.photos, root, corpusDir)
  const input = file ? sharp(file).rotate() : sharp(Buffer.from(landscapeSvg(1920, 1200, 20)))
  const { data, info } = await input.removeAlpha().ensureAlpha().raw().toBuffer({ resolveWithObject: true })
  return { data, width: info.width, height: info.height, source: file ? path.basename(file) : 'synthesised landscape' }
}

/**
 * Frames of a camera moving across the photo: the window (the output's aspect) drifts left to right and a little up and
 * down while it zooms in by a quarter, each frame cut out and scaled (Lanczos3) to the output size.
 */
async function panFrames(sharp, spec, photo) {
  const { width, height, frames } = spec
  const aspect = width / height
  const fullW = Math.min(photo.width, photo.height * aspect) * 0.8
  const out = []
  for (let i = 0; i < frames; i++) {
    const t = i / (frames - 1)
    const w = fullW / (1 + 0.25 * t)
    const h = w / aspect
    const cx = photo.width * (0.3 + 0.4 * t)
    const cy = photo.height * (0.5 + 0.06 * Math.sin(t * Math.PI * 2))
    const left = Math.round(Math.min(photo.width - w, Math.max(0, cx - w / 2)))
    const top = Math.round(Math.min(photo.height - h, Math.max(0, cy - h / 2)))
    const region = { left, top, width: Math.round(w), height: Math.round(h) }
    out.push(await sharp(photo.data, { raw: { width: photo.width, height: photo.height, channels: 4 } }).extract(region).resize(width, height, { fit: 'fill', kernel: 'lanczos3' }).raw().toBuffer())
  }
  return out
}

/** One frame of the cartoon: a sun, a bouncing ball, a walking box with eyes and a drifting cloud, with black outlines. */
function cartoonSvg(i, n, width, height) {
  const t = i / n
  const ground = height * 0.72
  const ballX = width * (0.1 + 0.8 * t)
  const ballY = ground - 30 - Math.abs(Math.sin(t * Math.PI * 3)) * height * 0.4
  const boxX = width * (0.85 - 0.6 * t)
  const step = i % 2 ? 6 : -6
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
<rect width="${width}" height="${ground}" fill="#8fd3f4"/><rect y="${ground}" width="${width}" height="${height - ground}" fill="#6abf4b"/>
<circle cx="${width * 0.85}" cy="${height * 0.16}" r="${28 + 3 * Math.sin(t * Math.PI * 4)}" fill="#ffd23f" stroke="#222" stroke-width="3"/>
<g transform="translate(${(width * (0.2 + 0.3 * t)).toFixed(1)} ${height * 0.18})"><ellipse rx="48" ry="20" fill="#fff" stroke="#222" stroke-width="3"/><ellipse cx="30" cy="-8" rx="28" ry="16" fill="#fff" stroke="#222" stroke-width="3"/></g>
<circle cx="${ballX.toFixed(1)}" cy="${ballY.toFixed(1)}" r="30" fill="#e63946" stroke="#222" stroke-width="4"/>
<path d="M ${(ballX - 18).toFixed(1)} ${(ballY - 8).toFixed(1)} q 10 -14 22 -6" fill="none" stroke="#fff" stroke-width="5" stroke-linecap="round"/>
<g transform="translate(${boxX.toFixed(1)} ${ground - 90})"><rect width="70" height="80" rx="8" fill="#7b2cbf" stroke="#222" stroke-width="4"/>
<circle cx="22" cy="28" r="9" fill="#fff" stroke="#222" stroke-width="2"/><circle cx="48" cy="28" r="9" fill="#fff" stroke="#222" stroke-width="2"/>
<circle cx="${20 - step / 3}" cy="29" r="4" fill="#222"/><circle cx="${46 - step / 3}" cy="29" r="4" fill="#222"/>
<line x1="20" y1="80" x2="${20 + step}" y2="96" stroke="#222" stroke-width="5"/><line x1="50" y1="80" x2="${50 - step}" y2="96" stroke="#222" stroke-width="5"/></g>
</svg>`
}

const SCREEN_LINES = [
  'import { Hono } from "hono"',
  '',
  'const app = new Hono()',
  'app.post("/api/compress", async (c) => {',
  '  const bytes = new Uint8Array(await c.req.arrayBuffer())',
  '  const header = sniff(bytes)',
  '  const plan = planConversion(header, options)',
  '  return respond(await convert(bytes, plan))',
  '})',
  '',
  'export default app',
]

/** One frame of the screen recording: an editor window whose lines are typed one per frame, a pointer moving over it. */
function screenSvg(i, n, width, height) {
  const shown = Math.min(SCREEN_LINES.length, Math.max(0, i - 2))
  const typing = SCREEN_LINES[shown] ?? ''
  const partial = i >= 2 && shown < SCREEN_LINES.length ? typing.slice(0, Math.ceil(typing.length / 2)) : ''
  const esc = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
  const lines = SCREEN_LINES.slice(0, shown).map((l, k) => `<text x="230" y="${104 + 22 * k}">${esc(l)}</text>`)
  if (partial) lines.push(`<text x="230" y="${104 + 22 * shown}">${esc(partial)}</text>`)
  const caretX = 230 + 7.8 * (partial || SCREEN_LINES[Math.max(0, shown - 1)] || '').length
  const caretY = 88 + 22 * (partial ? shown : Math.max(0, shown - 1))
  const px = 600 - 340 * (i / n)
  const py = 450 - 260 * Math.sin((i / n) * Math.PI)
  const files = ['src/', '  index.ts', '  pipeline/', '    convert.ts', '    limits.ts', '  routes/', 'test/', 'package.json', 'wrangler.toml']
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="DejaVu Sans Mono, monospace" font-size="13">
<rect width="${width}" height="${height}" fill="#e8eaed"/>
<rect x="20" y="20" width="${width - 40}" height="${height - 40}" rx="6" fill="#ffffff" stroke="#b0b4ba"/>
<rect x="20" y="20" width="${width - 40}" height="34" rx="6" fill="#d7dadf"/><circle cx="42" cy="37" r="6" fill="#ff5f57"/><circle cx="62" cy="37" r="6" fill="#febc2e"/><circle cx="82" cy="37" r="6" fill="#28c840"/>
<text x="${width / 2}" y="42" text-anchor="middle" font-family="DejaVu Sans, sans-serif" fill="#333">index.ts — imgedge</text>
<rect x="20" y="54" width="190" height="${height - 74}" fill="#f3f4f6"/>
<g fill="#444">${files.map((f, k) => `<text x="34" y="${84 + 22 * k}" xml:space="preserve"${k === 1 ? ' font-weight="bold"' : ''}>${f}</text>`).join('')}</g>
<rect x="20" y="${68 + 22}" width="190" height="22" fill="#2563eb" opacity="0.15"/>
<g fill="#1f2937" xml:space="preserve">${lines.join('')}</g>
<rect x="${caretX.toFixed(1)}" y="${caretY}" width="2" height="18" fill="#111"/>
<rect x="210" y="${height - 48}" width="${width - 230}" height="28" fill="#2563eb"/><text x="226" y="${height - 29}" fill="#fff" font-family="DejaVu Sans, sans-serif">${shown} lines · UTF-8 · TypeScript</text>
<path d="M ${px.toFixed(0)} ${py.toFixed(0)} l 0 22 l 6 -5 l 5 10 l 4 -2 l -5 -10 l 8 0 z" fill="#000" stroke="#fff" stroke-width="1.5"/>
</svg>`
}

/** The frames of `spec` as raw RGBA buffers, and where their pixels came from. */
async function framesOf(sharp, name, spec, root, corpusDir) {
  if (spec.photos) {
    const photo = await sourcePixels(sharp, spec, root, corpusDir)
    return { frames: await panFrames(sharp, spec, photo), source: photo.source }
  }
  const svg = name === 'cartoon' ? cartoonSvg : screenSvg
  const frames = []
  for (let i = 0; i < spec.frames; i++) frames.push(await sharp(Buffer.from(svg(i, spec.frames, spec.width, spec.height))).ensureAlpha().raw().toBuffer())
  return { frames, source: 'drawn (SVG)' }
}

/**
 * The animated GIF `name` (a key of ANIMATIONS), made on first use and cached in .cache/animations/.
 *
 * @example
 * const { file, width, height, frames } = await makeAnimation('pan720', { root, corpusDir })
 */
export async function makeAnimation(name, { root, corpusDir, log = () => {} }) {
  const spec = ANIMATIONS[name]
  if (!spec) throw new Error(`no animation "${name}" (one of ${Object.keys(ANIMATIONS).join(', ')})`)
  const sharp = sharpOf(root)
  const photo = spec.photos ? photoFor(spec.photos, root, corpusDir) : null
  const origin = spec.photos ? (photo ? path.basename(photo, path.extname(photo)).toLowerCase() : 'synthetic') : 'drawn'
  const cacheDir = path.join(root, '.cache', 'animations')
  const file = path.join(cacheDir, `${name}-${origin}-${spec.width}x${spec.height}x${spec.frames}-r${RECIPE}.gif`)
  const info = { name, file, kind: spec.kind, mime: 'image/gif', width: spec.width, height: spec.height, frames: spec.frames }
  if (fs.existsSync(file)) return { ...info, size: fs.statSync(file).size }
  log(`making ${path.relative(root, file)} ...`)
  const { frames, source } = await framesOf(sharp, name, spec, root, corpusDir)
  const { width, height } = spec
  const delay = frames.map((_, i) => spec.delays(i, frames.length))
  const gif = await sharp(Buffer.concat(frames), { raw: { width, height: height * frames.length, channels: 4, pageHeight: height } }).gif({ loop: spec.loop, delay, ...spec.gif }).toBuffer()
  fs.mkdirSync(cacheDir, { recursive: true })
  fs.writeFileSync(`${file}.tmp`, gif)
  fs.renameSync(`${file}.tmp`, file)
  log(`  ${path.basename(file)}: ${frames.length} frames from ${source}, ${(gif.length / 1024).toFixed(0)} KiB`)
  return { ...info, size: gif.length }
}

/**
 * Every animation to measure, made when missing: [{ name, bytes, kind, file, mime, width, height, frames }], the made
 * GIFs in the order of ANIMATIONS (or of `names`), then the test fixtures (unless `fixtures` is false).
 *
 * @example
 * for (const a of await animations({ root, corpusDir, names: ['pan', 'cartoon'] })) await post(a.bytes, a.mime)
 */
export async function animations({ root, corpusDir, names = Object.keys(ANIMATIONS), fixtures = true, log = () => {} }) {
  const out = []
  for (const name of names) {
    const made = await makeAnimation(name, { root, corpusDir, log })
    out.push({ ...made, bytes: fs.readFileSync(made.file) })
  }
  if (!fixtures) return out
  const sharp = sharpOf(root)
  for (const f of FIXTURES) {
    const file = path.join(root, f.file)
    if (!fs.existsSync(file)) continue
    const meta = await sharp(file, { animated: true }).metadata()
    out.push({ name: f.name, file, kind: f.kind, mime: f.mime, width: meta.width, height: meta.pageHeight ?? meta.height, frames: meta.pages ?? 1, bytes: fs.readFileSync(file) })
  }
  return out
}

// ---------------------------------------------------------------------------------------------------
// Frame delays and loop counts, read from the file itself (not through a decoder that may adjust them)

/** A GIF's frames: the delay of each (ms, as written: centiseconds x 10) and its NETSCAPE loop count (null: none). */
function gifTiming(b) {
  const delays = []
  let loop = null
  let pendingDelay = 0
  // (the logical screen descriptor's global colour table, if any, follows the 13-byte header)
  let p = 13 + (b[10] & 0x80 ? 3 * 2 ** ((b[10] & 7) + 1) : 0)
  const skipSubBlocks = () => {
    while (p < b.length && b[p] !== 0) p += b[p] + 1
    p++
  }
  while (p < b.length) {
    const type = b[p]
    if (type === 0x3b) break
    if (type === 0x21) {
      const label = b[p + 1]
      if (label === 0xf9) pendingDelay = (b[p + 4] | (b[p + 5] << 8)) * 10
      if (label === 0xff && b.toString('latin1', p + 3, p + 14) === 'NETSCAPE2.0' && b[p + 15] === 1) loop = b[p + 16] | (b[p + 17] << 8)
      p += 2
      skipSubBlocks()
    } else if (type === 0x2c) {
      delays.push(pendingDelay)
      pendingDelay = 0
      const packed = b[p + 9]
      p += 10 + (packed & 0x80 ? 3 * 2 ** ((packed & 7) + 1) : 0) + 1 // (and the LZW minimum code size)
      skipSubBlocks()
    } else {
      throw new Error(`GIF: unexpected block 0x${type.toString(16)} at ${p}`)
    }
  }
  return { format: 'gif', frames: delays.length, delays, loop }
}

/** A WebP's frames from its RIFF chunks: ANIM's loop count, each ANMF's duration (a still WebP: one frame, no loop). */
function webpTiming(b) {
  if (b.toString('latin1', 0, 4) !== 'RIFF' || b.toString('latin1', 8, 12) !== 'WEBP') throw new Error('not a WebP (RIFF/WEBP)')
  const delays = []
  const frames = []
  let loop = null
  let background = null
  for (let p = 12; p + 8 <= b.length; ) {
    const fourcc = b.toString('latin1', p, p + 4)
    const size = b.readUInt32LE(p + 4)
    const data = p + 8
    if (fourcc === 'ANIM') {
      background = b.readUInt32LE(data)
      loop = b.readUInt16LE(data + 4)
    } else if (fourcc === 'ANMF') {
      const u24 = (at) => b[at] | (b[at + 1] << 8) | (b[at + 2] << 16)
      frames.push({ x: 2 * u24(data), y: 2 * u24(data + 3), width: u24(data + 6) + 1, height: u24(data + 9) + 1, blend: !(b[data + 15] & 2), dispose: Boolean(b[data + 15] & 1) })
      delays.push(u24(data + 12))
    }
    p = data + size + (size & 1)
  }
  return { format: 'webp', frames: Math.max(1, frames.length), delays: frames.length ? delays : [], loop, background, rectangles: frames }
}

/**
 * Frame count, delays (ms) and loop count of a GIF or WebP, read from its blocks or chunks. A GIF's loop is its NETSCAPE
 * count (null when it has none), a WebP's the ANIM chunk's (0 = forever).
 *
 * @example
 * animationTiming(fs.readFileSync('test/fixtures/anim.gif')) // { format: 'gif', frames: 10, delays: [3000, ...], loop: 2 }
 */
export function animationTiming(bytes) {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (b.toString('latin1', 0, 3) === 'GIF') return gifTiming(b)
  return webpTiming(b)
}

/**
 * What an animated WebP made from `input` should hold: the same frames; a GIF's delays of 10 ms or less as 100 ms (what
 * browsers play), and its NETSCAPE count N as N + 1 plays (none: 1; 0 stays 0, forever); a WebP's kept as they are.
 */
export function expectedWebpTiming(input) {
  if (input.format === 'webp') return { frames: input.frames, delays: input.delays, loop: input.loop ?? 0 }
  const loop = input.loop === null ? 1 : input.loop === 0 ? 0 : Math.min(65535, input.loop + 1)
  return { frames: input.frames, delays: input.delays.map((d) => (d <= 10 ? 100 : d)), loop }
}
