import { leanCodec } from '../../wasm'
import { encoderMemoryCap } from '../codecs/types'
import { addFilters, type Filters } from './filters'
import { isFound } from './found-gravity'
import type { CompressOptions, Gravity } from './options'

export type Fit = CompressOptions['fit']

/** What to do to the decoded pixels: an optional centred crop, a resample, and padding. */
export interface Geometry {
  /** Source region to keep (cover). */
  crop: { x: number; y: number; width: number; height: number }
  /** Size the kept region is resampled to. */
  resize: { width: number; height: number }
  /** Final canvas; larger than `resize` only for contain, which centres the image on it. */
  canvas: { width: number; height: number }
  /** Sharpen or blur, then colour adjustments, on the resampled pixels (src/pipeline/filters.ts). */
  filters?: Filters | undefined
}

/**
 * Where a crop of `size` pixels starts in `whole` pixels to keep `focus` (a fraction of `whole`) at its middle, as far as
 * the edges allow: 0 keeps the start, 1 the end, 0.5 the middle (rounded down, as the centred crop always was).
 */
export const placeCrop = (whole: number, size: number, focus: number): number =>
  Math.max(0, Math.min(whole - size, Math.floor(focus * whole - size / 2 + 1e-9)))

/**
 * The fit maths: from the upright source size and the requested box, where every pixel goes.
 * Without `enlarge` the image is never scaled up. A cover crop is placed by `gravity` (centred by default;
 * `auto` is placed by the caller, src/pipeline/smartcrop.ts, and centred here).
 *
 * @example
 * planGeometry(4000, 3000, { width: 800, fit: 'inside', enlarge: false }).canvas // { width: 800, height: 600 }
 * planGeometry(4000, 3000, { width: 300, height: 300, fit: 'cover', enlarge: false, gravity: { x: 0, y: 0.5 } }).crop.x // 0
 */
export function planGeometry(
  srcWidth: number,
  srcHeight: number,
  { width, height, fit, enlarge, gravity }: Pick<CompressOptions, 'width' | 'height' | 'fit' | 'enlarge'> & { gravity?: Gravity },
): Geometry {
  const focus = gravity === undefined || isFound(gravity) ? { x: 0.5, y: 0.5 } : gravity
  const whole = { x: 0, y: 0, width: srcWidth, height: srcHeight }
  const limit = (scale: number) => (enlarge ? scale : Math.min(1, scale))
  const round = (value: number) => Math.max(1, Math.round(value))

  if (width === undefined && height === undefined) {
    const size = { width: srcWidth, height: srcHeight }
    return { crop: whole, resize: size, canvas: size }
  }
  if (width === undefined || height === undefined) {
    const scale = limit(width !== undefined ? width / srcWidth : height! / srcHeight)
    const size = { width: round(srcWidth * scale), height: round(srcHeight * scale) }
    return { crop: whole, resize: size, canvas: size }
  }
  switch (fit) {
    case 'fill': {
      const size = enlarge
        ? { width, height }
        : { width: Math.min(width, srcWidth), height: Math.min(height, srcHeight) }
      return { crop: whole, resize: size, canvas: size }
    }
    case 'cover': {
      const wanted = Math.max(width / srcWidth, height / srcHeight)
      const scale = limit(wanted)
      // Box in source pixels. When enlarging is not allowed and the source is smaller than the box,
      // this is the largest centred region with the box's aspect ratio, kept at its own size.
      const cropWidth = Math.min(srcWidth, round(scale < wanted ? srcHeight * (width / height) : width / scale))
      const cropHeight = Math.min(srcHeight, round(scale < wanted ? srcWidth * (height / width) : height / scale))
      const crop = {
        x: placeCrop(srcWidth, cropWidth, focus.x),
        y: placeCrop(srcHeight, cropHeight, focus.y),
        width: cropWidth,
        height: cropHeight,
      }
      // (the box itself where the crop is scaled to cover it: a crop rounded to whole pixels, scaled up, would miss it)
      const size = scale < wanted ? { width: Math.min(width, round(cropWidth * scale)), height: Math.min(height, round(cropHeight * scale)) } : { width, height }
      return { crop, resize: size, canvas: size }
    }
    case 'crop': {
      // Cloudflare's crop: the box is what the image covers at the cover scale without enlarging, then cover
      const scale = Math.min(1, Math.max(width / srcWidth, height / srcHeight))
      const box = { width: Math.min(width, round(srcWidth * scale)), height: Math.min(height, round(srcHeight * scale)) }
      return planGeometry(srcWidth, srcHeight, { ...box, fit: 'cover', enlarge: false })
    }
    case 'contain': {
      const scale = limit(Math.min(width / srcWidth, height / srcHeight))
      const size = { width: round(srcWidth * scale), height: round(srcHeight * scale) }
      return { crop: whole, resize: size, canvas: { width, height } }
    }
    default: {
      const scale = limit(Math.min(width / srcWidth, height / srcHeight))
      const size = { width: round(srcWidth * scale), height: round(srcHeight * scale) }
      return { crop: whole, resize: size, canvas: size }
    }
  }
}

/** The DCT scales, in eighths, a JPEG is decoded at: powers of two, as libvips' shrink-on-load. */
export const DECODE_SCALES = [8, 4, 2, 1] as const

/** The margin a conversion's decode first tries to leave over its resample target (see decodeScale). */
export const DECODE_MARGIN = 1.25

/**
 * The scale, in eighths, a JPEG can be decoded at (libjpeg scales in the DCT) for this geometry: the
 * smallest of DECODE_SCALES that leaves the kept region at least `margin` times the resample target,
 * 8 (full size) when none does. Powers of two keep the decode as cheap as libvips' shrink-on-load;
 * with a margin of 1.25 every case measured scored 40 dB or more against a Lanczos3 of the full decode,
 * while libjpeg's odd scales were better on one photo and worse on another (docs/notes/benchmarks.md, item 17).
 *
 * @example
 * decodeScale(planGeometry(4032, 3024, { width: 1600, fit: 'inside', enlarge: false }), 1.25) // 4: decode 2016x1512
 */
export function decodeScale(geometry: Geometry, margin: number): number {
  const ratio = Math.max(geometry.resize.width / geometry.crop.width, geometry.resize.height / geometry.crop.height)
  return DECODE_SCALES.filter((scale) => scale / 8 >= margin * ratio - 1e-9).pop() ?? 8
}

/**
 * The geometry for an image that was decoded at another size than the one it was planned for (a
 * DCT-scaled JPEG): the crop moves to the decoded pixels; the resample target and canvas stay.
 */
export function fitToDecoded(geometry: Geometry, planned: { width: number; height: number }, image: { width: number; height: number }): Geometry {
  if (image.width === planned.width && image.height === planned.height) return geometry
  const sx = image.width / planned.width
  const sy = image.height / planned.height
  const { crop } = geometry
  const x = Math.min(image.width - 1, Math.round(crop.x * sx))
  const y = Math.min(image.height - 1, Math.round(crop.y * sy))
  const width = Math.max(1, Math.min(image.width - x, Math.round(crop.width * sx)))
  const height = Math.max(1, Math.min(image.height - y, Math.round(crop.height * sy)))
  return { ...geometry, crop: { x, y, width, height } }
}

export const isIdentity = (g: Geometry, srcWidth: number, srcHeight: number): boolean =>
  !g.filters && g.crop.width === srcWidth && g.crop.height === srcHeight && g.canvas.width === srcWidth && g.canvas.height === srcHeight

/**
 * Turn stored pixels upright for an EXIF-style orientation (2-8), for decoders that do not do it
 * themselves. Orientation n maps output pixel (x, y) to a stored pixel; 5-8 swap width and height.
 */
export function orient(image: ImageData, orientation: number): ImageData {
  if (orientation < 2 || orientation > 8) return image
  const { width: w, height: h } = image
  const swap = orientation >= 5
  const outW = swap ? h : w
  const outH = swap ? w : h
  const src = new Uint32Array(image.data.buffer, image.data.byteOffset, w * h)
  const out = new Uint32Array(outW * outH)
  for (let y = 0; y < outH; y++) {
    for (let x = 0; x < outW; x++) {
      let sx: number
      let sy: number
      switch (orientation) {
        case 2: sx = w - 1 - x; sy = y; break
        case 3: sx = w - 1 - x; sy = h - 1 - y; break
        case 4: sx = x; sy = h - 1 - y; break
        case 5: sx = y; sy = x; break
        case 6: sx = y; sy = h - 1 - x; break
        case 7: sx = w - 1 - y; sy = h - 1 - x; break
        default: sx = w - 1 - y; sy = x; break
      }
      out[y * outW + x] = src[sy * w + sx]!
    }
  }
  return new ImageData(new Uint8ClampedArray(out.buffer), outW, outH)
}

/** The colour `contain` pads with: the background, transparent for a format with alpha, opaque for one without. */
export const paddingColour = (keepsAlpha: boolean, [r, g, b]: [number, number, number]): [number, number, number, number] => [r, g, b, keepsAlpha ? 0 : 255]

/** Parse `#rgb`/`#rrggbb` into [r, g, b]. */
export function parseColour(hex: string): [number, number, number] {
  let digits = hex.replace(/^#/, '')
  if (digits.length === 3) digits = [...digits].map((d) => d + d).join('')
  const n = Number.parseInt(digits, 16)
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255]
}

function cropRgba(image: ImageData, { x, y, width, height }: Geometry['crop']): ImageData {
  if (x === 0 && y === 0 && width === image.width && height === image.height) return image
  const out = new Uint8ClampedArray(width * height * 4)
  for (let row = 0; row < height; row++) {
    const start = ((y + row) * image.width + x) * 4
    out.set(image.data.subarray(start, start + width * 4), row * width * 4)
  }
  return new ImageData(out, width, height)
}

/** Centre `image` on a canvas filled with `fill` (RGBA). */
function padRgba(image: ImageData, canvas: Geometry['canvas'], fill: [number, number, number, number]): ImageData {
  if (canvas.width === image.width && canvas.height === image.height) return image
  const out = new Uint8ClampedArray(canvas.width * canvas.height * 4)
  new Uint32Array(out.buffer).fill(new Uint32Array(new Uint8Array(fill).buffer)[0]!)
  const left = Math.floor((canvas.width - image.width) / 2)
  const top = Math.floor((canvas.height - image.height) / 2)
  for (let row = 0; row < image.height; row++) {
    out.set(image.data.subarray(row * image.width * 4, (row + 1) * image.width * 4), ((top + row) * canvas.width + left) * 4)
  }
  return new ImageData(out, canvas.width, canvas.height)
}

/** True when any pixel is not fully opaque. */
export function hasTransparency(image: ImageData): boolean {
  const data = image.data
  for (let i = 3; i < data.length; i += 4) if (data[i] !== 255) return true
  return false
}

/** Composite every pixel over an opaque colour, in place (JPEG has no alpha channel). */
export function flatten(image: ImageData, [r, g, b]: [number, number, number]): ImageData {
  const data = image.data
  for (let i = 0; i < data.length; i += 4) {
    const a = data[i + 3]!
    if (a === 255) continue
    const inv = 255 - a
    data[i] = (data[i]! * a + r * inv + 127) / 255
    data[i + 1] = (data[i + 1]! * a + g * inv + 127) / 255
    data[i + 2] = (data[i + 2]! * a + b * inv + 127) / 255
    data[i + 3] = 255
  }
  return image
}

/**
 * Step 5: crop, resample, filter and pad, as the geometry says. The resample is Lanczos3 over the whole factor
 * (wasm/lean/resample.c), with no box shrink first: a box pass scored 1.5-13.5 dB further from a full
 * Lanczos3 and saved no time (docs/notes/benchmarks.md, item 17). Premultiplied alpha only when there is
 * transparency (it cannot change opaque pixels).
 */
export function applyGeometry(image: ImageData, geometry: Geometry, padding: [number, number, number, number]): ImageData {
  let result = cropRgba(image, geometry.crop)
  const { width, height } = geometry.resize
  if (result.width !== width || result.height !== height) {
    result = leanCodec(encoderMemoryCap()).resizeRgba(result, width, height, hasTransparency(result))
  }
  if (geometry.filters) {
    const lean = leanCodec(encoderMemoryCap())
    result = lean.throughRows(result, () => addFilters(lean, geometry.filters))
  }
  return padRgba(result, geometry.canvas, padding)
}
