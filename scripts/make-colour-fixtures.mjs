#!/usr/bin/env node
// Writes the colour-management fixtures in test/fixtures/colour/ and their expected sRGB values (expected.json).
//
//   node scripts/make-colour-fixtures.mjs
//
// Every profile is written here, from numbers (ICC v2: matrix/TRC RGB and grey profiles, a lut8 CMYK one), so the
// fixtures carry no third-party profile; patches of known colours are stored in each profile's space, and the
// expected sRGB values are computed here with plain colour maths (not Little CMS, which the worker uses), so the
// test compares two independent computations. Images are encoded by sharp (devDependency). Deterministic.
import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import { fileURLToPath } from 'node:url'
import sharp from 'sharp'
import { curvGamma, D50_XYZ, descTag, lut8, paraSrgb, profile, textTag, xyzTag } from './lib/icc.mjs'

const OUT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'test', 'fixtures', 'colour')
fs.mkdirSync(OUT, { recursive: true })

// ------------------------------------------------------------------ colour maths

const D65 = [0.3127, 0.329]
const xyToXYZ = ([x, y]) => [x / y, 1, (1 - x - y) / y]
const mul = (m, v) => m.map((row) => row[0] * v[0] + row[1] * v[1] + row[2] * v[2])
const matmul = (a, b) => a.map((row) => [0, 1, 2].map((j) => row[0] * b[0][j] + row[1] * b[1][j] + row[2] * b[2][j]))
function inverse(m) {
  const [[a, b, c], [d, e, f], [g, h, i]] = m
  const A = e * i - f * h, B = -(d * i - f * g), C = d * h - e * g
  const det = a * A + b * B + c * C
  return [
    [A / det, -(b * i - c * h) / det, (b * f - c * e) / det],
    [B / det, (a * i - c * g) / det, -(a * f - c * d) / det],
    [C / det, -(a * h - b * g) / det, (a * e - b * d) / det],
  ]
}
/** Linear RGB -> XYZ (white Y = 1) for primaries r, g, b and white w, each as CIE xy. */
function rgbToXyz(r, g, b, w = D65) {
  const cols = [r, g, b].map(xyToXYZ)
  const m = [0, 1, 2].map((i) => cols.map((c) => c[i]))
  const s = mul(inverse(m), xyToXYZ(w))
  return m.map((row) => row.map((v, j) => v * s[j]))
}
const BRADFORD = [[0.8951, 0.2664, -0.1614], [-0.7502, 1.7135, 0.0367], [0.0389, -0.0685, 1.0296]]
/** Bradford adaptation from white `from` (XYZ) to `to`. */
function adapt(from, to) {
  const a = mul(BRADFORD, from), b = mul(BRADFORD, to)
  return matmul(matmul(inverse(BRADFORD), [[b[0] / a[0], 0, 0], [0, b[1] / a[1], 0], [0, 0, b[2] / a[2]]]), BRADFORD)
}
const SRGB = { r: [0.64, 0.33], g: [0.3, 0.6], b: [0.15, 0.06] }
const XYZ_TO_SRGB = inverse(rgbToXyz(SRGB.r, SRGB.g, SRGB.b))
const srgbDecode = (v) => (v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4)
const srgbEncode = (v) => (v <= 0.0031308 ? 12.92 * v : 1.055 * v ** (1 / 2.4) - 0.055)
const to8 = (v) => Math.round(Math.min(1, Math.max(0, v)) * 255)
/** An 8-bit colour in an RGB space (primaries, curve) to 8-bit sRGB, D65 to D65. */
const toSrgb = (space, rgb) => mul(XYZ_TO_SRGB, mul(space.matrix, rgb.map((v) => space.decode(v / 255)))).map((v) => to8(srgbEncode(v)))
/** CIE L*a*b* (D50) to 8-bit sRGB, relative colorimetric (D50 adapted to D65). */
function labToSrgb([L, a, b]) {
  const f = (t) => (t > 6 / 29 ? t ** 3 : 3 * (6 / 29) ** 2 * (t - 4 / 29))
  const fy = (L + 16) / 116
  const xyz = [f(fy + a / 500) * D50_XYZ[0], f(fy) * D50_XYZ[1], f(fy - b / 200) * D50_XYZ[2]]
  return mul(XYZ_TO_SRGB, mul(adapt(D50_XYZ, xyToXYZ(D65)), xyz)).map((v) => to8(srgbEncode(v)))
}

// ------------------------------------------------------------------ ICC v2 profiles (scripts/lib/icc.mjs writes them)

function rgbSpace(name, primaries, curve) {
  const matrix = rgbToXyz(primaries.r, primaries.g, primaries.b)
  const d50 = matmul(adapt(xyToXYZ(D65), D50_XYZ), matrix)
  const trc = curve.gamma ? curvGamma(curve.gamma) : paraSrgb()
  const icc = profile('mntr', 'RGB ', 'XYZ ', {
    desc: descTag(name), cprt: textTag('No copyright: made by imgedge scripts/make-colour-fixtures.mjs'),
    wtpt: xyzTag(D50_XYZ), rXYZ: xyzTag(d50.map((row) => row[0])), gXYZ: xyzTag(d50.map((row) => row[1])),
    bXYZ: xyzTag(d50.map((row) => row[2])), rTRC: trc, gTRC: trc, bTRC: trc,
  })
  return { icc, matrix, decode: curve.gamma ? (v) => v ** curve.gamma : srgbDecode }
}

const P3 = rgbSpace('Display P3 (imgedge test)', { r: [0.68, 0.32], g: [0.265, 0.69], b: [0.15, 0.06] }, {})
const ADOBE = rgbSpace('Adobe RGB (1998) compatible (imgedge test)', { r: [0.64, 0.33], g: [0.21, 0.71], b: [0.15, 0.06] }, { gamma: 563 / 256 })
const GREY_LINEAR = profile('mntr', 'GRAY', 'XYZ ', {
  desc: descTag('Linear grey (imgedge test)'), cprt: textTag('No copyright: made by imgedge scripts/make-colour-fixtures.mjs'),
  wtpt: xyzTag(D50_XYZ), kTRC: curvGamma(1),
})
/** CMYK whose every ink mix prints the same L*a*b* (60, 40, -30): a profile no viewer's formula would imitate. */
const CMYK_LAB = [60, 40, -30]
function constantCmyk() {
  const lab8 = [Math.round((CMYK_LAB[0] * 255) / 100), CMYK_LAB[1] + 128, CMYK_LAB[2] + 128]
  return profile('prtr', 'CMYK', 'Lab ', {
    desc: descTag('Constant CMYK (imgedge test)'), cprt: textTag('No copyright: made by imgedge scripts/make-colour-fixtures.mjs'),
    wtpt: xyzTag(D50_XYZ), A2B0: lut8(4, 3, 2, Array.from({ length: 16 }, () => lab8).flat()),
  })
}

// ------------------------------------------------------------------ files

const W = 64, H = 16
/** Four 16x16 patches of the given colours, as raw RGB. */
const patches = (colours) => {
  const raw = Buffer.alloc(W * H * 3)
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) colours[x >> 4].forEach((v, k) => (raw[(y * W + x) * 3 + k] = v))
  return raw
}
const chunk = (type, data) => {
  const body = Buffer.concat([Buffer.from(type), data])
  const out = Buffer.alloc(8 + data.length + 4)
  out.writeUInt32BE(data.length); body.copy(out, 4); out.writeUInt32BE(zlib.crc32(body), 8 + data.length)
  return out
}
/** A PNG with `extra` chunks (iCCP, gAMA...) placed after IHDR. */
async function png(raw, channels, extra) {
  const image = sharp(raw, { raw: { width: W, height: H, channels } })
  const plain = await (channels === 1 ? image.toColourspace('b-w') : image).png({ compressionLevel: 9 }).toBuffer()
  return Buffer.concat([plain.subarray(0, 33), ...extra, plain.subarray(33)])
}
const iccp = (icc) => chunk('iCCP', Buffer.concat([Buffer.from('test\0\0'), zlib.deflateSync(icc)]))
/** A JPEG with `icc` in an APP2 ICC_PROFILE segment after SOI. */
function withJpegIcc(jpeg, icc) {
  const payload = Buffer.concat([Buffer.from('ICC_PROFILE\0\x01\x01', 'latin1'), icc])
  const marker = Buffer.from([0xff, 0xe2, (payload.length + 2) >> 8, (payload.length + 2) & 0xff])
  return Buffer.concat([jpeg.subarray(0, 2), marker, payload, jpeg.subarray(2)])
}
/** A simple lossless WebP rewrapped as an extended one with an ICCP chunk. */
function withWebpIcc(webp, icc) {
  const vp8x = Buffer.alloc(10)
  vp8x[0] = 0x20
  vp8x.writeUIntLE(W - 1, 4, 3); vp8x.writeUIntLE(H - 1, 7, 3)
  const riffChunk = (type, data) => { const h = Buffer.alloc(8); h.write(type); h.writeUInt32LE(data.length, 4); return Buffer.concat([h, data, Buffer.alloc(data.length & 1)]) }
  const body = Buffer.concat([Buffer.from('WEBP'), riffChunk('VP8X', vp8x), riffChunk('ICCP', icc), webp.subarray(12)])
  const head = Buffer.alloc(8); head.write('RIFF'); head.writeUInt32LE(body.length, 4)
  return Buffer.concat([head, body])
}

const COLOURS = [[200, 80, 60], [70, 160, 90], [60, 90, 180], [128, 128, 128]]
const expected = {}
const files = []
function write(name, bytes, colours, what) {
  fs.writeFileSync(path.join(OUT, name), bytes)
  expected[name] = colours
  files.push([name, bytes.length, what])
}

const p3Raw = patches(COLOURS)
write('p3.png', await png(p3Raw, 3, [iccp(P3.icc)]), COLOURS.map((c) => toSrgb(P3, c)), 'four patches in Display P3, iCCP')
write('p3.jpg', withJpegIcc(await sharp(p3Raw, { raw: { width: W, height: H, channels: 3 } }).jpeg({ quality: 95, chromaSubsampling: '4:4:4' }).toBuffer(), P3.icc),
  COLOURS.map((c) => toSrgb(P3, c)), 'the same patches as a JPEG (quality 95, 4:4:4), profile in APP2')
write('p3.webp', withWebpIcc(await sharp(p3Raw, { raw: { width: W, height: H, channels: 3 } }).webp({ lossless: true }).toBuffer(), P3.icc),
  COLOURS.map((c) => toSrgb(P3, c)), 'the same patches as a lossless WebP, profile in ICCP (VP8X)')
write('adobe-rgb.jpg', withJpegIcc(await sharp(p3Raw, { raw: { width: W, height: H, channels: 3 } }).jpeg({ quality: 95, chromaSubsampling: '4:4:4' }).toBuffer(), ADOBE.icc),
  COLOURS.map((c) => toSrgb(ADOBE, c)), 'the same numbers in Adobe RGB (1998) primaries and gamma, JPEG, profile in APP2')
const greys = [[0, 0, 0], [64, 64, 64], [128, 128, 128], [255, 255, 255]]
const greyRaw = Buffer.from([...patches(greys)].filter((_, i) => i % 3 === 0))
write('grey-linear.png', await png(greyRaw, 1, [iccp(GREY_LINEAR)]), greys.map(([v]) => Array(3).fill(to8(srgbEncode(v / 255)))), 'four grey patches (0, 64, 128, 255) with a linear grey profile, iCCP')
const gama = Buffer.alloc(4)
gama.writeUInt32BE(100000)
write('gama-linear.png', await png(p3Raw, 3, [chunk('gAMA', gama)]), COLOURS.map((c) => c.map((v) => to8(srgbEncode(v / 255)))), 'the RGB patches with gAMA 1.0 (linear data), no iCCP or sRGB')
write('broken-icc.png', await png(p3Raw, 3, [iccp(Buffer.concat([Buffer.from('not a profile at all'), Buffer.alloc(200, 7)]))]), COLOURS, 'the RGB patches with an iCCP that is no profile (libpng drops it): shown as sRGB')
write('broken-icc.jpg', withJpegIcc(await sharp(p3Raw, { raw: { width: W, height: H, channels: 3 } }).jpeg({ quality: 95, chromaSubsampling: '4:4:4' }).toBuffer(), Buffer.alloc(300, 0x41)),
  COLOURS, 'the RGB patches as a JPEG whose APP2 profile is 300 bytes of "A": ignored')
const cmyk = fs.readFileSync(path.join(OUT, '..', 'cmyk.jpg'))
write('cmyk-constant.jpg', withJpegIcc(cmyk, constantCmyk()), [labToSrgb(CMYK_LAB)], "test/fixtures/cmyk.jpg (Adobe CMYK, 100x100) with a CMYK profile that prints every ink mix as L*a*b* (60, 40, -30): every pixel's expected colour")

fs.writeFileSync(path.join(OUT, 'expected.json'), `${JSON.stringify(expected, null, 1)}\n`)
const readme = [
  '# Colour fixtures',
  '',
  '**Generated** by `node scripts/make-colour-fixtures.mjs`: the profiles are written by that script from numbers (no',
  'third-party profile), the pixels are patches of known colours, and `expected.json` holds each patch\'s sRGB value',
  'computed there with plain colour maths (left to right, 16 px each; one value for the CMYK file). Public domain',
  '(CC0-1.0), as the script that makes them.',
  '',
  '| file | bytes | what it is |',
  '|---|---|---|',
  ...files.map(([name, bytes, what]) => `| \`${name}\` | ${bytes} | ${what} |`),
  '',
].join('\n')
fs.writeFileSync(path.join(OUT, 'README.md'), readme)
console.log(files.map(([n, b]) => `${n} ${b}`).join('\n'))
