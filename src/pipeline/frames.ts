import { leanResidentMiB } from '../../wasm'
import { animationEffort, libwebpSettings } from '../codecs/webp'
import type { EncodeSettings } from '../codecs/types'
import type { Limits } from '../env'
import { Stopwatch } from '../lib/stopwatch'
import { leanPass } from './codec'
import { type ConversionPlan, estimateMiB, isFlatGif } from './limits'
import { byteLength } from './respond'
import { addTransforms, convertRows } from './rows'
import type { ImageHeader } from './sniff'
import { type Geometry, paddingColour } from './transform'

export interface FramesResult {
  output: Uint8Array
  width: number
  height: number
  /** Frames written (every frame of the input). */
  frames: number
  /** The frames' colours were converted to sRGB (an animated WebP with an ICC profile): the input is then never the answer. */
  colourConverted: boolean
  timings: { decode: number; transform: number; encode: number }
}

/**
 * Steps 4-6 for an animation into an animated WebP (route `frames`, src/pipeline/limits.ts): each frame of a GIF or an
 * animated WebP, composited on the whole canvas as a viewer shows it (wasm/lean/frames.c), goes through the row
 * pipeline's colour stage (an ICC profile to sRGB) and transforms (the turn, crop, Lanczos3, padding; rows.ts) into libwebp's animation encoder, one frame at a
 * time, with the frame's delay; the loop count is kept (a GIF's NETSCAPE count N plays N + 1 times, as browsers play it).
 * What is held is the frame source's canvas (and a GIF's rectangle under a frame it restores), the encoder's canvases
 * and the frames it keeps to choose between, never every frame.
 *
 * @example
 * const { output, frames } = await convertFrames(bytes, header, plan, geometry, settings, [255, 255, 255], clock)
 */
export async function convertFrames(
  bytes: Uint8Array,
  header: ImageHeader,
  plan: ConversionPlan,
  geometry: Geometry,
  settings: EncodeSettings,
  background: [number, number, number],
  clock: Stopwatch,
): Promise<FramesResult> {
  const { lean, run } = leanPass(header)
  const format = header.format === 'gif' ? 'gif' : 'webp'
  const source = run(() => lean.openFrames(bytes, format, header.width, header.height))
  const loop = format === 'gif' ? gifLoopAsWebp(header.loop) : source.loop
  const webp = libwebpSettings(settings, plan.width * plan.height)
  run(() => lean.startAnimation(plan.width, plan.height, loop, webp))
  const decode = await clock.lap()
  const padding = paddingColour(true, background)
  let timestamp = 0
  let frames = 0
  let colourConverted = false
  for (;;) {
    const duration = run(() => lean.nextFrame())
    if (duration < 0) break
    run(() => {
      lean.rowsFromFrame()
      // an animated WebP's ICC profile: its colours to sRGB, as a still's (a GIF's are sRGB)
      colourConverted = lean.colourRows() || colourConverted
      addTransforms(lean, header, geometry, padding, background, true)
      lean.rowsToFrame(timestamp)
    })
    timestamp += duration
    frames++
  }
  const output = run(() => lean.finishAnimation(timestamp))
  return { output, width: plan.width, height: plan.height, frames, colourConverted, timings: { decode, transform: 0, encode: await clock.lap() } }
}

/**
 * A GIF's NETSCAPE loop count as WebP's: absent, the GIF plays once (1); 0 is forever in both; N more repeats play
 * N + 1 times in browsers, which is WebP's count (capped at its 16 bits).
 */
export const gifLoopAsWebp = (loop: number | undefined): number => (loop === undefined ? 1 : loop === 0 ? 0 : Math.min(65535, loop + 1))

/**
 * A flat-colour GIF is better as a lossless animated WebP: on three such GIFs lossy WebP at quality 80 came to 0.82-1.14x
 * the GIF's bytes, lossless to 0.53-0.80x with every pixel exact. Whether this one is: its first frame, through the row
 * pipeline, encoded both ways; the smaller decides for every frame. Only where both lossless plans fit the memory budget;
 * returns the settings and the plan's estimate.
 *
 * @example
 * ;({ settings } = await flatGifMode(bytes, header, plan, geometry, settings, background, estimate, limits))
 */
export async function flatGifMode(
  bytes: Uint8Array,
  header: ImageHeader,
  plan: ConversionPlan,
  geometry: Geometry,
  settings: EncodeSettings,
  background: [number, number, number],
  memoryEstimate: number,
  limits: Limits,
): Promise<{ settings: EncodeSettings; estimateMiB: number }> {
  const kept = { settings, estimateMiB: memoryEstimate }
  if (!isFlatGif(header) || settings.lossless || settings.autoQuality) return kept
  // the first frame alone, as the row pipeline converts a still
  const firstFrame = { ...plan, route: 'rows' as const }
  const estimate = Math.max(estimateMiB({ ...plan, lossless: true }, leanResidentMiB()), estimateMiB({ ...firstFrame, lossless: true }, leanResidentMiB()))
  if (estimate > limits.memoryBudgetMiB) return kept
  const lossless = { ...settings, lossless: true, effort: animationEffort(settings.effort, true, plan.width * plan.height * header.frames) }
  const input = { bytes, plan: firstFrame, geometry, background, metadata: {} }
  const size = async (trial: EncodeSettings) => byteLength((await convertRows(input, trial, memoryEstimate, limits, new Stopwatch())).output ?? [])
  return (await size(lossless)) < (await size(settings)) ? { settings: lossless, estimateMiB: Math.max(memoryEstimate, estimate) } : kept
}
