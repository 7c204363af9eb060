import { OUTPUT_FORMATS, type OutputFormat } from '../codecs/registry'
import type { Limits } from '../env'
import { encodeSettings } from './codec'
import { estimateMiB, planConversion } from './limits'
import type { CompressOptions } from './options'
import { type ImageHeader, uprightSize } from './sniff'
import { planGeometry } from './transform'

/** What would fit the memory budget where a conversion does not: the client can ask again with one of these. */
export interface WhatFits {
  /** The widest output (`width=N`, the height following the aspect ratio) that fits in this format. */
  maxWidth?: number
  /** Other output formats that fit at the size asked for. */
  formats?: OutputFormat[]
  /** The same image as a baseline JPEG fits (a progressive JPEG's coefficients are what does not). */
  asBaselineJpeg?: true
  /** The same image not interlaced fits (an Adam7 PNG or an interlaced GIF is decoded whole). */
  notInterlaced?: true
  /** The same conversion without `lossless=true` fits. */
  lossy?: true
}

type Options = Pick<CompressOptions, 'width' | 'height' | 'fit' | 'enlarge' | 'format'> & Parameters<typeof encodeSettings>[1]

/** Whether `header` to `format` at `options` plans within the budget (over a fresh isolate's memory); false where the options do not apply. */
function fits(header: ImageHeader, format: OutputFormat, options: Options, limits: Limits): boolean {
  const upright = uprightSize(header)
  const geometry = planGeometry(upright.width, upright.height, options)
  const pixels = geometry.canvas.width * geometry.canvas.height
  if (pixels > limits.maxOutputPixels) return false
  try {
    const settings = encodeSettings(format, options, pixels, true)
    return estimateMiB(planConversion(header, format, geometry, settings, limits)) <= limits.memoryBudgetMiB
  } catch {
    return false
  }
}

/**
 * For a conversion the memory model refuses: the widest output of the same format that fits (the estimate grows with
 * the output, and with the decode scale a JPEG's smaller output allows), the other formats that fit at the size asked
 * for, and whether the input sent another way (baseline, not interlaced) or a lossy answer fits.
 *
 * @example
 * whatFits(header, 'avif', { width: undefined }, limits) // { maxWidth: 4352, formats: ['jpeg', 'webp', 'png'] }
 */
export function whatFits(header: ImageHeader, format: OutputFormat, options: Options, limits: Limits): WhatFits {
  const found: WhatFits = {}
  const upright = uprightSize(header)
  const asked = planGeometry(upright.width, upright.height, options).canvas.width
  const at = (width: number): Options => ({ ...options, width, height: undefined, fit: 'inside' })
  // Binary search for the widest fitting output below the one asked for.
  let [low, high] = [0, asked - 1]
  while (low < high) {
    const middle = Math.ceil((low + high) / 2)
    if (fits(header, format, at(middle), limits)) low = middle
    else high = middle - 1
  }
  if (low >= 16) found.maxWidth = low
  const formats = OUTPUT_FORMATS.filter((other) => other !== format && fits(header, other, { ...options, lossless: undefined, quality: undefined }, limits))
  if (formats.length) found.formats = formats
  if (header.format === 'jpeg' && header.progressive && fits({ ...header, progressive: false, scans: 1 }, format, options, limits)) found.asBaselineJpeg = true
  if (header.format !== 'jpeg' && header.progressive && fits({ ...header, progressive: false }, format, options, limits)) found.notInterlaced = true
  if (options.lossless && fits(header, format, { ...options, lossless: undefined }, limits)) found.lossy = true
  return found
}

/**
 * The sentence a refusal's `detail` ends with: what to ask for instead.
 *
 * @example
 * whatFitsText({ maxWidth: 4352, formats: ['jpeg'] }) // 'What fits: at most 4352 px wide (width=4352); format=jpeg at this size.'
 */
export function whatFitsText(found: WhatFits): string {
  const ways = [
    ...(found.maxWidth ? [`at most ${found.maxWidth} px wide (width=${found.maxWidth})`] : []),
    ...(found.formats ? [`${found.formats.map((format) => `format=${format}`).join(' or ')} at this size`] : []),
    ...(found.asBaselineJpeg ? ['the image as baseline JPEG (not progressive)'] : []),
    ...(found.notInterlaced ? ['the image not interlaced'] : []),
    ...(found.lossy ? ['lossy output (without lossless=true)'] : []),
  ]
  return ways.length ? `What fits: ${ways.join('; ')}.` : 'Nothing smaller of this image fits: a smaller input may.'
}
