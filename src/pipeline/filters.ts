/**
 * The filters after the resample, in their order: sharpen or blur (wasm/lean/op_sharpen.c, op_blur.c), then the colour
 * adjustments (op_adjust.c). Each is a row stage with a known window, so its memory is a few rows of the output's width.
 */
import type { LeanCodec } from '../../wasm'
import type { CompressOptions } from './options'

export interface Filters {
  /** Gaussian blur: its standard deviation in output pixels (Cloudflare's blur / 2). */
  blurSigma?: number
  /** Unsharp mask: how far each colour moves from its blur (SHARPEN.amountPerStep per step of `sharpen`). */
  sharpenAmount?: number
  adjust?: { brightness: number; contrast: number; gamma: number; saturation: number }
}

/**
 * sharpen's unsharp mask: a Gaussian of 1 px (7 rows), and the amount per step of the 0-10 scale. At 1 (what a
 * downscaled photo usually wants) it is about as strong as sharp's default sharpen() (a 3x3 kernel that moves each
 * pixel a third of the way from its neighbours' mean).
 */
export const SHARPEN = { sigma: 1, amountPerStep: 0.35 } as const

/**
 * The filters the options ask for, undefined when none (blur's 1-250 is Cloudflare's scale: sigma = blur / 2).
 *
 * @example
 * filtersOf({ ...options, blur: 50 }) // { blurSigma: 25 }
 */
export function filtersOf(options: Pick<CompressOptions, 'blur' | 'sharpen' | 'brightness' | 'contrast' | 'gamma' | 'saturation'>): Filters | undefined {
  const filters: Filters = {}
  if (options.blur !== undefined) filters.blurSigma = options.blur / 2
  else if (options.sharpen) filters.sharpenAmount = options.sharpen * SHARPEN.amountPerStep
  const { brightness = 1, contrast = 1, gamma = 1, saturation = 1 } = options
  if (brightness !== 1 || contrast !== 1 || gamma !== 1 || saturation !== 1) filters.adjust = { brightness, contrast, gamma, saturation }
  return Object.keys(filters).length > 0 ? filters : undefined
}

/**
 * The filters as row stages, after the resample.
 *
 * @example
 * lean.resizeRows(800, 600)
 * addFilters(lean, filtersOf(options))
 */
export function addFilters(lean: LeanCodec, filters: Filters | undefined): void {
  if (!filters) return
  if (filters.blurSigma !== undefined) lean.blurRows(filters.blurSigma)
  if (filters.sharpenAmount !== undefined) lean.sharpenRows(SHARPEN.sigma, filters.sharpenAmount)
  if (filters.adjust) lean.adjustRows(filters.adjust)
}

/** blur's largest sigma done by the kernel itself; above it, three boxes (op_blur.c BOX_FROM). */
const BOX_FROM = 3

/**
 * MiB the filters hold at an output `width`: the rows of their windows, in rows of 4 bytes a pixel. sharpen's kernel
 * keeps 2 ceil(3 sigma) + 2 rows as they came and a few rows of floats; blur's, 2 ceil(3 sigma) + 4 rows of 16-bit lanes
 * (8 bytes a pixel) and the 4 rows it makes at a time; its three boxes 2 r + 2 rows each, and a row either side for alpha.
 *
 * @example
 * filtersMiB({ blurSigma: 25 }, 4608) // about 3: three boxes of some 50 rows each
 */
export function filtersMiB(filters: Filters | undefined, width: number): number {
  if (!filters) return 0
  let rows = filters.adjust ? 1 : 0
  const kernelRows = (sigma: number) => 2 * Math.ceil(3 * sigma) + 2
  if (filters.sharpenAmount !== undefined) rows += kernelRows(SHARPEN.sigma) + 3 * 4 + 1
  if (filters.blurSigma !== undefined) rows += filters.blurSigma <= BOX_FROM ? 2 * kernelRows(filters.blurSigma) + 15 : 3 * (Math.sqrt(4 * filters.blurSigma ** 2 + 1) + 4) + 3 * 4 + 2
  return (rows * width * 4) / 2 ** 20
}
