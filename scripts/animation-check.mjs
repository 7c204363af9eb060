// Held-out animations for issue 20's goals, outside the bench: for each corpus photo, a GIF panning across it (written by
// sharp's GIF encoder, 256 colours a frame, dithered), converted to an animated WebP by the lean codec in Node (the
// worker's frames path without the request) and by sharp in the same process, at quality 80 and effort 4.
//
//   node scripts/animation-check.mjs [--size 640x400] [--frames 16] [--photos Storm.jpg,Blinds.jpg]
//
// Prints, per photo: the GIF's bytes, ours and sharp's as a share of them, and the milliseconds a frame each took.
// GIFs are cached in .cache/animation-check/.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import sharp from 'sharp'
import '../wasm/imagedata.ts'
import { LeanCodec } from '../wasm/lean.ts'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const CORPUS = path.resolve(ROOT, '..', 'shared', 'corpus', 'photos')
const CACHE = path.join(ROOT, '.cache', 'animation-check')

function args() {
  const out = { width: 640, height: 400, frames: 16, photos: null }
  const argv = process.argv.slice(2)
  for (let i = 0; i < argv.length; i += 2) {
    const [name, value] = [argv[i], argv[i + 1] ?? '']
    if (name === '--size') [out.width, out.height] = value.split('x').map(Number)
    else if (name === '--frames') out.frames = Number(value)
    else if (name === '--photos') out.photos = value.split(',')
    else throw new Error(`unknown argument ${name}`)
  }
  return out
}

/** A GIF of `frames` windows of `width` x `height` moving diagonally across the photo enlarged to twice that. */
async function panGif(photo, width, height, frames) {
  const file = path.join(CACHE, `${path.parse(photo).name}-${width}x${height}x${frames}.gif`)
  if (fs.existsSync(file)) return fs.readFileSync(file)
  const { data } = await sharp(path.join(CORPUS, photo)).resize(width * 2, height * 2, { fit: 'cover' }).ensureAlpha().raw().toBuffer({ resolveWithObject: true })
  const stacked = Buffer.alloc(width * height * 4 * frames)
  for (let f = 0; f < frames; f++) {
    const [ox, oy] = [Math.round((f / frames) * width), Math.round((f / frames) * height * 0.5)]
    for (let y = 0; y < height; y++) data.copy(stacked, (f * height + y) * width * 4, ((oy + y) * width * 2 + ox) * 4, ((oy + y) * width * 2 + ox + width) * 4)
  }
  const gif = await sharp(stacked, { raw: { width, height: height * frames, channels: 4, pageHeight: height } }).gif({ loop: 0, delay: Array(frames).fill(80) }).toBuffer()
  fs.mkdirSync(CACHE, { recursive: true })
  fs.writeFileSync(file, gif)
  return gif
}

/** The worker's frames path in the lean codec: every composited frame into libwebp's animation encoder. */
function ours(module, gif, width, height) {
  const lean = new LeanCodec(module, { maxBytes: 1024 * 2 ** 20, reached: false })
  lean.openFrames(gif, 'gif', width, height)
  lean.startAnimation(width, height, 0, { quality: 80, method: 4, lossless: false })
  let timestamp = 0
  for (let duration = lean.nextFrame(); duration >= 0; duration = lean.nextFrame()) {
    lean.rowsFromFrame()
    lean.rowsToFrame(timestamp)
    timestamp += duration
  }
  return lean.finishAnimation(timestamp)
}

async function main() {
  const { width, height, frames, photos } = args()
  if (!fs.existsSync(CORPUS)) throw new Error(`needs the corpus photos in ${CORPUS}`)
  const module = new WebAssembly.Module(fs.readFileSync(path.join(ROOT, 'wasm', 'lean', 'lean.wasm')))
  const timed = async (run) => {
    const start = performance.now()
    const bytes = await run()
    return { bytes, ms: (performance.now() - start) / frames }
  }
  console.log('| photo | GIF bytes | ours (x GIF) | sharp (x GIF) | ours ms/frame | sharp ms/frame |\n|---|---|---|---|---|---|')
  for (const photo of photos ?? fs.readdirSync(CORPUS).filter((name) => name.endsWith('.jpg'))) {
    const gif = await panGif(photo, width, height, frames)
    const a = await timed(() => ours(module, gif, width, height))
    const b = await timed(() => sharp(gif, { animated: true }).webp({ quality: 80, effort: 4 }).toBuffer())
    const share = (n) => (n / gif.length).toFixed(3)
    console.log(`| ${photo} | ${gif.length} | ${share(a.bytes.length)} | ${share(b.bytes.length)} | ${a.ms.toFixed(1)} | ${b.ms.toFixed(1)} |`)
  }
}

await main()
