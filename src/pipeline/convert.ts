import { leanCodec, leanResidentMiB, type PaletteResult, releaseLeanMemory } from '../../wasm'
import { CODECS, type OutputFormat } from '../codecs/registry'
import { decoderMemoryCap, type EncodeSettings } from '../codecs/types'
import { ApiError } from '../errors'
import type { Limits } from '../env'
import { releaseBodyOf } from '../lib/body-buffer'
import { copyParts } from '../lib/bytes'
import { Stopwatch } from '../lib/stopwatch'
import { TryBudget } from '../lib/try-budget'
import { type AutoQuality, CHECK, chooseQuality, sampleSpansOf, settleQuality } from './auto-quality'
import { atQuality, decodeImage, encodeImage, transcode } from './codec'
import { convertFrames, flatGifMode } from './frames'
import { checkAlphaPlane, checkInput, hasRowSource, mayAnswerWithInput } from './limits'
import { inputAsAnswer, metadataFor, withMetadata } from './metadata'
import { chooseOutput, formatCandidates } from './negotiate'
import type { CompressOptions } from './options'
import { byteLength, type Encoded, joined, type Outcome } from './respond'
import { filtersOf } from './filters'
import { convertRows, pixelProbes, type RowsInput, sampleRows, scoreRows } from './rows'
import { keepFor, keptRequest, placeAuto, planTransforms } from './stages'
import { readHeader, uprightSize } from './sniff'
import { PendingBody } from './body'
import { mayStream, STREAM_HEAD_BYTES, streamsOnce } from './stream'
import { applyGeometry, fitToDecoded, flatten, type Geometry, hasTransparency, paddingColour, parseColour } from './transform'

/** One run of steps 4-6. */
interface Pass {
  output: Encoded | undefined
  size: { width: number; height: number }
  timings: Outcome['timings']
  colourConverted: boolean
  palette?: PaletteResult | undefined
  /** An animation's frames written (route `frames`). */
  frames?: number
  /** A sink that gave up: the parts it had written (RowsResult.spare). */
  spare?: Uint8Array[] | undefined
}

/** The share of CPU_LIMIT_MS a conversion's encodes may reach before max_bytes stops trying (parsing, answering). */
const CPU_SHARE = 0.8

/**
 * max_bytes, as imgproxy's: the quality given (or the format's default) is lowered, by bisection over the qualities
 * below it, to the highest whose answer fits `maxBytes`; each try is a full encode (at most 7 more), and the timings
 * add up. A lossless output cannot be lowered: 422 max_bytes_unreachable, as when quality 1 does not fit either.
 * Each try is expected to take as long as the longest so far; one that would take the conversion (`spentMs` before the
 * first pass, then every pass) past CPU_SHARE of `cpuLimitMs` is not started: the best fitting answer so far is the
 * answer, and without one, 422 max_bytes_unreachable (a 12 MP PNG's palette tries took 32 s in all, over cpu_ms).
 */
async function fitInto(
  maxBytes: number,
  format: OutputFormat,
  settings: EncodeSettings,
  first: Pass,
  encodeAt: (trial: EncodeSettings, giveUpAt: number | undefined) => Promise<Pass>,
  explicitLossless: boolean,
  { spentMs, cpuLimitMs }: { spentMs: number; cpuLimitMs: number },
): Promise<{ pass: Pass; quality: number }> {
  const fits = (pass: Pass) => pass.output !== undefined && byteLength(pass.output) <= maxBytes
  if (fits(first)) return { pass: first, quality: settings.quality }
  const unreachable = (why: string) => new ApiError('max_bytes_unreachable', `The ${format} answer cannot be made ${maxBytes} bytes or smaller: ${why}.`, { limit: maxBytes })
  // A PNG is fitted by its palette (lossy PNG): targets below the one given, or from 100 down after a lossless first try.
  const palette = format === 'png' && !explicitLossless ? { colours: settings.palette?.colours ?? 256, highest: settings.palette ? settings.palette.quality - 1 : 100 } : undefined
  if (!palette && (!CODECS[format].lossy || settings.lossless)) throw unreachable(`it is lossless and ${byteLength(first.output ?? [])} bytes`)
  const at = (quality: number): EncodeSettings =>
    palette ? { ...settings, lossless: false, quality, palette: { colours: palette.colours, quality } } : { ...settings, quality }
  const timings = { ...first.timings }
  const took = (pass: Pass) => pass.timings.decode + pass.timings.transform + pass.timings.encode
  const budget = new TryBudget(CPU_SHARE * cpuLimitMs, spentMs)
  budget.record(took(first))
  let best: { pass: Pass; quality: number } | undefined
  let smallest = byteLength(first.output ?? [])
  let outOfTime = false
  for (let low = 1, high = palette ? palette.highest : settings.quality - 1; low <= high; ) {
    if (budget.exhausted()) {
      outOfTime = true
      break
    }
    const quality = (low + high) >> 1
    // (no try gives up early once over maxBytes: a sink that stops part-way leaves its lean instance spent, and the
    // next try would take a new one beside it: 12 MP PNG palette tries measured 63 -> 77 MiB)
    const pass = await encodeAt(at(quality), undefined)
    budget.record(took(pass))
    for (const step of ['decode', 'transform', 'encode'] as const) timings[step] += pass.timings[step]
    smallest = Math.min(smallest, byteLength(pass.output ?? []))
    if (fits(pass)) {
      best = { pass, quality }
      low = quality + 1
    } else high = quality - 1
  }
  if (!best && outOfTime) throw unreachable(`the smallest of the qualities tried within the CPU limit (${cpuLimitMs} ms, CPU_LIMIT_MS) is ${smallest} bytes`)
  if (!best) throw unreachable(`at quality 1 it is ${smallest} bytes`)
  return { pass: { ...best.pass, timings }, quality: best.quality }
}

/**
 * Step 5 on whole pixels: crop, resize and pad to the canvas, then, for a format without alpha, flatten over the
 * background. Says whether the pixels had transparency (WebP's alpha plane depends on it).
 */
function toCanvas(
  image: ImageData,
  format: OutputFormat,
  geometry: Geometry,
  upright: { width: number; height: number },
  padding: [number, number, number, number],
  background: [number, number, number],
): { image: ImageData; transparent: boolean } {
  const canvas = applyGeometry(image, fitToDecoded(geometry, upright, image), padding)
  const transparent = hasTransparency(canvas)
  return { image: !CODECS[format].alpha && transparent ? flatten(canvas, background) : canvas, transparent }
}

/**
 * What a conversion starts from: the image's bytes (a view of the isolate's body buffer) or a body still to be read (a
 * PNG that one pass of the row pipeline converts is read as it arrives, anything else held), its options, the client's
 * Accept.
 */
export interface ConversionInput {
  bytes: Uint8Array | PendingBody
  options: CompressOptions
  /** The request's Accept header, for `format=auto`. */
  accept: string
  /** The client's file name, to name the answer. */
  filename?: string | undefined
}

/**
 * Steps 2-6 of the pipeline, for every route that converts (POST /api/compress, GET /img): sniff -> check limits and
 * choose the format and route -> decode -> transform -> encode (or, for a JPEG kept at its size, the three as one pass
 * of the lean codec) -> never-bigger. Runs inside the conversion slot and a lean session; everything before decode
 * works on header data only.
 *
 * @example
 * const outcome = await convertImage({ bytes, options, accept: c.req.header('accept') ?? '' }, limitsOf(c.env))
 */
export async function convertImage({ bytes: given, options, accept, filename }: ConversionInput, limits: Limits): Promise<Outcome> {
  // 1b. a body not yet read: its start, to sniff; all of it held unless it is a PNG that may be read as it arrives
  let body: PendingBody | undefined
  let bytes: Uint8Array
  if (given instanceof PendingBody) {
    const head = await given.head(STREAM_HEAD_BYTES)
    if (mayStream(head, options)) body = given
    bytes = body ? head : await given.all()
  } else bytes = given
  // (the file's size now: an AVIF's encode may give the body buffer back before the answer is made)
  const heldBytes = bytes.length

  // 2. sniff: format from magic bytes, dimensions and orientation from the header
  const sniffed = body ? { ...readHeader(bytes), streamed: true } : { ...readHeader(bytes), fileBytes: bytes.length }

  // 3. limits and plan: everything below is known before decoding (but a border to trim and gravity=auto's window,
  //    each a pass over the pixels first); format=auto takes the first candidate format whose plan fits the memory
  //    budget, counting the lean memory the isolate keeps
  checkInput(sniffed, limits)
  // the turn (EXIF, flip, rotate) composed into the header's orientation, trim and gravity into the geometry's crop
  // (trim=border's pass over the pixels counts as transform time; gravity=auto's, which makes the decode the conversion
  // reads where the plan keeps it, is timed with the step after it, the first pass or quality=auto's search: a lap of
  // its own yields to the event loop, which took 5 ms of a 12 MP JPEG's 60 ms conversion to 300 px in wrangler dev)
  const probeClock = new Stopwatch()
  const probes = pixelProbes(bytes)
  const transforms = planTransforms(sniffed, options, probes)
  const { header } = transforms
  const upright = uprightSize(header)
  // (gravity=auto's window moves the crop, not its size: the plan is made first, so that its pass can keep rows for it)
  const centred = { ...transforms.geometry, filters: filtersOf(options) }
  const { width: outWidth, height: outHeight } = centred.canvas
  const candidates = formatCandidates(options.format, header, accept, centred.canvas, options.animated)
  const choice = chooseOutput(candidates, header, centred, options, limits, leanResidentMiB(), keptRequest(transforms))
  const { format, plan } = choice
  let settings = choice.settings
  let memoryEstimate = choice.memoryEstimate
  // a plan that reads the file more than once (or its metadata) holds it: planned again with its size known
  if (body && !streamsOnce(plan, settings, options)) return convertImage({ bytes: await body.all(), options, accept, filename }, limits)
  if (choice.releaseLean) releaseLeanMemory()
  // what the answer carries besides pixels (metadata=none: nothing), from the input's header data (before gravity=auto's
  // pass, which converts the colours of what it keeps unless a profile travels with them)
  const metadata = await metadataFor(bytes, header, options.metadata)
  const { geometry: placed, chosen } = placeAuto(transforms, probes, keepFor(transforms, plan, !metadata.icc))
  const geometry = { ...placed, filters: centred.filters }
  const trimsBorder = options.trim !== undefined && 'border' in options.trim
  const probeMs = trimsBorder ? await probeClock.lap() : 0
  let untimed = transforms.auto && !trimsBorder ? probeClock : undefined
  /** The clock of the next step, which gravity=auto's pass, not timed on its own, is counted with. */
  const stepClock = (): Stopwatch => {
    const clock = untimed ?? new Stopwatch()
    untimed = undefined
    return clock
  }
  const background = parseColour(options.background)
  const padding = paddingColour(CODECS[format].alpha, background)

  // never bigger: same format, same pixels, and no smaller? the input itself (with the metadata the option keeps) is the better answer
  let unchanged = mayAnswerWithInput(plan)
  // An AVIF encoded once, and not the input's own answer, reads its input no more once its rows are in: the body buffer
  // goes back before libaom starts (a 41.7 MiB photo PNG's file is not held beside its state).
  const lastRead = format === 'avif' && !unchanged && !settings.autoQuality && options.max_bytes === undefined
  // what the row pipeline is built from, each time it runs (the encode, quality=auto's sample and check)
  // (gravity=auto's pass may have kept the source resized for the conversion: it is not decoded again)
  const rowsInput: RowsInput = {
    bytes, plan, geometry, background, metadata, kept: probes.kept,
    ...(body ? { streamed: { file: body.stream(), maxBytes: limits.maxStreamedInputBytes } } : {}),
    sourceClosed: lastRead && !body ? () => releaseBodyOf(bytes) : undefined,
  }
  const candidate = unchanged ? await inputAsAnswer(bytes, header, options.metadata, metadata) : bytes
  const candidateBytes = byteLength(candidate)

  // 4-6, at `trial` settings (max_bytes runs them again at lower qualities); the output carries its metadata
  const encodeAt = async (trial: EncodeSettings, giveUpAt: number | undefined): Promise<Pass> => {
    const clock = stepClock()
    let pass: Pass
    if (plan.route === 'frames') {
      // 4-6 frame by frame: each composited canvas through the row transforms into libwebp's animation encoder
      const animation = await convertFrames(bytes, header, plan, geometry, trial, background, clock)
      pass = { output: animation.output, size: { width: animation.width, height: animation.height }, timings: animation.timings, colourConverted: animation.colourConverted, frames: animation.frames }
    } else if (plan.route === 'rows') {
      // 4-6 as one row pipeline: source -> colours, turn, crop, resample, pad, flatten -> encoder (see convertRows)
      // (a sink that writes its file out as it goes stops once it is no smaller than the input: the answer is then the input)
      const rows = await convertRows(rowsInput, trial, memoryEstimate, limits, clock, giveUpAt)
      pass = { output: rows.output, spare: rows.spare, size: { width: rows.width, height: rows.height }, timings: rows.timings, colourConverted: rows.colourConverted, palette: rows.palette }
      memoryEstimate = rows.memoryEstimate
    } else if (plan.route !== 'pixels') {
      // 4-6 in one pass of the lean codec: a JPEG or WebP re-encoded at its own size (see planConversion)
      const same = await transcode(bytes, header, plan.route, trial, clock)
      pass = { output: same.output, size: { width: outWidth, height: outHeight }, timings: { decode: same.decodeMs, transform: 0, encode: same.encodeMs }, colourConverted: false }
    } else {
      // 4. decode, upright (the JPEG decoder applies EXIF orientation, scaled in the DCT when shrinking)
      let image = await decodeImage(bytes, header, plan.scale)
      const decodeMs = await clock.lap()

      // 5. transform: crop/resize/pad, then flatten alpha for formats without it; transparency known,
      //    the plan is checked again for WebP's alpha plane
      let transparent: boolean
      ;({ image, transparent } = toCanvas(image, format, geometry, upright, padding, background))
      memoryEstimate = checkAlphaPlane(plan, trial, transparent, memoryEstimate, limits)
      const transformMs = await clock.lap()

      // 6. encode
      const { bytes: output, palette } = await encodeImage(image, format, { ...trial, turbo: plan.turbo, trellisPasses: plan.trellisPasses })
      pass = { output, size: { width: image.width, height: image.height }, timings: { decode: decodeMs, transform: transformMs, encode: await clock.lap() }, colourConverted: false, palette }
    }
    if (pass.output !== undefined) pass.output = await withMetadata(pass.output, format, metadata)
    return pass
  }

  // quality=auto: the lowest quality whose sample of the output reaches the target score, before the encode
  let auto: AutoQuality | undefined
  let searchMs = 0
  if (settings.autoQuality) {
    const clock = stepClock()
    // (an input the row pipeline has no source for, an animated WebP or PNG, is decoded whole for it, as steps 4-5 will)
    const spans = sampleSpansOf(plan)
    const sample = hasRowSource(header)
      ? sampleRows(rowsInput, spans)
      : leanCodec(decoderMemoryCap()).sampleOf(toCanvas(await decodeImage(bytes, header, plan.scale), format, geometry, upright, padding, background).image, spans)
    auto = await chooseQuality(sample, format, settings, plan, limits.cpuLimitMs)
    settings = atQuality(settings, auto.quality)
    searchMs = await clock.lap()
  }

  // an animated GIF of flat colour (few bytes a pixel), quality and lossless not given: lossless where its first frame is smaller so
  if (plan.route === 'frames' && options.quality === undefined && options.lossless === undefined && !settings.fitTo) {
    const clock = stepClock()
    const mode = await flatGifMode(bytes, header, plan, geometry, settings, background, memoryEstimate, limits)
    ;({ settings } = mode)
    memoryEstimate = Math.max(memoryEstimate, mode.estimateMiB)
    searchMs += await clock.lap()
  }

  // (with max_bytes the sink never gives up early: the input may be over the target too)
  let pass = await encodeAt(settings, unchanged && options.max_bytes === undefined ? candidateBytes : undefined)
  // quality=auto: the answer scored whole against the rows it came from, encoded again where it misses the target
  if (auto && plan.checkWhole && pass.output !== undefined) {
    const clock = new Stopwatch()
    const budget = new TryBudget(CHECK.share * limits.cpuLimitMs, searchMs)
    let carried = pass.timings.decode + pass.timings.transform + pass.timings.encode // the first try's encode
    let checkMs = 0
    const scoreOf = async ({ output }: Pass) => {
      const score = await scoreRows(rowsInput, joined(output!))
      const lap = await clock.lap()
      budget.record(carried + lap)
      checkMs += lap
      carried = 0
      return score
    }
    // (a check that fails, say out of memory, leaves the answer and the sample's score as they were)
    try {
      const settled = await settleQuality({ quality: auto.quality, pass, sample: auto }, settings.autoQuality!, scoreOf, (q) => encodeAt(atQuality(settings, q), undefined), () => budget.exhausted())
      // every try's encode is in checkMs: the answer's timings are the first pass's
      pass = { ...settled.pass, timings: pass.timings }
      auto = { quality: settled.quality, score: settled.score }
      settings = atQuality(settings, settled.quality)
    } catch (error) {
      console.error(`quality=auto's check failed: ${(error as Error)?.message}`)
    }
    searchMs += checkMs
  }
  let quality = settings.quality
  if (options.max_bytes !== undefined) ({ pass, quality } = await fitInto(options.max_bytes, format, settings, pass, encodeAt, options.lossless === true, { spentMs: searchMs, cpuLimitMs: limits.cpuLimitMs }))
  const { output, size, palette } = pass
  // quality=auto's search (sample, trial encodes, scores) and a flat GIF's probe count as encoding
  const timings = { ...pass.timings, transform: pass.timings.transform + probeMs, encode: pass.timings.encode + searchMs }
  if (pass.colourConverted) unchanged = false

  const original = output === undefined || (unchanged && byteLength(output) >= candidateBytes)
  // The input as the answer (views of the isolate's body buffer, which the next conversion reuses) is copied out in
  // parts, into those of the file a sink gave up on where there are some.
  const answer = original || output === undefined ? copyParts(candidate, pass.spare) : output

  return {
    bytes: answer,
    format,
    input: { format: header.format, bytes: body ? await body.finish() : heldBytes, ...uprightSize(sniffed) },
    crop: chosen,
    output: size,
    original,
    frames: pass.frames ?? 1,
    framesDropped: pass.frames !== undefined ? 0 : Math.max(0, header.frames - 1),
    timings,
    effort: settings.effort,
    quality: options.max_bytes !== undefined || auto ? quality : undefined,
    score: auto && quality === auto.quality ? auto.score : undefined,
    palette,
    memoryEstimateMiB: Math.round(memoryEstimate),
    vary: options.format === 'auto' || options.response === undefined,
    filename,
  }
}
