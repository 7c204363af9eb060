/**
 * The transformations of one conversion, planned once from the options and the header, in their order: orientation
 * (EXIF), trim, rotate/flip, crop at gravity, resize (and dpr), then the filters after it (src/pipeline/filters.ts),
 * padding and the encode. The turns compose into one orientation that the row pipeline applies once; the trim and the
 * crop into one window of the turned image; so every route that already turns, crops and resizes carries them.
 */
import { ApiError } from '../errors'
import type { ConversionPlan } from './limits'
import { type FoundGravity, isFound } from './found-gravity'
import type { CompressOptions, Trim } from './options'
import { composeOrientation, orientRect, type Rect, userOrientation } from './orientation'
import { type ImageHeader, uprightSize } from './sniff'
import { PREVIEW_SIDE } from './smartcrop'
import { type Geometry, planGeometry } from './transform'

export interface Transforms {
  /** The header with its orientation composed with rotate and flip: what the row pipeline's turn applies. */
  header: ImageHeader
  /** What to do to the turned pixels: the crop (trim and gravity in one window), the resample and the padding. */
  geometry: Geometry
  /** The part of the turned image that trim kept. */
  region: Rect
  /** gravity=auto's (or face's) window, where it cropped, in the image after trim and the turn (X-Crop). */
  chosen?: Rect | undefined
  /**
   * gravity=auto or face crops, and its window is still to be placed (placeAuto): the geometry's crop is the centred one.
   * With `face`, the window is centred on the faces found in the preview (src/pipeline/faces.ts), as auto's where there
   * are none.
   */
  auto: false | FoundGravity
}

/** What finds what the pixels decide (trim=border, gravity=auto): a row pass over the turned image (src/pipeline/rows.ts). */
export interface PixelProbes {
  /** trim=border: the box inside a uniform border of the turned image, within `tolerance`. */
  borderBox(header: ImageHeader, tolerance: number): Rect
  /**
   * gravity=auto: where a `width` x `height` window of `region` keeps the most of what draws the eye (src/pipeline/smartcrop.ts).
   * With `keep`, the pass makes the region's rows as the conversion resizes them, and keeps them for it. With `faces`
   * (gravity=face), the window is centred on the faces in the preview where it finds any.
   */
  smartCrop(header: ImageHeader, region: Rect, width: number, height: number, keep?: Keep, faces?: boolean): { x: number; y: number }
}

/**
 * What gravity=auto's pass keeps for the conversion (ConversionPlan.kept, src/pipeline/rows.ts): the region decoded at
 * `scale` eighths, its colours to sRGB where `colour` (not where a profile travels with the pixels), and resized where
 * `resized` says (else as decoded).
 */
export interface Keep {
  scale: number
  colour: boolean
  resized: KeptSize | undefined
}

/** The region resized as the crop is (`size`), and the crop's window in it: the output's size (keptSize). */
export interface KeptSize {
  size: { width: number; height: number }
  window: { width: number; height: number }
}

/**
 * Plan the turn, trim, gravity and dpr for an image whose header has been read (and checked against the limits).
 * trim=border reads the pixels through `probes`; gravity=auto's window, which only moves the crop (its size, and so
 * the conversion's plan, is known without it), is placed after the plan by placeAuto.
 *
 * @example
 * const { header, geometry } = placeAuto(planTransforms(sniffed, options, probes), probes)
 */
export function planTransforms(sniffed: ImageHeader, options: CompressOptions, probes: PixelProbes): Transforms {
  const turn = userOrientation(options)
  const header = turn === 1 ? sniffed : { ...sniffed, orientation: composeOrientation(sniffed.orientation, turn) }
  const turned = uprightSize(header)
  const region = options.trim ? trimmed(sniffed, header, turn, options.trim, probes) : { x: 0, y: 0, ...turned }
  const dpr = options.dpr ?? 1
  const box = {
    width: options.width !== undefined ? Math.min(16384, Math.round(options.width * dpr)) : undefined,
    height: options.height !== undefined ? Math.min(16384, Math.round(options.height * dpr)) : undefined,
  }
  const geometry = planGeometry(region.width, region.height, { ...options, ...box })
  const { crop } = geometry
  const crops = crop.width < region.width || crop.height < region.height
  const auto = crops && isFound(options.gravity) ? options.gravity : false
  const window = { ...crop, x: crop.x + region.x, y: crop.y + region.y }
  return { header, geometry: { ...geometry, crop: window }, region, auto }
}

/**
 * What gravity=auto's pass would keep for the conversion: the region resized as the crop is (the window is then cut out
 * of it at the output's size). Undefined where that is smaller than the preview made from it: the region is then kept
 * as decoded, and the window resized after the cut, as without gravity=auto.
 *
 * @example
 * keptSize(planTransforms(header, { width: 1600, height: 1600, fit: 'cover', gravity: 'auto' }, probes)) // 4000x3000: { size: { width: 2133, height: 1600 }, window: { width: 1600, height: 1600 } }
 */
export function keptSize({ region, geometry: { crop, resize } }: Transforms): KeptSize | undefined {
  const size = { width: Math.round((region.width * resize.width) / crop.width), height: Math.round((region.height * resize.height) / crop.height) }
  if (Math.max(size.width, size.height) < Math.min(PREVIEW_SIDE, Math.max(region.width, region.height))) return undefined
  return { size, window: { width: Math.min(size.width, resize.width), height: Math.min(size.height, resize.height) } }
}

/**
 * What the plan is asked to keep for gravity=auto's pass (planConversion's `preview`): the size keptSize gives, or the
 * region as decoded for a small output; undefined without gravity=auto.
 *
 * @example
 * chooseOutput(candidates, header, geometry, options, limits, resident, keptRequest(transforms))
 */
export const keptRequest = (transforms: Transforms): { width: number; height: number } | 'decoded' | undefined =>
  transforms.auto ? keptSize(transforms)?.size ?? 'decoded' : undefined

/**
 * What gravity=auto's pass keeps for the conversion, where the plan lets it (`kept`): a decode kept as it is must leave
 * the preview its PREVIEW_SIDE (a thumbnail's decode at 1/8 may not, and its preview is then a decode of its own).
 * `colour`: the colours are converted to sRGB (no profile travels with the pixels).
 *
 * @example
 * placeAuto(transforms, probes, keepFor(transforms, plan, !metadata.icc))
 */
export function keepFor(transforms: Transforms, plan: Pick<ConversionPlan, 'kept' | 'scale'>, colour: boolean): Keep | undefined {
  if (!plan.kept) return undefined
  const resized = keptSize(transforms)
  if (!resized && plan.scale < previewScale(transforms.header, transforms.region)) return undefined
  return { resized, scale: plan.scale, colour }
}

/**
 * The smallest decode scale (eighths) that leaves `region` at least PREVIEW_SIDE on its longer side: a JPEG's DCT
 * scales, a still WebP's rescale; 8 for the other sources.
 */
export function previewScale(header: ImageHeader, region: Rect): number {
  const long = Math.max(region.width, region.height)
  const scaled = header.format === 'jpeg' || (header.format === 'webp' && header.frames === 1)
  return scaled ? ([1, 2, 4, 8].find((s) => (long * s) / 8 >= PREVIEW_SIDE) ?? 8) : 8
}

/**
 * gravity=auto's window, placed by `probes` (a preview's pass over the pixels) where planTransforms left it pending;
 * `keep`: what the pass makes and keeps for the conversion (ConversionPlan.kept).
 *
 * @example
 * const placed = placeAuto(transforms, probes, keepFor(transforms, plan, true))
 */
export function placeAuto(transforms: Transforms, probes: PixelProbes, keep?: Keep): Transforms {
  if (!transforms.auto) return transforms
  const { header, region, geometry } = transforms
  const { crop } = geometry
  const at = probes.smartCrop(header, region, crop.width, crop.height, keep, transforms.auto === 'face')
  const window = { ...crop, x: at.x + region.x, y: at.y + region.y }
  return { ...transforms, geometry: { ...geometry, crop: window }, chosen: { ...crop, ...at }, auto: false }
}

/** The region trim keeps, in the turned image: edges given before the turn by rotate/flip, or the box inside a border. */
function trimmed(sniffed: ImageHeader, header: ImageHeader, turn: number, trim: Trim, probes: PixelProbes): Rect {
  if ('border' in trim) return probes.borderBox(header, trim.border)
  const upright = uprightSize(sniffed)
  const width = upright.width - trim.left - trim.right
  const height = upright.height - trim.top - trim.bottom
  if (width < 1 || height < 1) {
    throw new ApiError('invalid_option', `trim: ${trim.top};${trim.right};${trim.bottom};${trim.left} leaves nothing of a ${upright.width}x${upright.height} image.`, { option: 'trim' })
  }
  return orientRect({ x: trim.left, y: trim.top, width, height }, upright.width, upright.height, turn)
}
