// Test inputs and case keys for scripts/measure-memory.mjs and scripts/measure-steady.mjs: photo-like
// images of given sizes in every input format, cached on disk, and the parser of the case keys both
// scripts take (webp:12, png>webp:4@width=1600, gifanim>webp:pan720).
//
// The pixels are a photo resized (lanczos3) to the target size, plus a little deterministic grain so the
// file sizes are in the range of real phone photos (an enlarged photo is smoother than a sensor's output
// and would compress unrealistically well). The photo is a corpus photo (../shared/corpus/photos) when
// there is one, else test/fixtures/large.jpg (or photo.jpg) enlarged. JPEG and PNG are written with the
// @jsquash WebAssembly codecs in Node, WebP, AVIF and GIF with sharp.
//
// Needs Node >= 22 (run with node_modules/.bin/node).

import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
// Node has no ImageData: the worker's polyfill (plain TypeScript, run by Node 24's type stripping).
import '../../wasm/imagedata.ts'
import { prng } from '../../test/helpers/hostile.ts'
import { ANIMATIONS, makeAnimation } from './animations.mjs'

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

/** `image` as a WebP, AVIF or GIF (see makeInput), encoded by sharp. */
async function sharpOf(image, format, variant, root) {
  const sharp = createRequire(path.join(root, 'package.json'))('sharp')
  const { width, height } = image
  const pixels = Buffer.from(image.data.buffer, image.data.byteOffset, image.data.length)
  if (format === 'webp' && variant === 'alpha') {
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) pixels[(y * width + x) * 4 + 3] = Math.min(255, Math.round((255 * Math.hypot(x - width / 2, y - height / 2)) / (height / 2)))
    }
  }
  const raw = sharp(pixels, { raw: { width, height, channels: 4 } })
  if (format === 'avif') return raw.removeAlpha().avif({ quality: 60, effort: 2, chromaSubsampling: '4:2:0', bitdepth: 8 }).toBuffer()
  if (format === 'gif') return raw.removeAlpha().gif().toBuffer()
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

/** Corpus photos to use as the source, in order of preference (4:3 first: phone photos are 4:3). */
const SOURCES = ['Wood.jpg', 'Dune.jpg', 'LadyBird.jpg', 'Storm.jpg']

/** Committed photos to enlarge when there is no corpus (test/fixtures/README.md has their sources). */
const FIXTURE_SOURCES = ['large.jpg', 'photo.jpg']

/** The first of SOURCES in `corpusDir`, or null. */
export function findSource(corpusDir) {
  if (!corpusDir || !fs.existsSync(corpusDir)) return null
  for (const name of SOURCES) {
    const file = path.join(corpusDir, name)
    if (fs.existsSync(file)) return file
  }
  return null
}

/** The photo inputs are made from: a corpus photo, else a test fixture; null only when both are missing. */
export function sourcePhoto(corpusDir, root) {
  const fixtures = FIXTURE_SOURCES.map((name) => path.join(root, 'test', 'fixtures', name))
  return findSource(corpusDir) ?? fixtures.find((file) => fs.existsSync(file)) ?? null
}

/**
 * The input file for `spec` ({ format: 'jpeg' | 'png' | 'webp' | 'avif' | 'gif', width, height, progressive?,
 * variant? }), made on first use and cached in `cacheDir`. Returns { file, bytes, width, height, format, source }.
 *
 * JPEGs are written like a phone camera's: quality 90, 4:2:0, baseline (progressive: true only when
 * asked). PNGs are RGB (oxipng level 1 drops the opaque alpha channel). WebPs are written by sharp: lossy
 * at quality 80 (variant 'lossy'), lossless at effort 1 ('lossless'), or lossy with an alpha channel that
 * rises from the centre to the edges ('alpha'). AVIFs by sharp (libaom): quality 60, 4:2:0, 8-bit,
 * effort 2 (a 16 MP one takes about a minute at the default). GIFs by sharp: one frame, 256 colours.
 *
 * @example
 * const { file } = await makeInput({ format: 'avif', width: 4032, height: 3024 }, { root, corpusDir, cacheDir })
 */
export async function makeInput(spec, { root, corpusDir, cacheDir, log = () => {} }) {
  const source = sourcePhoto(corpusDir, root)
  if (!source) throw new Error(`no photo to make inputs from: neither ${corpusDir} nor test/fixtures/large.jpg`)
  const origin = path.basename(source, path.extname(source)).toLowerCase()
  const kind = spec.format === 'jpeg' && spec.progressive ? 'progressive' : 'baseline'
  const ext = spec.format === 'jpeg' ? 'jpg' : spec.format
  const variant = spec.format === 'jpeg' ? `-${kind}` : spec.format === 'webp' ? `-${spec.variant ?? 'lossy'}` : ''
  const name = `${origin}-${spec.width}x${spec.height}${variant}-r${RECIPE}.${ext}`
  const file = path.join(cacheDir, name)
  const describe = `${path.basename(source)} at ${spec.width}x${spec.height}, grain`
  if (fs.existsSync(file)) {
    return { file, bytes: fs.statSync(file).size, width: spec.width, height: spec.height, format: spec.format, source: describe }
  }

  const c = await loadCodecs(root)
  log(`making ${path.relative(root, file)} ...`)
  const bytes = fs.readFileSync(source)
  const decoded = source.endsWith('.png') ? await c.decodePng(bytes) : await c.decodeJpeg(bytes)
  const image = await c.resize(decoded, spec.width, spec.height)
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
  } else if (spec.format === 'png') {
    out = await c.optimisePng(image, 1)
  } else {
    out = await sharpOf(image, spec.format, spec.variant, root)
  }
  fs.mkdirSync(cacheDir, { recursive: true })
  fs.writeFileSync(`${file}.tmp`, new Uint8Array(out))
  fs.renameSync(`${file}.tmp`, file)
  return { file, bytes: out.byteLength, width: spec.width, height: spec.height, format: spec.format, source: describe }
}

// ---------------------------------------------------------------------------------------------------
// Case keys

/**
 * Photo sizes (4:3) by megapixels: phones (12 MP; 24 MP is an iPhone's default 5712x4284) and cameras (36, and 50 MP,
 * about the default MAX_INPUT_PIXELS of 50000000).
 */
export const SIZES = { 1: [1152, 864], 2: [1632, 1224], 4: [2304, 1728], 12: [4032, 3024], 16: [4608, 3456], 24: [5712, 4284], 36: [6928, 5196], 50: [8160, 6120] }

/** Input kinds a case key may name, and how makeInput writes each. */
export const INPUT_KINDS = {
  jpeg: { format: 'jpeg', mime: 'image/jpeg', label: 'JPEG' },
  pjpeg: { format: 'jpeg', progressive: true, mime: 'image/jpeg', label: 'progressive JPEG' },
  png: { format: 'png', mime: 'image/png', label: 'PNG' },
  webp: { format: 'webp', mime: 'image/webp', label: 'WebP' },
  webpll: { format: 'webp', variant: 'lossless', mime: 'image/webp', label: 'lossless WebP' },
  webpa: { format: 'webp', variant: 'alpha', mime: 'image/webp', label: 'WebP with alpha' },
  avif: { format: 'avif', mime: 'image/avif', label: 'AVIF' },
  gif: { format: 'gif', mime: 'image/gif', label: 'GIF' },
  // An animated GIF of scripts/lib/animations.mjs, named in place of the MP (gifanim>webp:pan720).
  gifanim: { format: 'gif', mime: 'image/gif', label: 'animated GIF', animation: true },
}

export const OUTPUTS = ['jpeg', 'webp', 'avif', 'png']

/**
 * A case: `input` (a key of INPUT_KINDS) converted to `output` at `mp` (a key of SIZES; for an animation input, the
 * name of one of scripts/lib/animations.mjs's ANIMATIONS), with `query`, the extra query parameters of POST
 * /api/compress besides format (e.g. { width: 1600 }); `file`, an image to send instead of a photo made at `mp`. `key`
 * is the case's key (see caseOfKey). An animation case's `mp` is one frame's, and it has `animation` and `frames`.
 */
export function makeCase(input, output, mp, query = {}, file = null) {
  const animation = typeof mp === 'string' ? ANIMATIONS[mp] : null
  const [width, height] = animation ? [animation.width, animation.height] : file ? pngSize(file) : SIZES[mp]
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)])).toString()
  const key = `${input === 'jpeg' ? '' : `${input}>`}${output}:${file ?? mp}${qs ? `@${qs}` : ''}`
  const frames = animation ? { animation: mp, frames: animation.frames } : {}
  return { key, input, output, mp: file || animation ? (width * height) / 1e6 : mp, width, height, query, qs, file, ...frames }
}

/** A file's width and height: a PNG's from its IHDR, any other format's from sharp. */
function pngSize(file) {
  const bytes = fs.readFileSync(file)
  if (bytes.toString('latin1', 12, 16) === 'IHDR') return [bytes.readUInt32BE(16), bytes.readUInt32BE(20)]
  const script = "require('sharp')(process.argv[1]).metadata().then((m) => console.log(m.width, m.height))"
  return execFileSync(process.execPath, ['-e', script, file], { encoding: 'utf8' }).trim().split(' ').map(Number)
}

/**
 * A case from its key: OUTPUT:MP for JPEG input (jpeg:12, webp:4), INPUT>OUTPUT:MP for another input kind
 * (png>webp:12, avif>jpeg:16), @QUERY for options (webp:12@width=1600), and a file of the input's format in
 * place of MP (png>webp:shots/2880x1800.png@width=1200); for an animated GIF, the animation's name in place of
 * MP (gifanim>webp:pan720@width=640; names in scripts/lib/animations.mjs). Throws on a key it cannot read.
 *
 * @example
 * caseOfKey('gif>webp:4@width=1600') // { input: 'gif', output: 'webp', mp: 4, width: 2304, height: 1728, qs: 'width=1600', ... }
 */
export function caseOfKey(key) {
  const m = /^(?:([a-z]+)>)?([a-z]+):([^@]+)(?:@(.+))?$/i.exec(key.trim())
  const bad = (why) => new Error(`bad case key "${key}": ${why} (expected e.g. webp:12, png>webp:12 or webp:12@width=1600)`)
  if (!m) throw bad('not OUTPUT:MP')
  const [, input = 'jpeg', output, size, qs = ''] = m.map((v, i) => (i === 3 ? v : v?.toLowerCase().replace(/^jpg$/, 'jpeg')))
  if (!INPUT_KINDS[input]) throw bad(`input one of ${Object.keys(INPUT_KINDS).join(', ')}`)
  if (!OUTPUTS.includes(output)) throw bad(`output one of ${OUTPUTS.join(', ')}`)
  const query = Object.fromEntries(new URLSearchParams(qs))
  if (INPUT_KINDS[input].animation) {
    if (!ANIMATIONS[size]) throw bad(`an animation: one of ${Object.keys(ANIMATIONS).join(', ')}`)
    return makeCase(input, output, size, query)
  }
  const file = /^\d+$/.test(size) ? null : path.resolve(size)
  if (!file && !SIZES[size]) throw bad(`MP one of ${Object.keys(SIZES).join(', ')}, or a file`)
  return makeCase(input, output, Number(size), query, file)
}

/** The input file of `testCase`: its own file, or the photo makeInput makes (and caches) for it. */
export async function inputOf(testCase, options) {
  if (testCase.animation) {
    const made = await makeAnimation(testCase.animation, options)
    return { file: made.file, bytes: made.size, width: made.width, height: made.height, frames: made.frames, format: 'gif', source: `${made.kind}, ${made.width}x${made.height} x ${made.frames} frames` }
  }
  if (testCase.file) {
    const { file, width, height } = testCase
    return { file, bytes: fs.statSync(file).size, width, height, format: INPUT_KINDS[testCase.input].format, source: path.basename(file) }
  }
  const kind = INPUT_KINDS[testCase.input]
  return makeInput({ format: kind.format, progressive: kind.progressive, variant: kind.variant, width: testCase.width, height: testCase.height }, options)
}
