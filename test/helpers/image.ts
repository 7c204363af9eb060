/**
 * Decode what the API returned with the project's own codecs and compare pixels.
 *
 * Decoding goes through `readHeader` (the same sniffing the API uses) and `CODECS[format].decode`,
 * so a test checks "the answer is a real image of this format" and gets its pixels in one step.
 */
import { CODECS, type FormatId } from '../../src/codecs/registry'
import { type ImageHeader, readHeader } from '../../src/pipeline/sniff'

export interface Decoded {
  format: FormatId
  header: ImageHeader
  image: ImageData
}

/** Sniff `bytes` and decode them to upright RGBA (JPEG: EXIF orientation applied, as in the API). */
export async function decode(bytes: Uint8Array): Promise<Decoded> {
  const header = readHeader(bytes)
  const image = await CODECS[header.format].decode!(bytes, header)
  return { format: header.format, header, image }
}

export interface CompareOptions {
  /**
   * Include alpha. Colour is then compared premultiplied (r·a/255), so the colour stored under a
   * fully transparent pixel, which encoders are free to change (oxipng optimiseAlpha, libwebp without
   * `exact`), does not count, and alpha is compared as a fourth channel.
   */
  alpha?: boolean
}

/**
 * Peak signal-to-noise ratio in dB (peak 255) between two equal-size images: over RGB, or with
 * `alpha` over premultiplied RGB plus A. Infinity for identical pixels.
 */
export function psnr(a: ImageData, b: ImageData, { alpha = false }: CompareOptions = {}): number {
  if (a.width !== b.width || a.height !== b.height) {
    throw new Error(`psnr: sizes differ (${a.width}x${a.height} vs ${b.width}x${b.height})`)
  }
  const da = a.data
  const db = b.data
  let sum = 0
  let count = 0
  for (let i = 0; i < da.length; i += 4) {
    const wa = alpha ? da[i + 3]! / 255 : 1
    const wb = alpha ? db[i + 3]! / 255 : 1
    for (let c = 0; c < 3; c++) {
      const d = da[i + c]! * wa - db[i + c]! * wb
      sum += d * d
    }
    count += 3
    if (alpha) {
      const d = da[i + 3]! - db[i + 3]!
      sum += d * d
      count += 1
    }
  }
  const mse = sum / count
  return mse === 0 ? Number.POSITIVE_INFINITY : 10 * Math.log10((255 * 255) / mse)
}

/** Composite over an opaque colour (what a JPEG answer must look like for a transparent input). */
export function flattenOver(image: ImageData, [r, g, b]: readonly [number, number, number]): ImageData {
  const out = new Uint8ClampedArray(image.data)
  for (let i = 0; i < out.length; i += 4) {
    const a = out[i + 3]! / 255
    out[i] = out[i]! * a + r * (1 - a)
    out[i + 1] = out[i + 1]! * a + g * (1 - a)
    out[i + 2] = out[i + 2]! * a + b * (1 - a)
    out[i + 3] = 255
  }
  return new ImageData(out, image.width, image.height)
}

/** The RGBA of pixel (x, y). */
export function pixel(image: ImageData, x: number, y: number): [number, number, number, number] {
  const i = (y * image.width + x) * 4
  const d = image.data
  return [d[i]!, d[i + 1]!, d[i + 2]!, d[i + 3]!]
}

/** Largest per-channel difference between two colours (RGB, or RGBA when both have 4 entries). */
export function colourDistance(a: readonly number[], b: readonly number[]): number {
  let max = 0
  for (let i = 0; i < Math.min(a.length, b.length); i++) max = Math.max(max, Math.abs(a[i]! - b[i]!))
  return max
}

/** True when any pixel is not fully opaque. */
export function hasTransparency(image: ImageData): boolean {
  for (let i = 3; i < image.data.length; i += 4) if (image.data[i] !== 255) return true
  return false
}

/** An opaque grey PNG of width x height, made with the project's own PNG encoder (cheap to send and to decode). */
export function greyPng(width: number, height: number): Promise<Uint8Array> {
  const pixels = new Uint8ClampedArray(width * height * 4).fill(128)
  for (let i = 3; i < pixels.length; i += 4) pixels[i] = 255
  return pngOf(new ImageData(pixels, width, height))
}

/** Pixels as a lossless PNG, made with the project's own PNG encoder. */
export function pngOf(image: ImageData): Promise<Uint8Array> {
  return CODECS.png.encode!(image, { quality: 100, lossless: true, effort: 0 }).then(({ bytes }) => bytes)
}

/** A PNG of width x height whose pixel at column x is `colour(x)` (RGBA) on every row. */
export function translucentPng(width: number, height: number, colour: (x: number) => readonly [number, number, number, number]): Promise<Uint8Array> {
  const pixels = new Uint8ClampedArray(width * height * 4)
  for (let i = 0; i < width * height; i++) pixels.set(colour(i % width), i * 4)
  return pngOf(new ImageData(pixels, width, height))
}
