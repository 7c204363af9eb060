#!/usr/bin/env node
// Regenerates the test fixtures in test/fixtures/ from the shared test corpus.
//
//   node_modules/.bin/node scripts/make-fixtures.mjs
//
// Needs Node >= 22 (zlib.crc32; the project pins Node 24 as a devDependency) and
// the corpus at ../shared/corpus relative to the repository root (override with
// the CORPUS_DIR environment variable). The tests themselves never read the
// corpus: they only use the committed files in test/fixtures/.
//
// The script
//   1. derives small images from corpus photos with the @jsquash WebAssembly codecs,
//   2. copies small files (PngSuite, GIF/WebP samples, hostile files) byte for byte,
//   3. writes a few hand-made files (EXIF orientation JPEGs, PNG bomb header, SVG, text),
//   4. copies the licence texts of everything it used into test/fixtures/LICENSES/,
//   5. checks every image (decodes with the matching jsquash decoder, or checks that
//      the deliberately broken ones fail), writes test/fixtures/README.md and prints a
//      summary table.
// The output is deterministic: rerunning it gives byte-identical files.

import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
// Node has no ImageData: the worker's polyfill (plain TypeScript, run by Node 24's type stripping).
import '../wasm/imagedata.ts';

// ---------------------------------------------------------------------------

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CORPUS = path.resolve(process.env.CORPUS_DIR ?? path.join(ROOT, '..', 'shared', 'corpus'));
const OUT = path.join(ROOT, 'test', 'fixtures');
const OUT_LICENSES = path.join(OUT, 'LICENSES');
// Whole fixture folder, README and licences included. The target is ~600 KiB, but the
// fixed sizes asked for (480x300 RGB photo PNG, 320x200 noisy RGBA PNG, 1200x750 JPEG)
// alone come to ~650 KB, so going over the target only warns; the hard limit fails.
const TARGET_TOTAL_BYTES = 600 * 1024;
const MAX_TOTAL_BYTES = 1024 * 1024;

if (!fs.existsSync(path.join(CORPUS, 'README.md'))) {
  console.error(`Corpus not found at ${CORPUS} (set CORPUS_DIR).`);
  process.exit(2);
}
if (typeof zlib.crc32 !== 'function') {
  console.error('zlib.crc32 is missing: run with node_modules/.bin/node (Node 24).');
  process.exit(2);
}

// ---------------------------------------------------------------------------
// Codecs. Each wasm file is read from node_modules and handed to the codec's init().
const JSQ = path.join(ROOT, 'node_modules', '@jsquash');
const compileWasm = (rel) => WebAssembly.compile(fs.readFileSync(path.join(JSQ, rel)));

const jpegDec = await import('@jsquash/jpeg/decode.js');
const jpegEnc = await import('@jsquash/jpeg/encode.js');
const pngDec = await import('@jsquash/png/decode.js');
const pngEnc = await import('@jsquash/png/encode.js');
const webpDec = await import('@jsquash/webp/decode.js');
const webpEnc = await import('@jsquash/webp/encode.js');
const avifDec = await import('@jsquash/avif/decode.js');
const avifEnc = await import('@jsquash/avif/encode.js');
const oxipng = await import('@jsquash/oxipng/optimise.js');
const resizeMod = await import('@jsquash/resize');

await jpegDec.init(await compileWasm('jpeg/codec/dec/mozjpeg_dec.wasm'));
await jpegEnc.init(await compileWasm('jpeg/codec/enc/mozjpeg_enc.wasm'));
await pngDec.init(await compileWasm('png/codec/pkg/squoosh_png_bg.wasm'));
await pngEnc.init(await compileWasm('png/codec/pkg/squoosh_png_bg.wasm'));
await webpDec.init(await compileWasm('webp/codec/dec/webp_dec.wasm'));
{
  // webp/encode.js picks the SIMD or the plain build of its JS glue with
  // wasm-feature-detect; the wasm handed to init() must match that choice.
  let simd = true;
  try {
    simd = await (await import('wasm-feature-detect')).simd();
  } catch {
    /* not resolvable from here: Node 24 has SIMD */
  }
  await webpEnc.init(await compileWasm(`webp/codec/enc/${simd ? 'webp_enc_simd' : 'webp_enc'}.wasm`));
}
await avifDec.init(await compileWasm('avif/codec/dec/avif_dec.wasm'));
await avifEnc.init(await compileWasm('avif/codec/enc/avif_enc.wasm')); // single-threaded build in Node
await oxipng.init(await compileWasm('oxipng/codec/pkg/squoosh_oxipng_bg.wasm'));
await resizeMod.initResize(await compileWasm('resize/lib/resize/pkg/squoosh_resize_bg.wasm'));

const resize = resizeMod.default;
const u8 = (buf) => (buf instanceof Uint8Array ? buf : new Uint8Array(buf));

// ---------------------------------------------------------------------------
// Small helpers

const corpus = (rel) => path.join(CORPUS, rel);
const readCorpus = (rel) => fs.readFileSync(corpus(rel));

/** Registry of produced files, used for the README and the summary. */
const fixtures = [];
/** Licence files (corpus-relative path -> name in LICENSES/) to copy. */
const licenceFiles = new Map();
const notes = [];

function useLicence(src, name = path.basename(src)) {
  licenceFiles.set(src, name);
}

function write(name, bytes, meta) {
  const buf = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : Buffer.from(u8(bytes));
  fs.writeFileSync(path.join(OUT, name), buf);
  fixtures.push({ name, bytes: buf.length, ...meta });
  return buf;
}

function copy(name, corpusRel, meta) {
  return write(name, readCorpus(corpusRel), { source: `\`${corpusRel}\``, how: 'copied byte for byte', ...meta });
}

function cloneImage(img) {
  return new ImageData(new Uint8ClampedArray(img.data), img.width, img.height);
}

/** Orientation transforms on RGBA ImageData. `stored(x, y)` -> source pixel. */
function transform(img, outW, outH, srcCoord) {
  const out = new Uint8ClampedArray(outW * outH * 4);
  for (let y = 0; y < outH; y++) {
    for (let x = 0; x < outW; x++) {
      const [sx, sy] = srcCoord(x, y);
      const s = (sy * img.width + sx) * 4;
      const d = (y * outW + x) * 4;
      out[d] = img.data[s];
      out[d + 1] = img.data[s + 1];
      out[d + 2] = img.data[s + 2];
      out[d + 3] = img.data[s + 3];
    }
  }
  return new ImageData(out, outW, outH);
}
const W = (img) => img.width;
const H = (img) => img.height;
// Stored pixels that need the given EXIF orientation to be shown upright.
const storeFor = {
  // rotate 180°
  3: (up) => transform(up, W(up), H(up), (x, y) => [W(up) - 1 - x, H(up) - 1 - y]),
  // viewer rotates 90° clockwise, so store the picture rotated 90° counter-clockwise
  6: (up) => transform(up, H(up), W(up), (x, y) => [W(up) - 1 - y, x]),
  // viewer rotates 90° counter-clockwise, so store the picture rotated 90° clockwise
  8: (up) => transform(up, H(up), W(up), (x, y) => [y, H(up) - 1 - x]),
};
// What a viewer does with orientation n (the inverse of storeFor[n]).
const applyOrientation = {
  3: (st) => transform(st, W(st), H(st), (x, y) => [W(st) - 1 - x, H(st) - 1 - y]),
  6: (st) => transform(st, H(st), W(st), (x, y) => [y, H(st) - 1 - x]),
  8: (st) => transform(st, H(st), W(st), (x, y) => [W(st) - 1 - y, x]),
};

/** Mean absolute difference over R, G, B (0..255); Infinity if sizes differ. */
function meanAbsDiff(a, b) {
  if (a.width !== b.width || a.height !== b.height) return Infinity;
  let sum = 0;
  for (let i = 0; i < a.data.length; i += 4) {
    sum += Math.abs(a.data[i] - b.data[i]) + Math.abs(a.data[i + 1] - b.data[i + 1]) + Math.abs(a.data[i + 2] - b.data[i + 2]);
  }
  return sum / ((a.data.length / 4) * 3);
}

// ---------------------------------------------------------------------------
// Container parsers (for checks and the summary)

const be32 = (b, o) => ((b[o] << 24) >>> 0) + (b[o + 1] << 16) + (b[o + 2] << 8) + b[o + 3];
const be16 = (b, o) => (b[o] << 8) | b[o + 1];
const le16 = (b, o) => b[o] | (b[o + 1] << 8);
const le24 = (b, o) => b[o] | (b[o + 1] << 8) | (b[o + 2] << 16);

const PNG_COLOUR = { 0: 'grey', 2: 'RGB', 3: 'palette', 4: 'grey+alpha', 6: 'RGBA' };
function pngInfo(b) {
  if (b.length < 33 || be32(b, 0) !== 0x89504e47 || be32(b, 4) !== 0x0d0a1a0a) return null;
  if (String.fromCharCode(...b.subarray(12, 16)) !== 'IHDR') return null;
  const colourType = b[25];
  return {
    width: be32(b, 16),
    height: be32(b, 20),
    bitDepth: b[24],
    colourType,
    interlace: b[28],
    desc: `${PNG_COLOUR[colourType] ?? `colour type ${colourType}`} ${b[24]}-bit${b[28] ? ', Adam7' : ''}`,
  };
}

const SOF_NAMES = { 0xc0: 'baseline', 0xc1: 'extended sequential', 0xc2: 'progressive' };
function jpegInfo(b) {
  if (b[0] !== 0xff || b[1] !== 0xd8) return null;
  let o = 2;
  const segs = [];
  while (o + 4 <= b.length) {
    if (b[o] !== 0xff) return { segs, error: `no marker at ${o}` };
    const m = b[o + 1];
    if (m === 0xff) { o++; continue; }
    const len = be16(b, o + 2);
    segs.push(m);
    if (m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc) {
      return {
        sof: m,
        kind: SOF_NAMES[m] ?? `SOF${m - 0xc0}`,
        height: be16(b, o + 5),
        width: be16(b, o + 7),
        components: b[o + 9],
        segs,
        hasEOI: b[b.length - 2] === 0xff && b[b.length - 1] === 0xd9,
      };
    }
    o += 2 + len;
  }
  return { segs, error: 'no SOF' };
}

function webpInfo(b) {
  if (String.fromCharCode(...b.subarray(0, 4)) !== 'RIFF' || String.fromCharCode(...b.subarray(8, 12)) !== 'WEBP') return null;
  const fourcc = String.fromCharCode(...b.subarray(12, 16));
  if (fourcc === 'VP8 ') return { kind: 'lossy (VP8)', width: le16(b, 26) & 0x3fff, height: le16(b, 28) & 0x3fff };
  if (fourcc === 'VP8L') {
    const bits = b[21] | (b[22] << 8) | (b[23] << 16) | (b[24] << 24);
    return { kind: 'lossless (VP8L)', width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (fourcc === 'VP8X') {
    const flags = b[20];
    let frames = 0;
    for (let o = 12; o + 8 <= b.length; ) {
      const id = String.fromCharCode(...b.subarray(o, o + 4));
      const size = b[o + 4] | (b[o + 5] << 8) | (b[o + 6] << 16) | (b[o + 7] << 24);
      if (id === 'ANMF') frames++;
      o += 8 + size + (size & 1);
    }
    return {
      kind: `extended (VP8X${flags & 0x10 ? ', alpha' : ''}${flags & 0x02 ? `, animated, ${frames} frames` : ''})`,
      width: le24(b, 24) + 1,
      height: le24(b, 27) + 1,
      animated: !!(flags & 0x02),
    };
  }
  return { kind: fourcc };
}

function avifInfo(b) {
  if (String.fromCharCode(...b.subarray(4, 8)) !== 'ftyp') return null;
  const brand = String.fromCharCode(...b.subarray(8, 12));
  const i = Buffer.from(b).indexOf('ispe');
  if (i < 0) return { brand };
  return { brand, width: be32(b, i + 8), height: be32(b, i + 12) };
}

/** Walks every GIF block up to the trailer; throws on a structural error. */
function gifInfo(b) {
  const sig = String.fromCharCode(...b.subarray(0, 6));
  if (sig !== 'GIF87a' && sig !== 'GIF89a') return null;
  const width = le16(b, 6);
  const height = le16(b, 8);
  let o = 13;
  if (b[10] & 0x80) o += 3 * (1 << ((b[10] & 7) + 1));
  let frames = 0;
  let transparent = false;
  let loop = null;
  const skipSubBlocks = () => {
    while (o < b.length && b[o] !== 0) o += b[o] + 1;
    if (o >= b.length) throw new Error('GIF: data runs past the end');
    o++;
  };
  for (;;) {
    if (o >= b.length) throw new Error('GIF: no trailer');
    const t = b[o];
    if (t === 0x3b) break;
    if (t === 0x21) {
      const label = b[o + 1];
      if (label === 0xf9 && b[o + 3] & 1) transparent = true;
      if (label === 0xff && String.fromCharCode(...b.subarray(o + 3, o + 14)) === 'NETSCAPE2.0') loop = le16(b, o + 16);
      o += 2;
      skipSubBlocks();
    } else if (t === 0x2c) {
      frames++;
      const packed = b[o + 9];
      o += 10;
      if (packed & 0x80) o += 3 * (1 << ((packed & 7) + 1));
      o++; // LZW minimum code size
      skipSubBlocks();
    } else {
      throw new Error(`GIF: unknown block 0x${t.toString(16)} at ${o}`);
    }
  }
  return { sig, width, height, frames, transparent, loop };
}

function describeBytes(b) {
  const p = pngInfo(b);
  if (p) return { dims: `${p.width}x${p.height}`, desc: `PNG ${p.desc}` };
  const j = jpegInfo(b);
  if (j && j.sof) return { dims: `${j.width}x${j.height}`, desc: `JPEG ${j.kind}, ${j.components} comp.${j.hasEOI ? '' : ', no EOI'}` };
  if (j) return { dims: '?', desc: `JPEG (${j.error})` };
  const w = webpInfo(b);
  if (w) return { dims: `${w.width}x${w.height}`, desc: `WebP ${w.kind}` };
  const a = avifInfo(b);
  if (a) return { dims: a.width ? `${a.width}x${a.height}` : '?', desc: `AVIF (${a.brand})` };
  try {
    const g = gifInfo(b);
    if (g) return { dims: `${g.width}x${g.height}`, desc: `${g.sig}, ${g.frames} frame(s)${g.transparent ? ', transparency' : ''}` };
  } catch (e) {
    return { dims: '?', desc: `GIF (${e.message})` };
  }
  return { dims: '-', desc: 'not an image' };
}

// ---------------------------------------------------------------------------
// PNG building blocks (for the bomb header)

function pngChunk(type, data) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(td) >>> 0);
  return Buffer.concat([len, td, crc]);
}

// EXIF APP1 segment: "Exif\0\0" + big-endian TIFF header + IFD0 with one entry
// (0x0112 Orientation, SHORT, count 1) + next-IFD offset 0.
function exifApp1(orientation) {
  const tiff = Buffer.from([
    0x4d, 0x4d, 0x00, 0x2a, 0x00, 0x00, 0x00, 0x08, // "MM", 42, IFD0 at offset 8
    0x00, 0x01, //                                     1 entry
    0x01, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, // tag 0x0112, type 3 (SHORT), count 1
    0x00, orientation, 0x00, 0x00, //                  value (left-justified in the 4-byte field)
    0x00, 0x00, 0x00, 0x00, //                         no next IFD
  ]);
  const payload = Buffer.concat([Buffer.from('Exif\0\0', 'latin1'), tiff]);
  const head = Buffer.from([0xff, 0xe1, 0, 0]);
  head.writeUInt16BE(payload.length + 2, 2);
  return Buffer.concat([head, payload]);
}

function insertAfterSOI(jpeg, segment) {
  const b = Buffer.from(u8(jpeg));
  if (b[0] !== 0xff || b[1] !== 0xd8) throw new Error('not a JPEG');
  return Buffer.concat([b.subarray(0, 2), segment, b.subarray(2)]);
}

// ---------------------------------------------------------------------------
// Licence lines (holders taken from the corpus README / LICENSES)

const GPL_MATE = (who) =>
  `GPL-2+ (${who}), from Debian mate-backgrounds 1.26.0-1 — see LICENSES/GPL-2.txt, LICENSES/mate-backgrounds.copyright`;
const LIC = {
  dune: GPL_MATE('M. Cogoni 2007, H. Bons 2008'),
  gulp: GPL_MATE('D. Galleguillos 2008, H. Bons 2008'),
  ladybird: GPL_MATE('C. Barbin 2008'),
  pngsuite: 'PngSuite licence © Willem van Schaik 1996, 2011 — see LICENSES/PngSuite.LICENSE',
  exif: 'MIT © 2010 Dave Perrett (recurser/exif-orientation-examples; photo credited to Pierre Bouillot, Unsplash) — see LICENSES/exif-orientation-examples.LICENSE',
  imagers: 'MIT OR Apache-2.0 (image-rs/image repository licence) — see LICENSES/image-rs-image.LICENSE-MIT, LICENSES/image-rs-image.LICENSE-APACHE',
  sharpGif:
    'CC-BY-SA-4.0, Petrus3743, https://commons.wikimedia.org/wiki/File:01-Goldener_Schnitt_Formel-Animation.gif (licence per lovell/sharp test/fixtures/index.js; licence text: https://creativecommons.org/licenses/by-sa/4.0/legalcode). The sharp repository licence (Apache-2.0) does not cover this third-party image, so its text is not copied',
  thumbor: 'MIT © 2014 Globo.com (thumbor/thumbor) — see LICENSES/thumbor.LICENSE',
  none: 'no creative content; made by this script, free to use',
  project: "this project's own (same licence as the repository)",
};

// ---------------------------------------------------------------------------
// Output folder. Files are overwritten in place; other files in test/fixtures/ are left
// alone, except the alternative names this script may have written on an earlier run
// (the fallbacks below) and LICENSES/, which it owns.

fs.mkdirSync(OUT, { recursive: true });
fs.rmSync(OUT_LICENSES, { recursive: true, force: true });
fs.mkdirSync(OUT_LICENSES);
for (const f of ['truncated.jpg', 'truncated-10000.jpg', '65536x65536.png', 'bomb-50000.png', 'cmyk.jpg']) {
  fs.rmSync(path.join(OUT, f), { force: true });
}

// ---------------------------------------------------------------------------
// 1–4, 6, 12: photo set from Dune.jpg

const DUNE = 'photos/Dune.jpg';
useLicence('LICENSES/GPL-2.txt');
useLicence('LICENSES/mate-backgrounds.copyright');

const dune = await jpegDec.default(readCorpus(DUNE));
console.log(`decoded ${DUNE}: ${dune.width}x${dune.height}`);
const photo = await resize(cloneImage(dune), { width: 480, height: 300, method: 'lanczos3' });
const large = await resize(cloneImage(dune), { width: 1200, height: 750, method: 'lanczos3' });
const duneSrc = `\`${DUNE}\` (Debian mate-backgrounds 1.26.0-1, /usr/share/backgrounds/mate/nature/Dune.jpg, 1680x1050)`;
const photoHow = 'decode, resize to 480x300 (lanczos3, @jsquash/resize defaults: premultiplied, linear RGB)';

const JPEG_BASELINE = { progressive: false, baseline: true, optimize_coding: true };

write('photo.jpg', await jpegEnc.default(photo, { quality: 85, ...JPEG_BASELINE }), {
  what: '480x300 photo (grass, sea, sky), baseline JPEG (SOF0), YCbCr 4:2:0, 8-bit, no metadata',
  source: duneSrc,
  how: `${photoHow}; MozJPEG quality 85, progressive: false, baseline: true`,
  licence: LIC.dune,
  check: 'jpeg',
});

// Inputs for the SIMD kernels' bit-exactness (test/integration/jpeg-simd.test.ts): 4:2:2 at an odd size, whose
// chroma is upsampled across only and every kernel's last columns take its scalar path, and flat colours at 4:2:0,
// whose blocks mostly have no AC coefficient. jSquash's MozJPEG writes 4:2:0 or 4:4:4 only, so libjpeg-turbo's cjpeg
// (Debian's libjpeg-turbo-progs) writes these, from PPM.
function cjpeg(image, args) {
  const { width, height, data } = image;
  const rgb = Buffer.alloc(width * height * 3);
  for (let i = 0; i < width * height; i++) rgb.set(data.subarray(4 * i, 4 * i + 3), 3 * i);
  const ppm = Buffer.concat([Buffer.from(`P6\n${width} ${height}\n255\n`), rgb]);
  return new Uint8Array(execFileSync('cjpeg', args, { input: ppm }));
}
{
  const crop = new ImageData(239, 149);
  for (let y = 0; y < 149; y++) crop.data.set(photo.data.subarray(4 * y * 480, 4 * (y * 480 + 239)), 4 * y * 239);
  write('photo-422.jpg', cjpeg(crop, ['-sample', '2x1', '-quality', '90']), {
    what: '239x149 photo, baseline JPEG, YCbCr 4:2:2 (chroma halved across only), 8-bit, no metadata',
    source: duneSrc,
    how: `${photoHow}; the top-left 239x149; cjpeg (libjpeg-turbo 2.1.5) -sample 2x1 -quality 90`,
    licence: LIC.dune,
    check: 'jpeg',
  });
  const flat = new ImageData(203, 101);
  const bands = [[250, 250, 250], [30, 90, 200], [220, 40, 40], [20, 160, 60], [255, 200, 0], [0, 0, 0]];
  for (let y = 0; y < 101; y++)
    for (let x = 0; x < 203; x++) flat.data.set([...(y < 60 ? bands[Math.floor(x / 40)] : [x, 255 - x, (x + y) & 255]), 255], 4 * (y * 203 + x));
  write('flat-420.jpg', cjpeg(flat, ['-sample', '2x2', '-quality', '75']), {
    what: '203x101 bands of flat colour over a gradient, baseline JPEG, YCbCr 4:2:0: most blocks have no AC coefficient',
    source: 'made by this script',
    how: 'six flat bands 40 px wide above a gradient; cjpeg (libjpeg-turbo 2.1.5) -sample 2x2 -quality 75',
    licence: LIC.project,
    check: 'jpeg',
  });
  // Coefficients past the 16-bit IDCT's range (wasm/lean/jsimd_wasm.c falls back to 32 bits for such blocks): a
  // one-pixel checkerboard, hashed noise and a gradient at quality 100, then the quantisation tables' upper half
  // (zigzag positions 36-63) raised from 1 to 100, so that the checkerboard's and the noise's high frequencies
  // dequantise to values over 16 bits, as only a hostile file's can, while the gradient's blocks stay within them.
  const extreme = new ImageData(96, 64);
  for (let y = 0; y < 64; y++)
    for (let x = 0; x < 96; x++) {
      const hash = (((x * 73856093) ^ (y * 19349663)) >>> 0) % 251;
      const rgb = x < 32 ? [(x + y) & 1 ? 255 : 0, (x + y) & 1 ? 0 : 255, y & 1 ? 255 : 0] : x < 64 ? [hash, (hash * 7) & 255, (hash * 13) & 255] : [x * 2, y * 3, 255 - x - y];
      extreme.data.set([...rgb, 255], 4 * (y * 96 + x));
    }
  const raised = cjpeg(extreme, ['-sample', '1x1', '-quality', '100']);
  for (let i = 2; i + 3 < raised.length && raised[i] === 0xff && raised[i + 1] !== 0xda; i += 2 + ((raised[i + 2] << 8) | raised[i + 3])) {
    if (raised[i + 1] !== 0xdb) continue;
    const end = i + 2 + ((raised[i + 2] << 8) | raised[i + 3]);
    for (let t = i + 4; t < end; t += 65) raised.fill(100, t + 1 + 36, t + 65);
  }
  write('extreme-444.jpg', raised, {
    what: '96x64 one-pixel checkerboard, hashed noise and a gradient, baseline JPEG, YCbCr 4:4:4, its high frequencies dequantised past 16 bits',
    source: 'made by this script',
    how: 'a checkerboard of saturated colours, hashed noise and a gradient side by side; cjpeg (libjpeg-turbo 2.1.5) -sample 1x1 -quality 100; both quantisation tables\' zigzag entries 36-63 then set to 100',
    licence: LIC.project,
    check: 'jpeg',
  });
}

write('progressive.jpg', await jpegEnc.default(photo, { quality: 85, progressive: true }), {
  what: 'same 480x300 pixels as photo.jpg, progressive JPEG (SOF2), 8-bit, no metadata',
  source: duneSrc,
  how: `${photoHow}; MozJPEG quality 85, progressive (MozJPEG default)`,
  licence: LIC.dune,
  check: 'jpeg',
});

{
  const rgba = await pngEnc.default(photo); // @jsquash/png always writes 8-bit RGBA
  const rgbaInfo = pngInfo(u8(rgba));
  // oxipng drops the all-opaque alpha channel (lossless colour-type reduction); the
  // decoded pixels stay identical (checked below).
  const opt = u8(await oxipng.default(rgba, { level: 3, optimiseAlpha: true }));
  const info = pngInfo(opt);
  const dec = await pngDec.default(opt);
  if (meanAbsDiff(dec, photo) !== 0) throw new Error('photo.png: oxipng changed pixels');
  if (info.colourType !== 2) notes.push(`photo.png: oxipng left colour type ${info.colourType} (${info.desc}), not RGB`);
  write('photo.png', opt, {
    what: `same 480x300 pixels, PNG ${info.desc} (no alpha), non-interlaced`,
    source: duneSrc,
    how: `${photoHow}; @jsquash/png encode (writes ${rgbaInfo.desc}, ${rgba.byteLength} B), then @jsquash/oxipng level 3 + optimiseAlpha → RGB (pixels unchanged)`,
    licence: LIC.dune,
    check: 'png',
  });
}

write('photo.webp', await webpEnc.default(photo, { quality: 85 }), {
  what: 'same 480x300 pixels, lossy WebP (simple VP8), no alpha',
  source: duneSrc,
  how: `${photoHow}; @jsquash/webp quality 85`,
  licence: LIC.dune,
  check: 'webp',
});

write('photo.avif', await avifEnc.default(photo, { quality: 60, speed: 8 }), {
  what: 'same 480x300 pixels, AVIF 8-bit YUV 4:2:0, no alpha',
  source: duneSrc,
  how: `${photoHow}; @jsquash/avif quality 60, speed 8`,
  licence: LIC.dune,
  check: 'avif',
});

{
  let q = 80;
  let enc = u8(await jpegEnc.default(large, { quality: q, ...JPEG_BASELINE }));
  // Keep it under ~150 KB.
  while (enc.length > 150 * 1024 && q > 50) {
    q -= 5;
    enc = u8(await jpegEnc.default(large, { quality: q, ...JPEG_BASELINE }));
  }
  if (q !== 80) notes.push(`large.jpg: quality lowered to ${q} to stay under 150 KB`);
  write('large.jpg', enc, {
    what: '1200x750 photo, baseline JPEG, YCbCr 4:2:0, 8-bit (input for resize tests)',
    source: duneSrc,
    how: `decode, resize to 1200x750 (lanczos3); MozJPEG quality ${q}, baseline`,
    licence: LIC.dune,
    check: 'jpeg',
  });
}

// ---------------------------------------------------------------------------
// 5: alpha.png from Gulp.png

{
  const GULP = 'photos/Gulp.png';
  const gulp = await pngDec.default(readCorpus(GULP));
  const small = await resize(gulp, { width: 320, height: 200, method: 'lanczos3' });
  const raw = u8(await pngEnc.default(small));
  // oxipng without optimiseAlpha keeps every RGBA value; keep its output only if it is
  // still RGBA 8-bit (the fixture must have a real alpha channel) and smaller.
  let out = raw;
  let how = '@jsquash/png encode (RGBA 8-bit)';
  const opt = u8(await oxipng.default(raw, { level: 3, optimiseAlpha: false }));
  const oi = pngInfo(opt);
  if (oi.colourType === 6 && oi.bitDepth === 8 && opt.length < raw.length) {
    out = opt;
    how += ', then @jsquash/oxipng level 3 (lossless)';
  }
  let minA = 255, maxA = 0;
  for (let i = 3; i < small.data.length; i += 4) {
    minA = Math.min(minA, small.data[i]);
    maxA = Math.max(maxA, small.data[i]);
  }
  write('alpha.png', out, {
    what: `320x200 artwork with real alpha (alpha ${minA}–${maxA}), PNG RGBA 8-bit`,
    source: `\`${GULP}\` (Debian mate-backgrounds 1.26.0-1, abstract/Gulp.png, 1920x1200 RGBA)`,
    how: `decode, resize to 320x200 (lanczos3, premultiplied alpha); ${how}`,
    licence: LIC.gulp,
    check: 'png',
  });
}

// ---------------------------------------------------------------------------
// 7: EXIF orientation fixtures from Landscape_1.jpg

const exifResults = [];
{
  const LAND = 'exif/Landscape_1.jpg';
  useLicence('LICENSES/exif-orientation-examples.LICENSE');
  const land = await jpegDec.default(readCorpus(LAND)); // orientation 1: stored pixels are upright
  const upright = await resize(land, { width: 180, height: 120, method: 'lanczos3' });
  const landSrc = `\`${LAND}\` (recurser/exif-orientation-examples, 1800x1200, Orientation 1)`;

  const refPng = u8(await oxipng.default(await pngEnc.default(upright), { level: 3, optimiseAlpha: true }));
  if (meanAbsDiff(await pngDec.default(refPng), upright) !== 0) throw new Error('exif-6.upright.png: oxipng changed pixels');
  write('exif-6.upright.png', refPng, {
    what: `180x120 upright reference pixels for exif-*.jpg, PNG ${pngInfo(refPng).desc}`,
    source: landSrc,
    how: 'decode, resize to 180x120 (lanczos3); @jsquash/png encode (RGBA), then @jsquash/oxipng level 3 → RGB (pixels unchanged)',
    licence: LIC.exif,
    check: 'png',
  });

  const rotationText = {
    3: 'the upright picture rotated 180° (stored 180x120)',
    6: 'the upright picture rotated 90° counter-clockwise (stored 120x180)',
    8: 'the upright picture rotated 90° clockwise (stored 120x180)',
  };
  const viewerText = { 3: 'rotate 180°', 6: 'rotate 90° clockwise', 8: 'rotate 90° counter-clockwise' };
  for (const o of [6, 3, 8]) {
    const stored = storeFor[o](upright);
    // Sanity check of the pixel maths: applying the orientation gives the upright picture back exactly.
    if (meanAbsDiff(applyOrientation[o](stored), upright) !== 0) throw new Error(`orientation ${o}: transform mismatch`);
    const jpeg = insertAfterSOI(await jpegEnc.default(stored, { quality: 90, ...JPEG_BASELINE }), exifApp1(o));
    write(`exif-${o}.jpg`, jpeg, {
      what: `stored ${stored.width}x${stored.height} baseline JPEG with EXIF IFD0 Orientation=${o}; shown upright (${viewerText[o]}) it is 180x120 and matches exif-6.upright.png`,
      source: landSrc,
      how: `decode, resize to 180x120; store ${rotationText[o]}; MozJPEG quality 90 baseline; insert a 34-byte APP1 Exif segment (big-endian TIFF, one IFD0 entry 0x0112=${o}) right after SOI`,
      licence: LIC.exif,
      check: 'jpeg',
    });
    // Check 1: the jsquash decoder with preserveOrientation applies the rotation.
    const viaDecoder = await jpegDec.default(jpeg, { preserveOrientation: true });
    // Check 2: decode the stored pixels and apply the orientation by hand.
    const raw = await jpegDec.default(jpeg, { preserveOrientation: false });
    const byHand = applyOrientation[o](raw);
    exifResults.push({
      file: `exif-${o}.jpg`,
      stored: `${raw.width}x${raw.height}`,
      decoded: `${viaDecoder.width}x${viaDecoder.height}`,
      diffDecoder: meanAbsDiff(viaDecoder, upright),
      diffByHand: meanAbsDiff(byHand, upright),
      // What a reader that ignores EXIF would see:
      diffIgnoringExif: meanAbsDiff(raw, upright),
    });
  }
}

// ---------------------------------------------------------------------------
// 8, 9: GIF and animated WebP copies

{
  useLicence('LICENSES/image-rs-image.LICENSE-MIT');
  useLicence('LICENSES/image-rs-image.LICENSE-APACHE');
  const ANIM_GIF = 'bad/sharp/animated-loop-3.gif';
  const ALPHA_GIF = 'formats/alpha_gif_a.gif';
  if (fs.statSync(corpus(ANIM_GIF)).size < 60 * 1024) {
    copy('anim.gif', ANIM_GIF, {
      what: '370x285 animated GIF89a, 10 frames, NETSCAPE loop count 2 (finite)',
      source: `\`${ANIM_GIF}\` (lovell/sharp test/fixtures/animated-loop-3.gif)`,
      licence: LIC.sharpGif,
      check: 'gif',
    });
  } else {
    notes.push(`anim.gif: ${ANIM_GIF} is 60 KB or more, used ${ALPHA_GIF} instead (not animated)`);
    copy('anim.gif', ALPHA_GIF, {
      what: '256x256 GIF, one frame (fallback: the animated source was too big)',
      source: `\`${ALPHA_GIF}\` (image-rs/image tests/images/gif/simple/alpha_gif_a.gif)`,
      licence: LIC.imagers,
      check: 'gif',
    });
  }
  copy('alpha.gif', ALPHA_GIF, {
    what: '256x256 GIF, one frame, palette with a transparent index',
    source: `\`${ALPHA_GIF}\` (image-rs/image tests/images/gif/simple/alpha_gif_a.gif)`,
    licence: LIC.imagers,
    check: 'gif',
  });
  const ANIM_WEBP = 'formats/anim.webp';
  const size = fs.statSync(corpus(ANIM_WEBP)).size;
  if (size > 60 * 1024) notes.push(`anim.webp: source is ${size} B (bigger than expected)`);
  copy('anim.webp', ANIM_WEBP, {
    what: '200x200 animated WebP, 6 lossy+alpha frames, 100 ms, loops forever',
    source: `\`${ANIM_WEBP}\` (image-rs/image tests/images/webp/extended_images/anim.webp)`,
    licence: LIC.imagers,
    check: 'webp-anim',
  });
}

// ---------------------------------------------------------------------------
// 10: PngSuite

{
  useLicence('pngsuite/PngSuite.LICENSE');
  const valid = {
    'basn0g01.png': 'grey 1-bit',
    'basn0g16.png': 'grey 16-bit',
    'basn2c16.png': 'RGB 16-bit',
    'basn3p08.png': 'palette 8-bit',
    'basn4a08.png': 'grey+alpha 8-bit',
    'basn6a08.png': 'RGBA 8-bit',
    'basn6a16.png': 'RGBA 16-bit',
    'basi2c08.png': 'RGB 8-bit, Adam7 interlaced',
    'basi6a08.png': 'RGBA 8-bit, Adam7 interlaced',
    'tbrn2c08.png': 'RGB 8-bit with tRNS (transparent colour), red background',
    'tbbn3p08.png': 'palette 8-bit with tRNS, black background',
    's01n3p01.png': 'palette 1-bit (smallest size)',
    's09i3p02.png': 'palette 2-bit, Adam7 interlaced (odd size)',
  };
  const corrupt = {
    'xc1n0g08.png': 'CORRUPT: colour type 1 (invalid)',
    'xcsn0g01.png': 'CORRUPT: wrong IDAT CRC',
    'xdtn0g01.png': 'CORRUPT: no IDAT chunk',
    'xs1n0g01.png': 'CORRUPT: signature byte 1 changed (not a PNG)',
  };
  for (const [f, what] of Object.entries(valid)) {
    const b = readCorpus(`pngsuite/${f}`);
    const i = pngInfo(b);
    copy(f, `pngsuite/${f}`, {
      what: `PngSuite ${i.width}x${i.height} ${what}`,
      source: `\`pngsuite/${f}\` (image-rs/image-png tests/pngsuite/)`,
      licence: LIC.pngsuite,
      check: 'png',
    });
  }
  for (const [f, what] of Object.entries(corrupt)) {
    copy(f, `pngsuite/${f}`, {
      what: `PngSuite ${what}; expect 4xx`,
      source: `\`pngsuite/${f}\` (image-rs/image-png tests/pngsuite/)`,
      licence: LIC.pngsuite,
      check: 'png-bad',
    });
  }
}

// ---------------------------------------------------------------------------
// 11: hostile / edge cases

{
  const TRUNC = 'bad/made-here/truncated-10000.jpg';
  if (fs.statSync(corpus(TRUNC)).size <= 16 * 1024) {
    copy('truncated-10000.jpg', TRUNC, {
      what: 'first 10,000 bytes of a 2560x1600 baseline JPEG: headers complete, scan data cut, no EOI; expect 4xx',
      source: `\`${TRUNC}\` (made for the corpus from \`photos/LadyBird.jpg\`, Debian mate-backgrounds nature/LadyBird.jpg)`,
      licence: LIC.ladybird,
      check: 'jpeg-truncated',
    });
  } else {
    const p = fs.readFileSync(path.join(OUT, 'photo.jpg'));
    write('truncated.jpg', p.subarray(0, 3000), {
      what: 'first 3,000 bytes of photo.jpg (no EOI); expect 4xx',
      source: 'photo.jpg (this folder)',
      how: 'first 3,000 bytes of photo.jpg',
      licence: LIC.dune,
      check: 'jpeg-truncated',
    });
  }

  const BIG = 'bad/made-here/65536x65536.png';
  const bigSize = fs.statSync(corpus(BIG)).size;
  if (bigSize <= 32 * 1024) {
    copy('65536x65536.png', BIG, {
      what: 'valid PNG declaring 65536x65536 (2^32 pixels), 1-bit palette; expect 4xx before inflating',
      source: `\`${BIG}\` (made for the corpus)`,
      licence: LIC.none,
      check: 'hostile',
    });
  } else {
    // Too big to commit (the source is ~510 KB). Build a header-only stand-in:
    // signature + IHDR 50000x50000 RGBA 8-bit + one tiny IDAT (a complete zlib stream
    // holding just the first, all-zero scanline) + IEND, all CRCs correct.
    notes.push(`${BIG} is ${bigSize} B: built bomb-50000.png instead`);
    const ihdr = Buffer.alloc(13);
    ihdr.writeUInt32BE(50000, 0);
    ihdr.writeUInt32BE(50000, 4);
    ihdr[8] = 8; // bit depth
    ihdr[9] = 6; // RGBA
    const idat = zlib.deflateSync(Buffer.alloc(1 + 50000 * 4), { level: 9 });
    const png = Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      pngChunk('IHDR', ihdr),
      pngChunk('IDAT', idat),
      pngChunk('IEND', Buffer.alloc(0)),
    ]);
    write('bomb-50000.png', png, {
      what: 'PNG header declaring 50000x50000 RGBA 8-bit (10 GB of pixels) with a tiny IDAT holding only the first scanline; expect 4xx on declared size, before allocating',
      source: `made by this script (stand-in for \`${BIG}\`, which is ${bigSize} B)`,
      how: 'signature + IHDR + one IDAT (zlib of 1 all-zero row, 200,001 B inflated) + IEND, correct CRCs',
      licence: LIC.none,
      check: 'hostile',
    });
  }

  const CMYK = 'bad/thumbor/cmyk.jpg';
  if (fs.statSync(corpus(CMYK)).size < 40 * 1024) {
    useLicence('LICENSES/thumbor.LICENSE');
    copy('cmyk.jpg', CMYK, {
      what: '100x100 CMYK JPEG (Adobe APP14, no ICC), generated gradient',
      source: `\`${CMYK}\` (thumbor/thumbor tests/fixtures/images/cmyk.jpg)`,
      licence: LIC.thumbor,
      check: 'jpeg-cmyk',
    });
  } else {
    notes.push('cmyk.jpg: source is 40 KB or more, not copied');
  }

  // A 4200x4200 AVIF of one colour: a few hundred bytes that decode to 17.6 MP. The tests rewrite its
  // ispe to a small size (test/helpers/hostile.ts avifWithIspe), so the header passes every limit while
  // the AV1 frame inside is as big as ever: the decoder's memory cap must stop it.
  {
    const side = 4200;
    const pixels = new Uint8ClampedArray(side * side * 4);
    for (let i = 0; i < pixels.length; i += 4) pixels.set([200, 100, 50, 255], i);
    write('solid-4200.avif', u8(await avifEnc.default(new ImageData(pixels, side, side), { quality: 10, speed: 10 })), {
      what: '4200x4200 AVIF of one colour (17.6 MP in a few hundred bytes); the tests shrink its ispe to make a header that lies about the size',
      source: 'made by this script',
      how: '@jsquash/avif encode of a solid #C86432 image, quality 10, speed 10',
      licence: LIC.none,
      check: 'avif',
    });
  }

  write(
    'not-an-image.svg',
    '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16"><rect width="16" height="16" fill="#c00"/></svg>\n',
    {
      what: '16x16 SVG (a red square): a format the API does not decode; expect 415',
      source: 'hand-written (in this script)',
      how: 'written by the script',
      licence: LIC.project,
      check: 'hostile',
    },
  );
  write('text.txt', 'This is not an image.\n', {
    what: 'plain ASCII text, 22 bytes; expect 415',
    source: 'hand-written (in this script)',
    how: 'written by the script',
    licence: LIC.project,
    check: 'hostile',
  });
}

// ---------------------------------------------------------------------------
// 12: the corpus conformance subset. Every row of test/conformance/expected.json marked
// `"fixture": true` is copied byte for byte to test/fixtures/corpus/<its corpus path>, so that the
// workerd test test/integration/conformance.test.ts checks those files on a clone without the
// corpus (the HTTP test covers every row when the corpus is there). To add a file: set the flag
// in expected.json and rerun this script.

{
  const table = JSON.parse(fs.readFileSync(path.join(ROOT, 'test', 'conformance', 'expected.json'), 'utf8'));
  fs.rmSync(path.join(OUT, 'corpus'), { recursive: true, force: true });
  const FOLDERS = [
    ['pngsuite/', 'image-rs/image-png tests/pngsuite/', () => (useLicence('pngsuite/PngSuite.LICENSE'), LIC.pngsuite)],
    ['bad/libpng-crashers/', 'pnggroup/libpng contrib/testpngs/crashers/', () => (useLicence('LICENSES/libpng.LICENSE.md'), 'PNG Reference Library License version 2 (pnggroup/libpng) — see LICENSES/libpng.LICENSE.md')],
    ['bad/image-rs/', 'image-rs/image tests/bad/', () => (useLicence('LICENSES/image-rs-image.LICENSE-MIT'), useLicence('LICENSES/image-rs-image.LICENSE-APACHE'), LIC.imagers)],
    ['bad/jsquash/', 'jamsinclair/jSquash test/fixtures/', () => (useLicence('LICENSES/jSquash.LICENSE'), 'Apache-2.0 (jamsinclair/jSquash repository licence, no per-file note) — see LICENSES/jSquash.LICENSE')],
    ['bad/thumbor/', 'thumbor/thumbor tests/fixtures/images/', () => (useLicence('LICENSES/thumbor.LICENSE'), LIC.thumbor)],
    ['bad/made-here/corrupt-header-1024.jpg', 'made for the corpus from `photos/Wood.jpg`', () => GPL_MATE('J.-F. Fortin Tam 2008')],
    ['bad/made-here/truncated-10000.png', 'made for the corpus from `photos/Float-into-MATE.png`', () => GPL_MATE('F. Vogelweith 2013, J. Krieger 2014')],
    ['bad/sharp/rotating-squares.webp', 'lovell/sharp test/fixtures/', () => 'CC0 (loading.io spinner, per lovell/sharp test/fixtures/index.js)'],
    ['formats/test.webp', 'webmproject/libwebp examples/test.webp', () => (useLicence('LICENSES/libwebp.COPYING'), 'BSD-3-Clause (webmproject/libwebp) — see LICENSES/libwebp.COPYING')],
    ['formats/lossy_alpha.webp', 'image-rs/image tests/images/webp/extended_images/', () => (useLicence('LICENSES/image-rs-image.LICENSE-MIT'), useLicence('LICENSES/image-rs-image.LICENSE-APACHE'), LIC.imagers)],
    ['formats/', 'AOMediaCodec/libavif tests/data/', (file) => {
      if (!file.endsWith('.avif') || /kodim|cosmos/.test(file)) throw new Error(`no licence line for ${file}: add one to make-fixtures.mjs`);
      useLicence('LICENSES/libavif.LICENSE');
      return 'BSD-2-Clause (AOMediaCodec/libavif) — see LICENSES/libavif.LICENSE';
    }],
  ];
  for (const row of table.files.filter((r) => r.fixture)) {
    const folder = FOLDERS.find(([prefix]) => row.file.startsWith(prefix));
    if (!folder) throw new Error(`no source and licence known for ${row.file}: add it to make-fixtures.mjs`);
    const [, upstream, licence] = folder;
    fs.mkdirSync(path.join(OUT, 'corpus', path.dirname(row.file)), { recursive: true });
    const outcome = row.status === 200 ? `200, ${row.format} ${row.width}x${row.height}` : `${row.status} ${row.code}${row.detected ? ` (${row.detected})` : ''}`;
    copy(`corpus/${row.file}`, row.file, {
      what: `conformance subset; expect ${outcome}`,
      source: `\`${row.file}\` (${upstream})`,
      licence: licence(row.file),
      check: 'conformance',
    });
  }
}

// ---------------------------------------------------------------------------
// Licence texts

for (const [src, name] of licenceFiles) fs.writeFileSync(path.join(OUT_LICENSES, name), readCorpus(src)); // 0644, not the corpus's read-only mode

// ---------------------------------------------------------------------------
// Checks: every image decodes with the matching jsquash decoder; the broken ones fail.

console.log('checking (libjpeg messages on stderr during the checks are expected)...');
const failures = [];
const decodeNotes = [];
let gifModule = null;
try {
  gifModule = await import('omggif'); // optional: only used if it happens to be installed
} catch {
  /* structural check only */
}

for (const f of fixtures) {
  const b = fs.readFileSync(path.join(OUT, f.name));
  const d = describeBytes(b);
  f.dims = d.dims;
  f.format = d.desc;
  let result;
  try {
    switch (f.check) {
      case 'jpeg': {
        const img = await jpegDec.default(b);
        result = `jpeg decode ${img.width}x${img.height}`;
        const j = jpegInfo(b);
        if (img.width !== j.width || img.height !== j.height) throw new Error('size differs from SOF');
        break;
      }
      case 'jpeg-cmyk': {
        try {
          const img = await jpegDec.default(b);
          result = `jpeg decode ${img.width}x${img.height}`;
        } catch (e) {
          result = `jpeg decode FAILED (${e.message}) — CMYK needs a fallback path`;
          decodeNotes.push(`${f.name}: @jsquash/jpeg decode fails: ${e.message}`);
        }
        break;
      }
      case 'png': {
        const img = await pngDec.default(b);
        const p = pngInfo(b);
        if (img.width !== p.width || img.height !== p.height) throw new Error('size differs from IHDR');
        result = `png decode ${img.width}x${img.height}`;
        break;
      }
      case 'webp': {
        const img = await webpDec.default(b);
        result = `webp decode ${img.width}x${img.height}`;
        break;
      }
      case 'webp-anim': {
        try {
          const img = await webpDec.default(b);
          result = `webp decode ${img.width}x${img.height}`;
        } catch (e) {
          result = `webp decode fails (${e.message}): expected, @jsquash/webp has no animation support`;
          decodeNotes.push(`${f.name}: @jsquash/webp decode fails (${e.message})`);
        }
        break;
      }
      case 'avif': {
        const img = await avifDec.default(b);
        result = `avif decode ${img.width}x${img.height}`;
        break;
      }
      case 'gif': {
        const g = gifInfo(b); // throws on structural errors
        result = `GIF structure ok, ${g.frames} frame(s), loop ${g.loop ?? 'none'}`;
        if (gifModule) {
          const GifReader = gifModule.GifReader ?? gifModule.default?.GifReader;
          const r = new GifReader(new Uint8Array(b));
          const px = new Uint8Array(r.width * r.height * 4);
          for (let i = 0; i < r.numFrames(); i++) r.decodeAndBlitFrameRGBA(i, px);
          result += `; omggif decoded ${r.numFrames()} frame(s)`;
        }
        break;
      }
      case 'jpeg-truncated': {
        // Deliberately broken. Record what the decoder does: libjpeg only warns on a
        // truncated scan and fills the rest with grey, so the API has to notice itself.
        try {
          const img = await jpegDec.default(b);
          result = `jpeg decode ACCEPTS it (${img.width}x${img.height}, missing scan data filled in)`;
          decodeNotes.push(`${f.name}: @jsquash/jpeg decodes it without error (libjpeg prints "Premature end of JPEG file" and fills the rest); the API must detect truncation itself (e.g. missing EOI) to return 4xx`);
        } catch (e) {
          result = `jpeg decode rejects it (${e.message})`;
        }
        break;
      }
      case 'png-bad': {
        let ok = false;
        try {
          await pngDec.default(b);
          ok = true;
        } catch (e) {
          result = `png decode rejects it (${String(e.message ?? e).slice(0, 40)})`;
        }
        if (ok) {
          result = 'png decode ACCEPTS it (decoder is lenient)';
          decodeNotes.push(`${f.name}: @jsquash/png decodes this corrupt file without error`);
        }
        break;
      }
      case 'hostile':
        result = 'not decoded (hostile/non-image)';
        break;
      case 'conformance':
        result = 'checked by the API tests against test/conformance/expected.json';
        break;
      default:
        throw new Error(`no check for ${f.name}`);
    }
  } catch (e) {
    result = `FAILED: ${e.message ?? e}`;
    failures.push(`${f.name}: ${e.message ?? e}`);
  }
  f.result = result;
}

for (const r of exifResults) {
  if (!(r.diffByHand < 4)) failures.push(`${r.file}: applying the orientation by hand differs from the reference (mean abs diff ${r.diffByHand.toFixed(2)})`);
  if (!(r.diffDecoder < 4)) {
    failures.push(`${r.file}: decode with preserveOrientation: true gives ${r.decoded}, mean abs diff ${r.diffDecoder} against the upright reference`);
  }
}

// ---------------------------------------------------------------------------
// README

function sizeOfDir(dir) {
  let total = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    total += e.isDirectory() ? sizeOfDir(p) : fs.statSync(p).size;
  }
  return total;
}

const esc = (s) => String(s).replaceAll('|', '\\|');
function readme(totalBytes) {
  const rows = fixtures
    .map((f) => `| \`${f.name}\` | ${f.dims} | ${f.bytes.toLocaleString('en-US')} | ${esc(f.what)} | ${esc(f.source)} | ${esc(f.how ?? 'copied byte for byte')} | ${esc(f.licence)} |`)
    .join('\n');
  const lic = [...licenceFiles.values()].sort().map((n) => `- \`LICENSES/${n}\``).join('\n');
  const exifRows = exifResults
    .map((r) => `| \`${r.file}\` | ${r.stored} | ${r.decoded} | ${r.diffDecoder.toFixed(2)} | ${r.diffByHand.toFixed(2)} | ${Number.isFinite(r.diffIgnoringExif) ? r.diffIgnoringExif.toFixed(2) : 'size differs'} |`)
    .join('\n');
  return `# Test fixtures

**Generated — do not edit by hand.** Regenerate with

    node_modules/.bin/node scripts/make-fixtures.mjs

(requires the test corpus at \`../shared/corpus\`, i.e. \`/work/shared/corpus\`; set \`CORPUS_DIR\` to use another
path). The script rewrites every file listed below, this README and \`LICENSES/\`. The tests only read the files here,
so they run on a fresh clone without the corpus. Output is deterministic (same codecs, same bytes).

Source paths are relative to the corpus; the corpus README (\`/work/shared/corpus/README.md\`) names the upstream
project and commit of each. Derived images use the @jsquash codecs pinned in \`package.json\`
(MozJPEG, libwebp, libavif, squoosh PNG/oxipng/resize). Total size of this folder: **${totalBytes.toLocaleString('en-US')} bytes**
(README and licences included).

## Files

| file | pixels | bytes | what it is | source | how it was made | licence |
|---|---|---|---|---|---|---|
${rows}

"pixels" is width x height as stored in the file (EXIF orientation not applied).

## EXIF orientation check

\`exif-{3,6,8}.jpg\` hold the same picture as \`exif-6.upright.png\` (upright, 180x120), stored so that the EXIF
Orientation tag is needed to show it upright. Mean absolute difference (0–255, RGB) against \`exif-6.upright.png\`,
as measured by the script:

| file | stored | @jsquash/jpeg with \`preserveOrientation: true\` | diff (decoder) | diff (orientation applied by hand) | diff if EXIF is ignored |
|---|---|---|---|---|---|
${exifRows}

## Notes

- Expected API results (per the corpus README): valid images → 200; \`x*.png\`, \`truncated*.jpg\`, \`bomb-50000.png\` → 4xx
  (never 5xx); \`not-an-image.svg\`, \`text.txt\` → 415; \`anim.gif\`, \`anim.webp\` → 200 with the first frame, or a
  documented 4xx. The decoder findings below show where plain @jsquash calls do not give that on their own.
- GIFs have no @jsquash decoder: the script checks their block structure (and decodes them with \`omggif\` when that
  package happens to be installed).
- \`photo.png\`: @jsquash/png encode always writes 8-bit RGBA; the script runs @jsquash/oxipng over it, which drops the
  unused alpha channel, so the file is 8-bit RGB. The decoded pixels are checked to be identical to the RGBA encode.
- \`anim.gif\` is CC-BY-SA-4.0 (attribution: Petrus3743, Wikimedia Commons). The Creative Commons licence text is not in
  the corpus and is referenced by URL (https://creativecommons.org/licenses/by-sa/4.0/legalcode), as the licence allows.
- \`corpus/\`: byte-for-byte copies of the corpus files whose row in \`test/conformance/expected.json\` has
  \`"fixture": true\`, under their corpus paths; \`test/integration/conformance.test.ts\` sends each one and checks
  the outcome in that table (status, code, output format and size). The HTTP test sends every corpus file when
  \`../shared/corpus\` is present.
- GPL-2+ files: the original, unmodified images are in the Debian package \`mate-backgrounds\` 1.26.0-1 (source
  https://git.mate-desktop.org/mate-backgrounds/); this script is the recipe for the derived versions.
${notes.map((n) => `- ${n}`).join('\n')}

Decoder findings (what the pinned @jsquash decoders do with these files, recorded by the script):

${decodeNotes.map((n) => `- ${n}`).join('\n')}

## Licence texts (\`LICENSES/\`)

Copied from the corpus, only those of files used here:

${lic}
`;
}

// Write the README twice: the first pass fixes its own size in the total.
fs.writeFileSync(path.join(OUT, 'README.md'), readme(0));
let total = sizeOfDir(OUT);
for (let i = 0; i < 3; i++) {
  fs.writeFileSync(path.join(OUT, 'README.md'), readme(total));
  const t = sizeOfDir(OUT);
  if (t === total) break;
  total = t;
}

// ---------------------------------------------------------------------------
// Summary

const pad = (s, n) => String(s).padEnd(n);
const lpad = (s, n) => String(s).padStart(n);
console.log('\nfixtures:');
console.log(`${pad('file', 22)} ${lpad('bytes', 8)}  ${pad('dims', 12)} ${pad('format', 46)} check`);
for (const f of fixtures) {
  console.log(`${pad(f.name, 22)} ${lpad(f.bytes, 8)}  ${pad(f.dims, 12)} ${pad(f.format, 46)} ${f.result}`);
}
const imageBytes = fixtures.reduce((s, f) => s + f.bytes, 0);
const licBytes = sizeOfDir(OUT_LICENSES);
console.log(`\nfixture files: ${fixtures.length}, ${imageBytes} B; LICENSES/: ${licBytes} B; README.md: ${fs.statSync(path.join(OUT, 'README.md')).size} B`);
console.log(`total test/fixtures: ${total} B (${(total / 1024).toFixed(1)} KiB; target ${TARGET_TOTAL_BYTES / 1024} KiB, hard limit ${MAX_TOTAL_BYTES / 1024} KiB)`);

console.log('\nEXIF orientation check (mean abs diff vs exif-6.upright.png, 0-255):');
for (const r of exifResults) {
  console.log(
    `  ${r.file}: stored ${r.stored}, decoder(preserveOrientation) ${r.decoded} diff ${r.diffDecoder.toFixed(2)}; by hand diff ${r.diffByHand.toFixed(2)}; ignoring EXIF diff ${Number.isFinite(r.diffIgnoringExif) ? r.diffIgnoringExif.toFixed(2) : 'n/a (size differs)'}`,
  );
}
for (const n of notes) console.log(`note: ${n}`);
for (const n of decodeNotes) console.log(`decoder finding: ${n}`);

if (total > TARGET_TOTAL_BYTES) console.warn(`\nWARNING: total ${total} B is over the ~${TARGET_TOTAL_BYTES / 1024} KiB target`);
if (total > MAX_TOTAL_BYTES) failures.push(`total size ${total} B is over the hard limit of ${MAX_TOTAL_BYTES} B`);
if (failures.length) {
  console.error('\nFAILED:');
  for (const f of failures) console.error(`  ${f}`);
  process.exit(1);
}
console.log('\nall checks passed');
