import { leanResidentMiB, releaseLeanMemory } from '../../wasm'
import { CODECS } from '../codecs/registry'
import type { Limits } from '../env'
import { takeBodyBuffer } from '../lib/body-buffer'
import { Stopwatch } from '../lib/stopwatch'
import { decodeImage, encodeImage, transcode } from './codec'
import { checkAlphaPlane, checkInput, mayAnswerWithInput } from './limits'
import { inputAsAnswer, metadataFor, withMetadata } from './metadata'
import { chooseOutput, formatCandidates } from './negotiate'
import type { CompressOptions } from './options'
import { byteLength, type Encoded, type Outcome } from './respond'
import { convertRows } from './rows'
import { readHeader, uprightSize } from './sniff'
import { applyGeometry, fitToDecoded, flatten, hasTransparency, paddingColour, parseColour, planGeometry } from './transform'

/** What a conversion starts from: the image's bytes (a view of the isolate's body buffer), its options, the client's Accept. */
export interface ConversionInput {
  bytes: Uint8Array
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
export async function convertImage({ bytes, options, accept, filename }: ConversionInput, limits: Limits): Promise<Outcome> {
  // 2. sniff: format from magic bytes, dimensions and orientation from the header
  const header = { ...readHeader(bytes), fileBytes: bytes.length }
  const upright = uprightSize(header)

  // 3. limits and plan: everything below is known before decoding; format=auto takes the first
  //    candidate format whose plan fits the memory budget, counting the lean memory the isolate keeps
  checkInput(header, limits)
  const geometry = planGeometry(upright.width, upright.height, options)
  const { width: outWidth, height: outHeight } = geometry.canvas
  const candidates = formatCandidates(options.format, header, accept, geometry.canvas)
  const choice = chooseOutput(candidates, header, geometry, options, limits, leanResidentMiB())
  const { format, settings, plan } = choice
  let memoryEstimate = choice.memoryEstimate
  if (choice.releaseLean) releaseLeanMemory()
  const background = parseColour(options.background)
  const padding = paddingColour(CODECS[format].alpha, background)

  // what the answer carries besides pixels (metadata=none: nothing), from the input's header data
  const metadata = await metadataFor(bytes, header, options.metadata)

  // never bigger: same format, same pixels, and no smaller? the input itself (with the metadata the option keeps) is the better answer
  let unchanged = mayAnswerWithInput(plan)
  const candidate = unchanged ? await inputAsAnswer(bytes, header, options.metadata, metadata) : bytes
  const candidateBytes = byteLength(candidate)

  const clock = new Stopwatch()
  let output: Encoded | undefined
  let size = { width: outWidth, height: outHeight }
  let timings: Outcome['timings']
  if (plan.route === 'rows') {
    // 4-6 as one row pipeline: source -> turn, crop, resample, pad, flatten -> encoder (see convertRows)
    // (a sink that writes its file out as it goes stops once it is no smaller than the input: the answer is then the input)
    const pass = await convertRows(bytes, header, plan, geometry, settings, background, memoryEstimate, limits, clock, unchanged ? candidateBytes : undefined, metadata)
    output = pass.output
    if (pass.colourConverted) unchanged = false
    size = { width: pass.width, height: pass.height }
    memoryEstimate = pass.memoryEstimate
    timings = pass.timings
  } else if (plan.route !== 'pixels') {
    // 4-6 in one pass of the lean codec: a JPEG or WebP re-encoded at its own size (see planConversion)
    const pass = await transcode(bytes, header, plan.route, settings, clock)
    output = pass.output
    timings = { decode: pass.decodeMs, transform: 0, encode: pass.encodeMs }
  } else {
    // 4. decode, upright (the JPEG decoder applies EXIF orientation, scaled in the DCT when shrinking)
    let image = await decodeImage(bytes, header, plan.scale)
    const decodeMs = await clock.lap()

    // 5. transform: crop/resize/pad, then flatten alpha for formats without it; transparency known,
    //    the plan is checked again for WebP's alpha plane
    image = applyGeometry(image, fitToDecoded(geometry, upright, image), padding)
    const transparent = hasTransparency(image)
    if (!CODECS[format].alpha && transparent) image = flatten(image, background)
    memoryEstimate = checkAlphaPlane(plan, settings, transparent, memoryEstimate, limits)
    const transformMs = await clock.lap()

    // 6. encode
    output = await encodeImage(image, format, { ...settings, turbo: plan.turbo })
    size = { width: image.width, height: image.height }
    timings = { decode: decodeMs, transform: transformMs, encode: await clock.lap() }
  }

  if (output !== undefined) output = await withMetadata(output, format, metadata)
  const original = output === undefined || (unchanged && byteLength(output) >= candidateBytes)
  // The body is a view of the isolate's body buffer, which the next conversion would reuse: the answer (the input, or
  // views of it without its metadata) takes the buffer.
  if (output === undefined || original) takeBodyBuffer(bytes)
  const answer = output === undefined || original ? candidate : output

  return {
    bytes: answer,
    format,
    input: { format: header.format, bytes: bytes.length, width: upright.width, height: upright.height },
    output: size,
    original,
    framesDropped: Math.max(0, header.frames - 1),
    timings,
    effort: settings.effort,
    memoryEstimateMiB: Math.round(memoryEstimate),
    vary: options.format === 'auto' || options.response === undefined,
    filename,
  }
}
