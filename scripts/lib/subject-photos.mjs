// The hand-marked subject photos of scripts/data/subject-photos.json, prepared as scripts/subject-crop-check.mjs sends
// them (also read by scripts/subject-crop-tune.mjs).
import { execFileSync } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import sharp from 'sharp'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
export const DATA = JSON.parse(fs.readFileSync(path.join(ROOT, 'scripts', 'data', 'subject-photos.json'), 'utf8'))
const MAX_SIDE = 2048

/** The aspect ratios asked for, as the output box of a fit=cover request. */
export const RATIOS = [
  { name: '1:1', width: 400, height: 400 },
  { name: '16:9', width: 640, height: 360 },
  { name: '9:16', width: 360, height: 640 },
  { name: '4:5', width: 400, height: 500 },
]

/** The extracted package's folder, downloaded and checked the first time. */
function packageRoot(name) {
  const { version, sha256 } = DATA.packages[name]
  const cache = path.join(ROOT, '.cache', 'subject-photos')
  const root = path.join(cache, name)
  if (fs.existsSync(root)) return root
  fs.mkdirSync(cache, { recursive: true })
  execFileSync('apt-get', ['download', `${name}=${version}`], { cwd: cache, stdio: 'inherit' })
  const deb = fs.readdirSync(cache).find((file) => file.startsWith(`${name}_`) && file.endsWith('.deb'))
  const sum = crypto.createHash('sha256').update(fs.readFileSync(path.join(cache, deb))).digest('hex')
  if (sum !== sha256) throw new Error(`${deb}: sha256 ${sum}, expected ${sha256}`)
  execFileSync('dpkg-deb', ['-x', path.join(cache, deb), root])
  return root
}

/** The source's file, or its slice `bytes` (offset, length) where it is inside another file. */
function sourceInput(source, corpus) {
  const file = source.corpus ? path.join(corpus, source.corpus) : path.join(packageRoot(source.package), source.path)
  if (!source.bytes) return file
  const [offset, length] = source.bytes
  return fs.readFileSync(file).subarray(offset, offset + length)
}

/**
 * The photo as sent (a JPEG at most MAX_SIDE on its longer side) and its subject box in its pixels.
 *
 * @example
 * const { bytes, width, height, box, half } = await prepare(DATA.photos[0], '/work/shared/corpus')
 */
export async function prepare(photo, corpus) {
  const source = DATA.sources[photo.source]
  const [cx, cy, cw, ch] = photo.crop ?? [0, 0, ...source.size]
  const scale = Math.min(1, MAX_SIDE / Math.max(cw, ch))
  const width = Math.round(cw * scale)
  const height = Math.round(ch * scale)
  const bytes = await sharp(sourceInput(source, corpus)).extract({ left: cx, top: cy, width: cw, height: ch }).resize(width, height).jpeg({ quality: 90 }).toBuffer()
  const [bx, by, bw, bh] = source.box
  const left = Math.max(0, bx - cx)
  const top = Math.max(0, by - cy)
  const box = {
    x: Math.round(left * scale),
    y: Math.round(top * scale),
    width: Math.round((Math.min(cw, bx + bw - cx) - left) * scale),
    height: Math.round((Math.min(ch, by + bh - cy) - top) * scale),
  }
  return { ...photo, half: source.half, bytes, width, height, box }
}

/**
 * The share of the box inside the window.
 *
 * @example
 * kept({ x: 0, y: 0, width: 10, height: 10 }, { x: 5, y: 0, width: 100, height: 100 }) // 0.5
 */
export function kept(box, window) {
  const w = Math.max(0, Math.min(box.x + box.width, window.x + window.width) - Math.max(box.x, window.x))
  const h = Math.max(0, Math.min(box.y + box.height, window.y + window.height) - Math.max(box.y, window.y))
  return (w * h) / (box.width * box.height)
}
