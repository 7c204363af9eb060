// sharp's answers for the transformation tests (test/integration/gravity.test.ts, rotate-flip.test.ts, trim.test.ts,
// blur-sharpen.test.ts): test/fixtures/photo.png made 160x100 (source.png), then each operation on it as sharp does it,
// saved as a lossless PNG in test/fixtures/transform/, with a README listing what each is. The tests run in workerd, where sharp cannot, so they
// compare the API's answers with these files.
//
//   node scripts/make-transform-references.mjs
import { readFileSync, writeFileSync } from 'node:fs'
import sharp from 'sharp'

const root = new URL('../test/fixtures/', import.meta.url)
const out = new URL('transform/', root)
const source = await sharp(readFileSync(new URL('photo.png', root))).resize(160, 100, { kernel: 'lanczos3' }).png({ compressionLevel: 9 }).toBuffer()
writeFileSync(new URL('source.png', out), source)

// sharp's gravity names for the API's sides and corners
const SHARP_POSITION = { top: 'north', bottom: 'south', left: 'west', right: 'east', 'top-left': 'northwest', 'top-right': 'northeast', 'bottom-left': 'southwest', 'bottom-right': 'southeast', center: 'centre' }

const cases = []
const add = (name, what, make) => cases.push({ name, what, make })

// fit=cover at a side or corner: a square box crops across, a flat one down
for (const [box, gravities] of [[[40, 40], ['left', 'right', 'center']], [[80, 20], ['top', 'bottom', 'bottom-right']]]) {
  for (const gravity of gravities) {
    add(`cover-${box[0]}x${box[1]}-${gravity}.png`, `resize(${box[0]}, ${box[1]}, { fit: 'cover', position: '${SHARP_POSITION[gravity]}' })`, () =>
      sharp(source).resize(box[0], box[1], { fit: 'cover', position: SHARP_POSITION[gravity] }))
  }
}
// a focal point: sharp has none, so its window is worked out as the API documents it (centred on the point, inside the image) and extracted
const focal = { x: 0.8, y: 0.3 }
{
  // 160x100 to a 50x50 cover: a 100x100 window centred on x = 0.8 * 160 = 128, pushed inside: 60..160
  const size = 100
  const left = Math.max(0, Math.min(160 - size, Math.floor(focal.x * 160 - size / 2)))
  add('cover-50x50-0.8x0.3.png', `extract({ left: ${left}, top: 0, width: 100, height: 100 }).resize(50, 50)`, () =>
    sharp(source).extract({ left, top: 0, width: size, height: size }).resize(50, 50, { kernel: 'lanczos3' }))
}
// rotations (clockwise) and flips: flip first, then rotate, as the API (and Cloudflare) order them
// (the others are checked pixel by pixel against the source in the test: these two pin the direction and the order)
add('rotate-90.png', 'rotate(90)', () => sharp(source).rotate(90))
add('flip-h-rotate-90.png', 'flop(), then rotate(90)', async () => sharp(await sharp(source).flop().png().toBuffer()).rotate(90))
// trim's edges: top 5, right 10, bottom 15, left 20
add('trim-5-10-15-20.png', 'extract({ left: 20, top: 5, width: 130, height: 80 })', () => sharp(source).extract({ left: 20, top: 5, width: 130, height: 80 }))
add('trim-5-10-15-20-rotate-90.png', 'extract({ left: 20, top: 5, width: 130, height: 80 }), then rotate(90)', async () =>
  sharp(await sharp(source).extract({ left: 20, top: 5, width: 130, height: 80 }).png().toBuffer()).rotate(90))
// blur at the API's scale (sigma = blur / 2) and sharpen, at the photo's own size
for (const blur of [2, 10, 50]) add(`blur-${blur}.png`, `blur(${blur / 2})`, () => sharp(source).blur(blur / 2))
add('sharpen-default.png', 'sharpen() (its mild default)', () => sharp(source).sharpen())
// blur of a transparent picture (alpha-square.png: an opaque red square on a transparent background whose hidden colour is
// green), which sharp premultiplies: the kernel (blur=4) and the boxes (blur=20)
const square = Buffer.alloc(96 * 64 * 4)
for (let i = 0; i < 96 * 64; i++) {
  const x = i % 96
  const y = Math.floor(i / 96)
  const inside = x >= 32 && x < 64 && y >= 16 && y < 48
  square.set(inside ? [220, 30, 30, 255] : [0, 200, 0, 0], 4 * i)
}
const alphaSquare = await sharp(square, { raw: { width: 96, height: 64, channels: 4 } }).png({ compressionLevel: 9 }).toBuffer()
add('alpha-square.png', 'a 96x64 picture made here: an opaque red square, 32 px, on transparent green', () => sharp(alphaSquare))
for (const blur of [4, 20]) add(`alpha-square-blur-${blur}.png`, `alpha-square.png, blur(${blur / 2})`, () => sharp(alphaSquare).blur(blur / 2))

const rows = []
for (const { name, what, make } of cases) {
  const png = await (await make()).png({ compressionLevel: 9 }).toBuffer()
  writeFileSync(new URL(name, out), png)
  rows.push(`| \`${name}\` | ${what} | ${png.length.toLocaleString('en')} |`)
}
writeFileSync(new URL('README.md', out), `# sharp's answers for the transformation tests

**Generated — do not edit by hand.** \`node scripts/make-transform-references.mjs\` (sharp ${sharp.versions.sharp}, libvips ${sharp.versions.vips}) writes
every file here, as lossless PNG: \`source.png\` is \`../photo.png\` resized to 160x100 (Lanczos3), the others sharp's operations on it
(or on \`alpha-square.png\`, a transparent picture the script draws).

| file | sharp's operation on source.png (or what it is) | bytes |
|---|---|---|
${rows.join('\n')}
`)
console.log(rows.join('\n'))
