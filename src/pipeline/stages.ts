/**
 * The transformations of one conversion, planned once from the options and the header, in their order: orientation
 * (EXIF), trim, rotate/flip, crop at gravity, resize (and dpr), then the filters after it (src/pipeline/filters.ts),
 * padding and the encode. The turns compose into one orientation that the row pipeline applies once; the trim and the
 * crop into one window of the turned image; so every route that already turns, crops and resizes carries them.
 */
import { ApiError } from '../errors'
import type { CompressOptions, Trim } from './options'
import { composeOrientation, orientRect, type Rect, userOrientation } from './orientation'
import { type ImageHeader, uprightSize } from './sniff'
import { type Geometry, planGeometry } from './transform'

export interface Transforms {
  /** The header with its orientation composed with rotate and flip: what the row pipeline's turn applies. */
  header: ImageHeader
  /** What to do to the turned pixels: the crop (trim and gravity in one window), the resample and the padding. */
  geometry: Geometry
  /** The part of the turned image that trim kept. */
  region: Rect
  /** gravity=auto's window, where it cropped (in the turned image: X-Crop). */
  chosen?: Rect | undefined
  /** gravity=auto crops, and its window is still to be placed (placeAuto): the geometry's crop is the centred one. */
  auto: boolean
}

/** What finds what the pixels decide (trim=border, gravity=auto): a row pass over the turned image (src/pipeline/rows.ts). */
export interface PixelProbes {
  /** trim=border: the box inside a uniform border of the turned image, within `tolerance`. */
  borderBox(header: ImageHeader, tolerance: number): Rect
  /**
   * gravity=auto: where a `width` x `height` window of `region` keeps the most of what draws the eye (src/pipeline/smartcrop.ts).
   * With `keep`, the JPEG's decode at that scale (eighths), the conversion's, is made for the preview and kept for the
   * conversion.
   */
  smartCrop(header: ImageHeader, region: Rect, width: number, height: number, keep?: number): { x: number; y: number }
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
  const auto = options.gravity === 'auto' && (crop.width < region.width || crop.height < region.height)
  const window = { ...crop, x: crop.x + region.x, y: crop.y + region.y }
  return { header, geometry: { ...geometry, crop: window }, region, auto }
}

/**
 * gravity=auto's window, placed by `probes` (a preview's pass over the pixels) where planTransforms left it pending;
 * `keep`: the scale of the conversion's decode, which the pass makes and keeps for it (ConversionPlan.keptDecode).
 *
 * @example
 * const placed = placeAuto(transforms, probes, plan.keptDecode ? plan.scale : undefined)
 */
export function placeAuto(transforms: Transforms, probes: PixelProbes, keep?: number): Transforms {
  if (!transforms.auto) return transforms
  const { header, region, geometry } = transforms
  const { crop } = geometry
  const at = probes.smartCrop(header, region, crop.width, crop.height, keep)
  const window = { ...crop, x: at.x + region.x, y: at.y + region.y }
  return { ...transforms, geometry: { ...geometry, crop: window }, chosen: window, auto: false }
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
