// The images scripts/auto-quality-check.mjs and scripts/format-choice-check.mjs measure, made from
// ../shared/corpus/photos by sharp:
//   tuned     the six corpus photos resized to 1600 px wide (quality=auto's first defaults were calibrated on these);
//   held-out  1024x1024 crops of the same photos at full resolution (other content and scale), the photos at 800 px
//             with film grain added (noise the encoder must keep), and the corpus wallpapers (graphics) at 1600 px,
//             flattened.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import sharp from 'sharp'

const PHOTOS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'shared', 'corpus', 'photos')

/**
 * Film grain: Gaussian noise of `sigma` levels on each channel of an image (bytes sharp reads), the same for every run
 * (a fixed generator); a PNG.
 *
 * @example
 * const grainy = await filmGrain(await sharp(file).resize({ width: 800 }).png().toBuffer(), 6)
 */
export async function filmGrain(input, sigma) {
  const { data, info } = await sharp(input).removeAlpha().raw().toBuffer({ resolveWithObject: true })
  let seed = 12345
  const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32)
  for (let i = 0; i < data.length; i += 2) {
    const r = Math.sqrt(-2 * Math.log(random() + 1e-12))
    const t = 2 * Math.PI * random()
    data[i] = Math.max(0, Math.min(255, Math.round(data[i] + sigma * r * Math.cos(t))))
    if (i + 1 < data.length) data[i + 1] = Math.max(0, Math.min(255, Math.round(data[i + 1] + sigma * r * Math.sin(t))))
  }
  return sharp(data, { raw: info }).png().toBuffer()
}

/**
 * `set`: 'tuned', 'held-out' or 'all'; each image is { set, name, png }.
 *
 * @example
 * for (const image of await checkImages('all')) console.log(image.name, image.png.length)
 */
export async function checkImages(set) {
  const photos = fs.readdirSync(PHOTOS).filter((f) => f.endsWith('.jpg')).sort()
  const wallpapers = fs.readdirSync(PHOTOS).filter((f) => f.endsWith('.png')).sort()
  const out = []
  if (set !== 'held-out') {
    for (const f of photos) out.push({ set: 'tuned', name: `${f} 1600`, png: await sharp(path.join(PHOTOS, f)).rotate().resize({ width: 1600 }).png().toBuffer() })
  }
  if (set !== 'tuned') {
    for (const f of photos) {
      const file = path.join(PHOTOS, f)
      const { width, height } = await sharp(file).rotate().toBuffer({ resolveWithObject: true }).then((r) => r.info)
      out.push({ set: 'held-out', name: `${f} crop`, png: await sharp(file).rotate().extract({ left: Math.floor((width - 1024) / 3), top: Math.floor((height - 1024) / 2), width: 1024, height: 1024 }).png().toBuffer() })
      out.push({ set: 'held-out', name: `${f} grain 800`, png: await filmGrain(await sharp(file).rotate().resize({ width: 800 }).png().toBuffer(), 6) })
    }
    for (const f of wallpapers) out.push({ set: 'held-out', name: `${f} 1600`, png: await sharp(path.join(PHOTOS, f)).resize({ width: 1600 }).flatten({ background: '#ffffff' }).png().toBuffer() })
  }
  return out
}
