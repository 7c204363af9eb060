import { rgbaToThumbHash, thumbHashToDataURL } from 'thumbhash'
import { leanCodec } from '../../wasm'
import { CODECS } from '../codecs/registry'
import { decoderMemoryCap } from '../codecs/types'
import type { Limits } from '../env'
import { Stopwatch } from '../lib/stopwatch'
import { decodeImage, leanPass } from './codec'
import { checkInput, hasRowSource } from './limits'
import type { CompressOptions } from './options'
import { addTransforms, openSource } from './rows'
import { type ImageHeader, readHeader, uprightSize } from './sniff'
import { decodeScale, planGeometry } from './transform'

/**
 * The preview's longest side: ThumbHash keeps at most 7 cosines an axis and renders 32 px, so 32 px carry all it encodes
 * at a tenth of a 100 px preview's work (ThumbHash's own limit).
 */
const PREVIEW_SIDE = 32

/** format=json's answer: Cloudflare's fields (`width`, `height` after the options, `original`), and what it lacks. */
export interface ImageFacts {
  /** The size the options would give. */
  width: number
  height: number
  original: {
    file_size: number
    /** Upright (EXIF orientation applied), as the answer would be. */
    width: number
    height: number
    format: string
    frames: number
    /** EXIF orientation 1-8 as stored. */
    orientation: number
    /** `srgb`, `profile` (an ICC profile or PNG gAMA/cHRM, AVIF nclx primaries: converted to sRGB) or `cmyk`. */
    colour: ImageHeader['colour']
    alpha: boolean | undefined
    bit_depth: number
    progressive: boolean
  }
  placeholder: {
    /** ThumbHash (https://evanw.github.io/thumbhash/), base64. */
    thumbhash: string
    /** The ThumbHash rendered as a PNG, for `<img src>` or CSS until the image arrives. */
    data_url: string
  }
  /** The most common colour of the preview, as #rrggbb (coarse bins of 16 levels a channel, their mean). */
  dominant_colour: string
}

export interface Described {
  facts: ImageFacts
  timings: { decode: number; transform: number }
}

/**
 * format=json (GET /img and /cdn-cgi/image): the image's facts from its header, and a placeholder and dominant colour
 * from a preview of at most 32 px a side made the cheap way: a JPEG or still WebP decoded at its smallest scale that
 * still covers the preview (1/8 for a 12 MP JPEG: libjpeg's scaled IDCT), rows pulled through the row pipeline's
 * colour conversion, EXIF turn and Lanczos3 resample, never the whole image held.
 *
 * @example
 * const { facts } = await describeImage(bytes, options, limits)
 */
export async function describeImage(bytes: Uint8Array, options: CompressOptions, limits: Limits): Promise<Described> {
  const clock = new Stopwatch()
  const header = { ...readHeader(bytes), fileBytes: bytes.length }
  checkInput(header, limits)
  const upright = uprightSize(header)
  const preview = await previewOf(bytes, header)
  const decode = await clock.lap()
  const hash = rgbaToThumbHash(preview.width, preview.height, preview.data)
  const { canvas } = planGeometry(upright.width, upright.height, options)
  const facts: ImageFacts = {
    width: canvas.width,
    height: canvas.height,
    original: {
      file_size: bytes.length,
      width: upright.width,
      height: upright.height,
      format: CODECS[header.format].mime,
      frames: header.frames,
      orientation: header.orientation,
      colour: header.colour,
      alpha: header.hasAlpha,
      bit_depth: header.bitDepth,
      progressive: header.progressive,
    },
    placeholder: { thumbhash: btoa(String.fromCharCode(...hash)), data_url: thumbHashToDataURL(hash) },
    dominant_colour: dominantColour(preview),
  }
  return { facts, timings: { decode, transform: await clock.lap() } }
}

/** The upright image in sRGB, at most PREVIEW_SIDE px a side (a copy: the codec's memory is reused). */
async function previewOf(bytes: Uint8Array, header: ImageHeader): Promise<ImageData> {
  const upright = uprightSize(header)
  const geometry = planGeometry(upright.width, upright.height, { width: PREVIEW_SIDE, height: PREVIEW_SIDE, fit: 'inside', enlarge: false })
  const { width, height } = geometry.canvas
  if (!hasRowSource(header)) {
    // an animated WebP or PNG: its first frame decoded whole, as its conversion would
    const image = await decodeImage(bytes, header)
    const small = leanCodec(decoderMemoryCap()).resizeRgba(image, width, height, true)
    return new ImageData(small.data.slice(), width, height)
  }
  const scale = header.format === 'jpeg' || header.format === 'webp' ? decodeScale(geometry, 1) : 8
  const { lean, run } = leanPass(header)
  return run(() => {
    openSource(lean, bytes, header, scale)
    lean.colourRows()
    addTransforms(lean, header, geometry, [0, 0, 0, 0], [255, 255, 255], true)
    return lean.rowsToSample({ columns: [[0, width]], rows: [[0, height]] })
  })
}

/** The mean of the fullest of 4096 bins (16 levels a channel), weighted by alpha. */
function dominantColour({ data }: ImageData): string {
  const weight = new Float64Array(4096)
  const sums = new Float64Array(4096 * 3)
  for (let i = 0; i < data.length; i += 4) {
    const a = data[i + 3]!
    const bin = ((data[i]! >> 4) << 8) | ((data[i + 1]! >> 4) << 4) | (data[i + 2]! >> 4)
    weight[bin]! += a
    for (let c = 0; c < 3; c++) sums[bin * 3 + c]! += data[i + c]! * a
  }
  let best = 0
  for (let bin = 1; bin < weight.length; bin++) if (weight[bin]! > weight[best]!) best = bin
  if (weight[best] === 0) return '#000000'
  return `#${[0, 1, 2].map((c) => Math.round(sums[best * 3 + c]! / weight[best]!).toString(16).padStart(2, '0')).join('')}`
}

/**
 * format=json's answer: the facts as JSON, with the steps' times in Server-Timing (`decode`: header and preview,
 * `transform`: ThumbHash and colour).
 *
 * @example
 * return describedResponse(await describeImage(bytes, options, limits))
 */
export const describedResponse = ({ facts, timings }: Described): Response =>
  Response.json(facts, {
    headers: {
      'Server-Timing': Object.entries(timings).map(([name, ms]) => `${name};dur=${ms.toFixed(1)}`).join(', '),
      'Cache-Control': 'no-store',
    },
  })
