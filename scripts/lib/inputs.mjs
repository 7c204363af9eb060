// Test inputs for scripts/measure-memory.mjs: photo-like images of given sizes, made with the
// @jsquash WebAssembly codecs in Node and cached on disk.
//
// With a corpus photo the pixels are that photo resized (lanczos3) to the target size, plus a little
// deterministic grain so the file sizes are in the range of real phone photos (an enlarged photo is
// smoother than a sensor's output and would compress unrealistically well). Without a corpus the
// pixels are synthetic: smooth gradients plus the same grain.
//
// Needs Node >= 22 (run with node_modules/.bin/node).

import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
// Node has no ImageData: the worker's polyfill (plain TypeScript, run by Node 24's type stripping).
import '../../wasm/imagedata.ts'
import { prng } from '../../test/helpers/hostile.ts'

/** Bump when the way inputs are made changes, so stale cache entries are not reused. */
const RECIPE = 3


let codecs

/** Load and initialise the codecs once, from the project's node_modules, with compiled wasm modules. */
async function loadCodecs(root) {
  if (codecs) return codecs
  const require = createRequire(path.join(root, 'package.json'))
  const pkgDir = (name) => path.dirname(require.resolve(`${name}/package.json`))
  const compile = (name, rel) => WebAssembly.compile(fs.readFileSync(path.join(pkgDir(name), rel)))
  const load = (spec) => import(require.resolve(spec))

  const [jpegDec, jpegEnc, pngDec, pngEnc, resizeMod, oxipng] = await Promise.all([
    load('@jsquash/jpeg/decode.js'),
    load('@jsquash/jpeg/encode.js'),
    load('@jsquash/png/decode.js'),
    load('@jsquash/png/encode.js'),
    load('@jsquash/resize'),
    load('@jsquash/oxipng/optimise.js'),
  ])
  await jpegDec.init(await compile('@jsquash/jpeg', 'codec/dec/mozjpeg_dec.wasm'))
  await jpegEnc.init(await compile('@jsquash/jpeg', 'codec/enc/mozjpeg_enc.wasm'))
  await pngDec.init(await compile('@jsquash/png', 'codec/pkg/squoosh_png_bg.wasm'))
  await pngEnc.init(await compile('@jsquash/png', 'codec/pkg/squoosh_png_bg.wasm'))
  await resizeMod.initResize(await compile('@jsquash/resize', 'lib/resize/pkg/squoosh_resize_bg.wasm'))
  await oxipng.init(await compile('@jsquash/oxipng', 'codec/pkg/squoosh_oxipng_bg.wasm'))
  codecs = {
    decodeJpeg: (bytes) => jpegDec.default(bytes),
    decodePng: (bytes) => pngDec.default(bytes),
    encodeJpeg: (image, options) => jpegEnc.default(image, options),
    encodePng: (image) => pngEnc.default(image),
    optimisePng: (image, level) => oxipng.default(image, { level, optimiseAlpha: true }),
    resize: (image, width, height) => resizeMod.default(image, { width, height, method: 'lanczos3', fitMethod: 'stretch' }),
  }
  return codecs
}

/** `image` as a WebP (see makeInput), encoded by sharp (libwebp). */
async function webpOf(image, variant = 'lossy', root) {
  const sharp = createRequire(path.join(root, 'package.json'))('sharp')
  const { width, height } = image
  const pixels = Buffer.from(image.data.buffer, image.data.byteOffset, image.data.length)
  if (variant === 'alpha') {
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) pixels[(y * width + x) * 4 + 3] = Math.min(255, Math.round((255 * Math.hypot(x - width / 2, y - height / 2)) / (height / 2)))
    }
  }
  const raw = sharp(pixels, { raw: { width, height, channels: 4 } })
  return variant === 'lossless' ? raw.webp({ lossless: true, effort: 1 }).toBuffer() : raw.webp({ quality: 80 }).toBuffer()
}

/** Add sensor-like grain in place: mostly luma, a little chroma, roughly Gaussian with sigma ~ `sigma`. */
function addGrain(image, sigma, seed) {
  const random = prng(seed)
  const gauss = () => (random() + random() + random() + random() - 2) * 1.732 // var 1
  const d = image.data
  for (let i = 0; i < d.length; i += 4) {
    const luma = gauss() * sigma
    d[i] += luma + gauss() * sigma * 0.3
    d[i + 1] += luma + gauss() * sigma * 0.3
    d[i + 2] += luma + gauss() * sigma * 0.3
    d[i + 3] = 255
  }
  return image
}

/** A photo-like synthetic image: smooth overlapping gradients and soft blobs. */
function synthesise(width, height) {
  const data = new Uint8ClampedArray(width * height * 4)
  const blobs = [
    [0.3, 0.35, 0.25, [220, 150, 60]],
    [0.72, 0.6, 0.3, [40, 110, 180]],
    [0.55, 0.2, 0.18, [240, 230, 200]],
    [0.15, 0.8, 0.22, [60, 140, 70]],
  ]
  for (let y = 0; y < height; y++) {
    const v = y / height
    for (let x = 0; x < width; x++) {
      const u = x / width
      let r = 90 + 80 * v + 30 * Math.sin(u * 7.1 + v * 3.3)
      let g = 120 + 40 * Math.cos(u * 4.3 - v * 5.2) - 30 * v
      let b = 170 - 90 * v + 25 * Math.sin(u * 11.7)
      for (const [cx, cy, radius, [br, bg, bb]] of blobs) {
        const dist2 = ((u - cx) ** 2 + (v - cy) ** 2) / radius ** 2
        const w = Math.exp(-dist2 * 2)
        r += (br - r) * w
        g += (bg - g) * w
        b += (bb - b) * w
      }
      const i = (y * width + x) * 4
      data[i] = r
      data[i + 1] = g
      data[i + 2] = b
      data[i + 3] = 255
    }
  }
  return new ImageData(data, width, height)
}

/** Corpus photos to use as the source, in order of preference (4:3 first: phone photos are 4:3). */
const SOURCES = ['Wood.jpg', 'Dune.jpg', 'LadyBird.jpg', 'Storm.jpg']

export function findSource(corpusDir) {
  if (!corpusDir || !fs.existsSync(corpusDir)) return null
  for (const name of SOURCES) {
    const file = path.join(corpusDir, name)
    if (fs.existsSync(file)) return file
  }
  return null
}

/**
 * The input file for `spec` ({ format: 'jpeg' | 'png' | 'webp', width, height, progressive?, variant? }), made on first
 * use and cached in `cacheDir`. Returns { file, bytes, width, height, format, source }.
 *
 * JPEGs are written like a phone camera's: quality 90, 4:2:0, baseline (progressive: true only when
 * asked). PNGs are RGB (oxipng level 1 drops the opaque alpha channel). WebPs are written by sharp: lossy
 * at quality 80 (variant 'lossy'), lossless at effort 1 ('lossless'), or lossy with an alpha channel that
 * rises from the centre to the edges ('alpha').
 */
export async function makeInput(spec, { root, corpusDir, cacheDir, log = () => {} }) {
  const source = findSource(corpusDir)
  const origin = source ? path.basename(source, path.extname(source)).toLowerCase() : 'synthetic'
  const kind = spec.format === 'jpeg' && spec.progressive ? 'progressive' : 'baseline'
  const ext = spec.format === 'jpeg' ? 'jpg' : spec.format
  const variant = spec.format === 'jpeg' ? `-${kind}` : spec.format === 'webp' ? `-${spec.variant ?? 'lossy'}` : ''
  const name = `${origin}-${spec.width}x${spec.height}${variant}-r${RECIPE}.${ext}`
  const file = path.join(cacheDir, name)
  const describe = `${source ? path.basename(source) : 'synthetic gradients'} at ${spec.width}x${spec.height}, grain`
  if (fs.existsSync(file)) {
    return { file, bytes: fs.statSync(file).size, width: spec.width, height: spec.height, format: spec.format, source: describe }
  }

  const c = await loadCodecs(root)
  log(`making ${path.relative(root, file)} ...`)
  let image
  if (source) {
    const bytes = fs.readFileSync(source)
    const decoded = source.endsWith('.png') ? await c.decodePng(bytes) : await c.decodeJpeg(bytes)
    image = await c.resize(decoded, spec.width, spec.height)
  } else {
    image = synthesise(spec.width, spec.height)
  }
  addGrain(image, 5, spec.width * 7919 + spec.height)

  let out
  if (spec.format === 'jpeg') {
    out = await c.encodeJpeg(image, {
      quality: 90,
      baseline: !spec.progressive,
      progressive: Boolean(spec.progressive),
      optimize_coding: true,
      auto_subsample: false,
      chroma_subsample: 2,
    })
  } else if (spec.format === 'webp') {
    out = await webpOf(image, spec.variant, root)
  } else {
    out = await c.optimisePng(image, 1)
  }
  fs.mkdirSync(cacheDir, { recursive: true })
  fs.writeFileSync(`${file}.tmp`, new Uint8Array(out))
  fs.renameSync(`${file}.tmp`, file)
  return { file, bytes: out.byteLength, width: spec.width, height: spec.height, format: spec.format, source: describe }
}
