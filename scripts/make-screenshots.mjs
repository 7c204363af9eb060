// Screenshot-like PNGs for measuring PNG input (scripts/measure-memory.mjs takes a file in a case key, and
// its --matrix adds the two screenshots as rows): a desktop of flat panels, text and a photo window,
// rendered by sharp from SVG, 8-bit RGB; and an RGBA wallpaper, the corpus' Gulp.png (real alpha) enlarged.
//
//   node_modules/.bin/node scripts/make-screenshots.mjs [DIR]    # default .cache/screenshots
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import sharp from 'sharp'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const corpus = path.join(root, '..', 'shared', 'corpus', 'photos')
/** The photo in the window: the corpus' Dune.jpg, or the test fixture made from it when there is no corpus. */
const windowPhoto = [path.join(corpus, 'Dune.jpg'), path.join(root, 'test', 'fixtures', 'large.jpg')].find((file) => fs.existsSync(file))

/** An editor-and-browser desktop: title bars, a sidebar, lines of text in two fonts, a photo; PNG bytes. */
export async function screenshot(width, height) {
  const line = 26
  const text = []
  for (let y = 120, i = 0; y < height - 40; y += line, i++) {
    const indent = 24 * (i % 5)
    const words = `const row${i} = decode(bytes.subarray(${i * 4096}, ${(i + 1) * 4096}), { width: ${width}, height: ${height} })`
    text.push(`<text x="${width * 0.2 + 20 + indent}" y="${y}" font-family="DejaVu Sans Mono" font-size="17" fill="${i % 7 ? '#1e1e1e' : '#0451a5'}">${words}</text>`)
    if (i % 3 === 0) text.push(`<text x="16" y="${y}" font-family="DejaVu Sans" font-size="16" fill="#444">file-${i}.ts</text>`)
  }
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <rect width="100%" height="100%" fill="#ffffff"/>
    <rect width="100%" height="40" fill="#dddddd"/>
    <rect y="40" width="100%" height="44" fill="#f3f3f3"/>
    <rect y="84" width="${width * 0.2}" height="${height - 84}" fill="#f8f8f8"/>
    <text x="20" y="27" font-family="DejaVu Sans" font-size="18" fill="#333">imgedge - src/codecs/png.ts</text>
    ${text.join('\n')}
  </svg>`
  const photo = await sharp(windowPhoto).resize(Math.round(width * 0.3), Math.round(height * 0.3)).toBuffer()
  return sharp(Buffer.from(svg))
    .composite([{ input: photo, left: Math.round(width * 0.65), top: Math.round(height * 0.6) }])
    .removeAlpha()
    .png({ compressionLevel: 9 })
    .toBuffer()
}

/** `DIR/screenshot-WxH.png`, made on first use. */
export async function screenshotFile(width, height, dir = path.join(root, '.cache', 'screenshots')) {
  const file = path.join(dir, `screenshot-${width}x${height}.png`)
  if (!fs.existsSync(file)) {
    fs.mkdirSync(dir, { recursive: true })
    fs.writeFileSync(`${file}.tmp`, await screenshot(width, height))
    fs.renameSync(`${file}.tmp`, file)
  }
  return file
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dir = path.resolve(process.argv[2] ?? path.join(root, '.cache', 'screenshots'))
  fs.mkdirSync(dir, { recursive: true })
  const write = (name, bytes) => {
    fs.writeFileSync(path.join(dir, name), bytes)
    console.log(`${path.join(dir, name)}: ${bytes.length} bytes`)
  }
  write('screenshot-2880x1800.png', await screenshot(2880, 1800))
  write('screenshot-3840x2160.png', await screenshot(3840, 2160))
  write('wallpaper-rgba-3700x2400.png', await sharp(path.join(corpus, 'Gulp.png')).resize(3700, 2400, { fit: 'fill' }).png({ compressionLevel: 9 }).toBuffer())
}
