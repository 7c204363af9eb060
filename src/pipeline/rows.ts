import { detectFaces, type KeptRows, type LeanCodec, type PaletteResult, type SampleSpans, type StreamedFile } from '../../wasm'
import { avifSettings } from '../codecs/avif'
import { leanJpegSettings } from '../codecs/jpeg'
import { pngSettings } from '../codecs/png'
import { CODECS, type OutputFormat } from '../codecs/registry'
import { libwebpSettings } from '../codecs/webp'
import { DecodeFailure, type EncodeSettings } from '../codecs/types'
import type { Limits } from '../env'
import type { Stopwatch } from '../lib/stopwatch'
import { decodeImage, leanPass } from './codec'
import { answerStreams, checkAlphaPlane, type ConversionPlan, hasRowSource } from './limits'
import type { Metadata } from './metadata'
import type { Encoded } from './respond'
import type { Rect } from './orientation'
import { type ImageHeader, readHeader, uprightSize } from './sniff'
import { addFilters } from './filters'
import { faceWindow } from './faces'
import { bestWindow, PREVIEW_SIDE } from './smartcrop'
import { type PixelProbes, previewScale } from './stages'
import { fitToDecoded, type Geometry, hasTransparency, paddingColour } from './transform'

export interface RowsResult {
  /** Undefined when the sink gave up at `giveUpAt` bytes (never-bigger: the input is the answer). */
  output: Encoded | undefined
  /** When the sink gave up: the parts it had written, room for the answer (copyParts). */
  spare?: Uint8Array[]
  width: number
  height: number
  /** Lossy PNG: the palette's size and the quality it reached. */
  palette?: PaletteResult | undefined
  /** The source's colours were converted to sRGB (its profile was not sRGB's): the input is then never the answer. */
  colourConverted: boolean
  /** The memory estimate, raised when a lossy WebP turned out to need its alpha plane. */
  memoryEstimate: number
  timings: { decode: number; transform: number; encode: number }
}

/**
 * What a row pipeline is built from (buildRows): the input, the plan and geometry for it (the input's header is the
 * plan's), the background that flattens or pads it and the metadata that decides its colours. One per conversion;
 * convertRows, sampleRows and scoreRows each build the same rows from it.
 */
export interface RowsInput {
  bytes: Uint8Array
  plan: ConversionPlan
  geometry: Geometry
  background: [number, number, number]
  metadata: Metadata
  /** A PNG read as it arrives (`bytes` is then only its start): its rows can be pulled once, by convertRows. */
  streamed?: { file: StreamedFile; maxBytes: number }
  /** For an AVIF: what to do once the source is closed and before libaom starts (nothing reads the input again). */
  sourceClosed?: (() => void) | undefined
  /** The source resized already by gravity=auto's pass (pixelProbes), and its window: read in place of decoding it again. */
  kept?: KeptWindow | undefined
}

/**
 * What gravity=auto's pass keeps for the conversion (ConversionPlan.kept): the region to crop from, decoded, its colours
 * converted as the conversion converts them, and resized as the crop is resized; the window placed in its pixels.
 */
export interface KeptWindow {
  rows: KeptRows
  window: Rect
  /** The colours were converted to sRGB on the way (as addColourAndTransforms would have). */
  colourConverted: boolean
}

/**
 * Steps 4-6 as one row pipeline in the lean codec (wasm/lean/pipeline.c), for the plans whose route is
 * `rows`: the source (a JPEG at its DCT scale, a PNG, a still WebP, a GIF's first frame, an AVIF), its colours to sRGB
 * (an ICC profile, PNG gAMA/cHRM or AVIF nclx; CMYK inside the JPEG source), then the EXIF turn, the crop, the
 * Lanczos3 resample, the padding and, for a format without alpha, the flattening, then the sink. Rows
 * are pulled through one at a time, so what is held is what the stages hold, not whole images. The
 * sink is MozJPEG, libwebp, the PNG writer (libdeflate; it reads the rows twice, so the pipeline is built twice) or
 * libavif + libaom (which takes the rows a band of 64 at a time). Decoding and encoding interleave, so the time from
 * the first row to the output is `encode`; `decode` is reading the headers (and a lossy WebP's or an AVIF's planes).
 *
 * @example
 * const input = { bytes, plan, geometry, background: [255, 255, 255], metadata: {} }
 * const { output } = await convertRows(input, settings, estimate, limits, clock, bytes.length)
 */
export async function convertRows(
  input: RowsInput,
  settings: EncodeSettings,
  memoryEstimate: number,
  limits: Limits,
  clock: Stopwatch,
  giveUpAt = Number.POSITIVE_INFINITY,
): Promise<RowsResult> {
  const { plan } = input
  const { lean, run } = leanPass(plan.header)
  const format = plan.format
  let colourConverted = false
  const build = () => {
    colourConverted = buildRows(lean, input)
  }

  if (input.streamed) {
    const { file, maxBytes } = input.streamed
    await run(() => lean.rowsFromPngStream(file, maxBytes, plan.header.width, plan.header.height))
    run(() => (colourConverted = addColourAndTransforms(lean, input)))
  } else run(build)
  // Converted colours are other pixels: the sink must not give up for the input's sake.
  if (colourConverted) giveUpAt = Number.POSITIVE_INFINITY
  const decode = await clock.lap()
  const { width, height } = lean.rowsSize()
  // PNG's sink reads the rows twice: what they hold (a palette? grey? alpha?), then the file in that layout; a lossy
  // PNG reads them for its palette first, takes the layout from the palette, and maps them to it as they are written.
  let palette: PaletteResult | undefined
  if (format === 'png') run(() => (palette = lean.preparePng(build, settings.palette)))
  if (format === 'avif') run(() => lean.setAvifMetadata(input.metadata))
  // Our lossless WebP coder reads the rows three times (sink_webpll.c), so it builds the pipeline again itself.
  const output = plan.streamedLossless
    ? run(() => lean.rowsToWebpLossless(build, settings.effort))
    : await run(() => encodeRows(lean, format, settings, plan, giveUpAt, (transparent) => {
        memoryEstimate = checkAlphaPlane(plan, settings, transparent, memoryEstimate, limits)
      }, input.sourceClosed))
  const spare = output === undefined ? lean.takeSpareParts() : undefined
  return { output, spare, width, height, colourConverted, palette, memoryEstimate, timings: { decode, transform: 0, encode: await clock.lap() } }
}

/**
 * quality=auto's sample (src/pipeline/auto-quality.ts): the rows convertRows would encode, read once by the sample sink
 * (wasm/lean/score.c) at the spans sampleSpansOf chose: the output itself when it is small, else full-resolution tiles.
 *
 * @example
 * const sample = sampleRows(input, sampleSpansOf(input.plan))
 */
export function sampleRows(input: RowsInput, spans: SampleSpans): ImageData {
  const { lean, run } = leanPass(input.plan.header)
  return run(() => {
    buildRows(lean, input)
    return lean.rowsToSample(spans)
  })
}

/**
 * quality=auto's check (src/pipeline/auto-quality.ts, settleQuality): SSIMULACRA 2 of the whole answer against the rows
 * convertRows encoded it from, built again, read a row of each at a time by the score sink (wasm/lean/score.c); with
 * `alpha`, over a dark and a light background, the lower. The answer is a row source of its own (a JPEG's rows, a WebP's
 * or an AVIF's planes) beside the input's, unless the two need the same decoder (`answerStreams`): it is then decoded
 * whole first.
 *
 * @example
 * const score = await scoreRows(input, answer)
 */
export async function scoreRows(input: RowsInput, answer: Uint8Array): Promise<number> {
  const { plan } = input
  const { header } = plan
  const answerHeader = { ...readHeader(answer), fileBytes: answer.length }
  const { lean, run } = leanPass(header)
  const alpha = CODECS[plan.format].alpha && answerHeader.hasAlpha !== false
  // (the answer's file is held beside the input's, which the conversion copied in once, and freed after)
  lean.holdFile(answer)
  try {
    if (answerStreams(header.format, plan.format)) {
      return run(() => {
        openSource(lean, answer, answerHeader, 8)
        lean.rowsAside()
        buildRows(lean, input)
        return lean.rowsScoreAside(alpha)
      })
    }
    const decoded = await decodeImage(answer, answerHeader)
    const transparent = alpha && hasTransparency(decoded)
    return run(() => {
      buildRows(lean, input)
      return lean.rowsScore(decoded, transparent)
    })
  } finally {
    lean.dropHeld()
  }
}

/**
 * The source, its colours to sRGB and the transforms, for the plan's output; returns whether the colours were converted.
 * A kept profile (metadata=keep) travels with the pixels in its colours; otherwise they become sRGB.
 */
function buildRows(lean: LeanCodec, input: RowsInput): boolean {
  const { kept } = input
  // (kept rows are read where this pass has the instance that kept them: a conversion outside a lean session has not)
  if (kept && lean.holds(kept.rows)) {
    lean.rowsFromKept(kept.rows)
    lean.cropRows(kept.window)
    const keepsAlpha = CODECS[input.plan.format].alpha
    addAfterCrop(lean, input.geometry, paddingColour(keepsAlpha, input.background), input.background, keepsAlpha)
    return kept.colourConverted
  }
  openSource(lean, input.bytes, input.plan.header, input.plan.scale)
  return addColourAndTransforms(lean, input)
}

/** buildRows after the source: its colours to sRGB and the transforms. */
function addColourAndTransforms(lean: LeanCodec, { plan, geometry, background, metadata }: RowsInput): boolean {
  const { header } = plan
  const keepsAlpha = CODECS[plan.format].alpha
  const converted = metadata.icc ? false : lean.colourRows()
  addTransforms(lean, header, geometry, paddingColour(keepsAlpha, background), background, keepsAlpha)
  return converted
}

/**
 * What trim=border and gravity=auto read of the pixels (src/pipeline/stages.ts), each a pass of its own over the turned
 * image before the conversion: the border's box at full size (op_trim.c's sink), gravity=auto's preview (PREVIEW_SIDE
 * on its longer side) scored by smartcrop.ts. Where the plan keeps rows for the conversion (`keep`, ConversionPlan.kept),
 * the pass is the conversion's own start: the region decoded at the plan's scale, its colours converted, resized as the
 * crop will be; it keeps those rows in the lean memory (`kept`), makes the preview from them (block means, op_shrink.c,
 * then Lanczos3) and places the window in their pixels, so that the conversion only cuts it out. Otherwise the preview
 * is a decode of its own (a JPEG at the smallest DCT scale that leaves enough, a WebP shrunk by libwebp).
 *
 * @example
 * const probes = pixelProbes(bytes)
 * const { geometry } = placeAuto(planTransforms(header, options, probes), probes, keep)
 * const input = { bytes, plan, geometry, background, metadata, kept: probes.kept }
 */
export function pixelProbes(bytes: Uint8Array): PixelProbes & { kept?: KeptWindow } {
  const probes: PixelProbes & { kept?: KeptWindow } = {
    borderBox(header, tolerance) {
      // (an animated WebP or PNG, decoded whole by its route, has no row source to probe: it keeps its whole box)
      if (!hasRowSource(header)) return { x: 0, y: 0, ...uprightSize(header) }
      const { lean, run } = leanPass(header)
      return run(() => {
        openSource(lean, bytes, header, 8)
        lean.orientRows(header.orientation)
        return lean.rowsBorderBox(tolerance)
      })
    },
    smartCrop(header, region, width, height, keep, faces = false) {
      if (!hasRowSource(header)) return { x: Math.floor((region.width - width) / 2), y: Math.floor((region.height - height) / 2) }
      const { lean, run } = leanPass(header)
      if (!keep) {
        const preview = run(() => {
          openRegion(lean, bytes, header, previewScale(header, region), region)
          return previewOfRows(lean)
        })
        return placeOn(lean, preview, region, width, height, faces)
      }
      const { rows, colourConverted, preview } = run(() => {
        const colourConverted = openRegion(lean, bytes, header, keep.scale, region, keep.colour)
        if (keep.resized) lean.resizeRows(keep.resized.size.width, keep.resized.size.height)
        const rows = lean.rowsToKept()
        lean.rowsFromKept(rows)
        return { rows, colourConverted, preview: previewOfRows(lean) }
      })
      // the window in the kept pixels: the output's size where they are resized, the crop's at the decode's scale else
      const fx = rows.width / region.width
      const fy = rows.height / region.height
      const window = keep.resized?.window ?? { width: Math.min(rows.width, Math.round(width * fx)), height: Math.min(rows.height, Math.round(height * fy)) }
      const at = placeOn(lean, preview, rows, window.width, window.height, faces)
      probes.kept = { rows, window: { ...at, ...window }, colourConverted }
      return scaledBack(at, fx, fy, region, width, height)
    },
  }
  return probes
}

/** The source at `scale`, its colours to sRGB where `colour` (returns whether that converted them), turned and cut to `region`. */
function openRegion(lean: LeanCodec, bytes: Uint8Array, header: ImageHeader, scale: number, region: Rect, colour = false): boolean {
  openSource(lean, bytes, header, scale)
  const converted = colour ? lean.colourRows() : false
  lean.orientRows(header.orientation)
  const { crop } = fitToDecoded({ crop: region, resize: region, canvas: region }, uprightSize(header), lean.rowsSize())
  lean.cropRows(crop)
  return converted
}

/**
 * The top-left corner of gravity=auto's `width` x `height` window in `area`, of which `preview` is a smaller picture:
 * the lean codec's saliency map of the preview (op_saliency.c), the window found on it (smartcrop.ts); with `faces`
 * (gravity=face), centred on the faces the detector finds in the preview (faces.ts), where it finds any.
 */
function placeOn(lean: LeanCodec, preview: ImageData, area: { width: number; height: number }, width: number, height: number, faces: boolean): { x: number; y: number } {
  const fx = preview.width / area.width
  const fy = preview.height / area.height
  const w = Math.round(width * fx)
  const h = Math.round(height * fy)
  const onFaces = faces ? faceWindow(detectFaces(preview), preview.width, preview.height, w, h) : undefined
  const best = onFaces ?? bestWindow(lean.saliency(preview), preview.width, preview.height, w, h)
  return scaledBack(best, fx, fy, area, width, height)
}

/** A window's corner found in pixels `fx` x `fy` times the size of `area`'s, in `area`'s, the `width` x `height` window inside it. */
function scaledBack(at: { x: number; y: number }, fx: number, fy: number, area: { width: number; height: number }, width: number, height: number): { x: number; y: number } {
  return {
    x: Math.max(0, Math.min(area.width - width, Math.round(at.x / fx))),
    y: Math.max(0, Math.min(area.height - height, Math.round(at.y / fy))),
  }
}

/** The rows built so far as gravity=auto's preview, PREVIEW_SIDE on the longer side: the means of blocks while they are twice that, then Lanczos3. */
function previewOfRows(lean: LeanCodec): ImageData {
  const { width, height } = lean.rowsSize()
  const long = Math.max(width, height)
  let factor = 1
  // (op_shrink.c adds up at most 16 x 16 pixels a block)
  while (factor < 16 && long / (factor * 2) >= PREVIEW_SIDE) factor *= 2
  if (factor > 1) lean.shrinkRows(factor)
  const f = Math.min(1, PREVIEW_SIDE / long)
  lean.resizeRows(Math.max(1, Math.round(width * f)), Math.max(1, Math.round(height * f)))
  const image = lean.rowsToRgba()
  return new ImageData(image.data.slice(), image.width, image.height)
}

/** The row source for an input: a JPEG at its DCT scale, a PNG, a GIF's first frame, an AVIF, a still WebP at its rescale. */
export function openSource(lean: LeanCodec, bytes: Uint8Array, header: ImageHeader, scale: number): void {
  if (header.format === 'jpeg') {
    lean.rowsFromJpeg(bytes, scale)
  } else if (header.format === 'png') {
    lean.rowsFromPng(bytes, header.width, header.height)
  } else if (header.format === 'gif') {
    lean.rowsFromGif(bytes, header.width, header.height)
  } else if (header.format === 'avif') {
    lean.rowsFromAvif(bytes, header.width, header.height)
  } else {
    const { width, height } = lean.openWebp(bytes)
    // Checked before a pixel is allocated: the limits trusted the header's size.
    if (width !== header.width || height !== header.height) {
      throw new DecodeFailure(`the image is ${header.width}x${header.height} but its bitstream is ${width}x${height}`)
    }
    lean.rowsFromWebp(Math.ceil((width * scale) / 8), Math.ceil((height * scale) / 8))
  }
}

/**
 * The transforms after the source, as the geometry asks for them: the turn (EXIF, rotate and flip in one), the crop (trim
 * and gravity in one window), the Lanczos3 resample, the filters (sharpen or blur, colour adjustments), the padding and, for a format without alpha, the flattening (also each frame of an animation's, src/pipeline/frames.ts).
 */
export function addTransforms(
  lean: LeanCodec,
  header: ImageHeader,
  geometry: Geometry,
  padding: readonly [number, number, number, number],
  background: readonly [number, number, number],
  keepsAlpha: boolean,
): void {
  lean.orientRows(header.orientation)
  const decoded = lean.rowsSize()
  const { crop, resize, canvas } = fitToDecoded(geometry, uprightSize(header), decoded)
  lean.cropRows(crop)
  addAfterCrop(lean, { resize, canvas, filters: geometry.filters }, padding, background, keepsAlpha)
}

/** addTransforms after the crop (also after gravity=auto's kept window, which may still be larger than the output). */
function addAfterCrop(
  lean: LeanCodec,
  { resize, canvas, filters }: Omit<Geometry, 'crop'>,
  padding: readonly [number, number, number, number],
  background: readonly [number, number, number],
  keepsAlpha: boolean,
): void {
  lean.resizeRows(resize.width, resize.height)
  addFilters(lean, filters)
  lean.padRows(canvas.width, canvas.height, padding)
  if (!keepsAlpha) lean.flattenRows(background)
}

/**
 * The lean sinks (MozJPEG, or libjpeg-turbo's behaviour with its coefficients buffered or not, and a WebP in low-memory mode, as the plan says); `checkAlpha` hears, before a lossy WebP is
 * encoded, whether it needs an alpha plane. The PNG writer, which writes its file out as it goes, stops at `giveUpAt` bytes (undefined).
 */
async function encodeRows(
  lean: LeanCodec,
  format: OutputFormat,
  settings: EncodeSettings,
  { turbo, trellisPasses, bufferedJpeg: buffered, lowMemoryWebp: lowMemory }: ConversionPlan,
  giveUpAt: number,
  checkAlpha: (transparent: boolean) => void,
  sourceClosed?: () => void,
): Promise<Encoded | undefined> {
  if (format === 'jpeg') return lean.rowsToJpeg(leanJpegSettings({ ...settings, turbo, trellisPasses }, buffered))
  if (format === 'png') return lean.rowsToPng(pngSettings(settings.effort), giveUpAt)
  if (format === 'avif') return lean.rowsToAvif(avifSettings(settings, lean.rowsSize().alpha), sourceClosed)
  if (format !== 'webp') throw new Error(`no lean sink for ${format}`)
  const { width, height } = lean.rowsSize()
  // Lossy: the plan chose low-memory mode or not; lossless keeps the whole-image encoder's rule.
  const webp = libwebpSettings(settings, settings.lossless ? width * height : 0, lowMemory)
  const { transparent } = await lean.rowsToWebpPicture(webp.lossless)
  checkAlpha(transparent && !webp.lossless)
  return lean.encodeWebp(webp.quality, webp.method, webp.lowMemory, webp.lossless)
}
