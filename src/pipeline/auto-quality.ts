import { leanCodec, type SampleSpans } from '../../wasm'
import { CODECS, type OutputFormat } from '../codecs/registry'
import { decoderMemoryCap, type EncodeSettings } from '../codecs/types'
import { Stopwatch } from '../lib/stopwatch'
import { TryBudget } from '../lib/try-budget'
import { atQuality, decodeImage, encodeImage } from './codec'
import { readHeader } from './sniff'
import { hasTransparency } from './transform'

/**
 * quality=auto's sample (wasm/lean/score.c makes it): the output itself when neither side is over 576 px, else tiles of
 * 192 px (3 per side over 576 px) taken at even steps across it, at full resolution: at most 0.33 MP however large the
 * output. Each tile is encoded and scored on its own and the worst tile's score counts: a mosaic of them encoded as
 * one image scored WebP's seams, not its pixels (20 points below the whole image's score), while the worst separate
 * tile is within about 2 points of the whole image's score for JPEG, WebP and AVIF alike (docs/notes/benchmarks.md item 27).
 */
export const SAMPLE = { tile: 192, count: 3 } as const

/** Where tiles of the sample lie along one axis of the output: (start, length). */
export type Span = SampleSpans['columns'][number]

/**
 * The sample's spans along an axis of `length` px: the whole axis when it is at most SAMPLE.count tiles long, else
 * SAMPLE.count tiles of SAMPLE.tile px at even steps from end to end.
 *
 * @example
 * sampleSpans(500) // [[0, 500]]
 * sampleSpans(1600) // [[0, 192], [704, 192], [1408, 192]]
 */
export function sampleSpans(length: number): Span[] {
  const { tile, count } = SAMPLE
  if (length <= tile * count) return [[0, length]]
  return Array.from({ length: count }, (_, i) => [Math.round((i * (length - tile)) / (count - 1)), tile] as const)
}

/** The sample's spans of an output, across (columns) and down (rows). */
export const sampleSpansOf = ({ width, height }: { width: number; height: number }): SampleSpans => ({ columns: sampleSpans(width), rows: sampleSpans(height) })

/** At most this many trial encodes of the sample (each also decoded and scored). */
export const MAX_TRIES = 6

/**
 * The share of CPU_LIMIT_MS the search may take: a try that would take it further is not started. The encode after it
 * is kept under about half of cpu_ms by the effort caps (src/codecs/effort-caps.ts); an AVIF at effort 9 of a 320 px
 * photo took 37 s with six tries before this (past cpu_ms, which kills the request on Workers).
 */
export const SEARCH_SHARE = 0.3

/** Score points per quality step assumed before two tries give a slope (SSIMULACRA 2 over libjpeg-style scales). */
const SLOPE = 0.7

/** The search's answer: the quality chosen and the sample's score at it; score points per quality step near it and every try's (quality, score). */
export interface AutoQuality {
  quality: number
  score: number
  slope?: number
  tries?: ReadonlyArray<readonly [number, number]>
}

/**
 * The lowest quality in `low`-`high` whose score reaches `target`, found from `start` (the format's default quality) with
 * at most MAX_TRIES calls of `scoreAt`: steps by the assumed slope until the target is bracketed, then interpolates
 * inside the bracket until it is one quality wide. A score rises with quality, nearly but not exactly; where no tried
 * quality reaches the target, the highest allowed is chosen. `outOfTime` is asked before each try after the first: once
 * it says so, the lowest quality tried that reaches the target is chosen, else the highest tried.
 *
 * @example
 * await searchQuality({ low: 20, high: 95, start: 80, target: 70 }, (q) => scoreOf(encode(sample, q))) // { quality: 72, score: 70.4 }
 */
export async function searchQuality(
  { low, high, start, target }: { low: number; high: number; start: number; target: number },
  scoreAt: (quality: number) => Promise<number>,
  outOfTime: () => boolean = () => false,
): Promise<AutoQuality> {
  const scores = new Map<number, number>()
  let below: number | undefined // highest quality tried that misses the target
  let above: number | undefined // lowest quality tried that reaches it
  let quality = Math.min(high, Math.max(low, start))
  while (scores.size < MAX_TRIES) {
    const score = await scoreAt(quality)
    scores.set(quality, score)
    if (score >= target) above = above === undefined ? quality : Math.min(above, quality)
    else below = below === undefined ? quality : Math.max(below, quality)
    let next: number
    if (above !== undefined && below !== undefined) {
      if (above - below <= 1) break
      const [sb, sa] = [scores.get(below)!, scores.get(above)!]
      const t = sa > sb ? (target - sb) / (sa - sb) : 0.5
      next = Math.min(above - 1, Math.max(below + 1, Math.round(below + t * (above - below))))
    } else if (above !== undefined) {
      if (above === low) break
      next = Math.max(low, above - Math.max(2, Math.ceil((score - target) / SLOPE)))
    } else {
      if (below === high) break
      next = Math.min(high, below! + Math.max(2, Math.ceil((target - score) / SLOPE)))
    }
    if (scores.has(next)) break
    if (outOfTime()) return chosenOf(scores, above ?? Math.max(...scores.keys()))
    quality = next
  }
  const chosen = above ?? high
  if (!scores.has(chosen) && !outOfTime()) scores.set(chosen, await scoreAt(chosen))
  return chosenOf(scores, scores.has(chosen) ? chosen : Math.max(...scores.keys()))
}

const chosenOf = (scores: Map<number, number>, quality: number): AutoQuality => ({ quality, score: Math.round(scores.get(quality)! * 100) / 100, slope: slopeNear(scores, quality), tries: [...scores] })

/**
 * The lowest quality whose sample score, read off the tries (interpolated between them, beyond them by `slope`), reaches
 * `want`; not clamped.
 *
 * @example
 * qualityFor([[70, 66], [80, 72]], 69, 0.7) // 75
 */
export function qualityFor(tries: ReadonlyArray<readonly [number, number]>, want: number, slope: number): number {
  const points = [...tries].sort((a, b) => a[0] - b[0])
  const i = points.findIndex(([, score]) => score >= want)
  if (i === 0) return Math.floor(points[0]![0] - (points[0]![1] - want) / slope)
  if (i > 0) {
    const [[qa, sa], [qb, sb]] = [points[i - 1]!, points[i]!]
    return Math.ceil(qa + ((want - sa) / (sb - sa)) * (qb - qa))
  }
  const [qz, sz] = points[points.length - 1]!
  return Math.ceil(qz + (want - sz) / slope)
}

/** Score points per quality step between two tries (quality, score), within `floor`-3; `fallback` when they say nothing usable. */
function secant([qa, sa]: readonly [number, number], [qb, sb]: readonly [number, number], floor: number, fallback: number): number {
  const slope = (sb - sa) / (qb - qa)
  return Number.isFinite(slope) ? Math.min(3, Math.max(floor, slope)) : fallback
}

/** Score points per quality step between the two tried qualities nearest `quality` (SLOPE when they say nothing usable). */
function slopeNear(scores: Map<number, number>, quality: number): number {
  const [a, b] = [...scores.keys()].sort((x, y) => Math.abs(x - quality) - Math.abs(y - quality))
  if (a === undefined || b === undefined) return SLOPE
  return secant([a, scores.get(a)!], [b, scores.get(b)!], 0.2, SLOPE)
}

/**
 * quality=auto's check of the whole answer: the sample's worst tile is a few points over or under the whole image's
 * score (docs/notes/benchmarks.md items 27-28: -2.8 to +6.6 on WebP), so the answer at the searched quality is scored whole
 * (against the rows it was encoded from, wasm/lean/score.c) and, where it misses the target by more than `below` or
 * passes it by more than `above` (bytes for nothing), encoded again where the sample's tries say the target is once
 * shifted by how far the sample was off (at most `step` qualities away), then, by the whole answers' own slope or
 * between a miss and a reach, until one reaches it within `close`: at most `tries` more encodes (each at 1 MP costs
 * about the fixed quality's whole request again), each only while the CPU budget lasts (`share` of cpu_ms, counting
 * the search). `below` 0: the answer reaches the target whenever a tried quality does.
 */
export const CHECK = { below: 0, above: 3, close: 1, tries: 3, step: 10, share: 0.5 } as const

/**
 * Score points per quality step of the whole answers: between the last two scored once there are two (a whole image's
 * score may move a fifth as fast as its tiles'), else the search's `slope`.
 */
function slopeOf(tried: readonly { quality: number; score: number }[], slope: number): number {
  if (tried.length < 2) return slope
  const [a, b] = tried.slice(-2) as [{ quality: number; score: number }, { quality: number; score: number }]
  return secant([a.quality, a.score], [b.quality, b.score], 0.1, slope)
}

/** An answer that was scored whole: its quality, its whole score, and what the encode made (the answer). */
export interface Checked<P> {
  quality: number
  score: number
  pass: P
}

/**
 * From the answer at the searched quality, the answer quality=auto gives: the lowest quality tried whose whole score is
 * within CHECK.below of the target, else the best scored. `scoreOf` scores an answer whole; `encodeAt` makes the
 * answer at another quality; `outOfTime` is asked before each.
 *
 * @example
 * const { quality, score, pass } = await settleQuality({ quality: 72, pass, sample }, { low: 20, high: 95, target: 70 }, scoreOf, encodeAt, () => budget.exhausted())
 */
export async function settleQuality<P>(
  first: { quality: number; pass: P; sample?: AutoQuality | undefined },
  { low, high, target }: { low: number; high: number; target: number },
  scoreOf: (pass: P) => Promise<number>,
  encodeAt: (quality: number) => Promise<P>,
  outOfTime: () => boolean,
): Promise<Checked<P>> {
  // (the sample's slope near its quality, until two whole answers give their own)
  const slope = first.sample?.slope ?? SLOPE
  const tried: Checked<P>[] = [{ quality: first.quality, pass: first.pass, score: await scoreOf(first.pass) }]
  const reaches = (c: Checked<P>) => c.score >= target - CHECK.below
  for (let extra = 0; extra < CHECK.tries; extra++) {
    const reached = tried.filter(reaches).sort((a, b) => a.quality - b.quality)[0]
    const missed = tried.filter((c) => !reaches(c)).sort((a, b) => b.quality - a.quality)[0]
    // (an answer within `close` over the target is kept: bisecting further buys a few bytes for a whole encode each)
    if (reached && missed && reached.score <= target + CHECK.close) break
    let next: number
    const sample = first.sample
    if (tried.length === 1 && sample?.tries?.length && (!reached || reached.score > target + CHECK.above)) {
      // the first move: the sample's tries, shifted by how far the sample was off the whole answer, say where the target is
      const [only] = tried as [Checked<P>]
      if (only.quality === (reached ? low : high)) break
      const want = target + (sample.score - only.score)
      const predicted = qualityFor(sample.tries, want, slope)
      next = reached
        ? Math.max(low, only.quality - CHECK.step, Math.min(only.quality - 1, predicted))
        : Math.min(high, only.quality + CHECK.step, Math.max(only.quality + 1, predicted))
    } else if (reached && missed) {
      if (reached.quality - missed.quality <= 1) break
      const t = reached.score > missed.score ? (target - missed.score) / (reached.score - missed.score) : 0.5
      next = Math.min(reached.quality - 1, Math.max(missed.quality + 1, Math.round(missed.quality + t * (reached.quality - missed.quality))))
    } else if (reached) {
      if (reached.score <= target + CHECK.above || reached.quality === low) break
      next = Math.max(low, reached.quality - Math.min(CHECK.step, Math.max(1, Math.floor((reached.score - target) / slopeOf(tried, slope)))))
    } else {
      if (missed!.quality === high) break
      next = Math.min(high, missed!.quality + Math.min(CHECK.step, Math.max(2, Math.ceil((target - missed!.score) / slopeOf(tried, slope)))))
    }
    if (tried.some((c) => c.quality === next) || outOfTime()) break
    const pass = await encodeAt(next)
    tried.push({ quality: next, pass, score: await scoreOf(pass) })
  }
  // (where none reaches the target, the best score: a score need not rise with quality)
  const chosen = tried.filter(reaches).sort((a, b) => a.quality - b.quality)[0] ?? tried.sort((a, b) => b.score - a.score || b.quality - a.quality)[0]!
  return { ...chosen, score: Math.round(chosen.score * 100) / 100 }
}

/** The sample's tiles, cut apart from where the sink laid them side by side (its spans, in order, from 0). */
export function tilesOf(sample: ImageData, output: { width: number; height: number }): ImageData[] {
  const offsets = (spans: readonly Span[]) => spans.map(([, length], i) => [spans.slice(0, i).reduce((sum, [, l]) => sum + l, 0), length] as const)
  const { columns, rows } = sampleSpansOf(output)
  const tiles: ImageData[] = []
  for (const [y, height] of offsets(rows)) {
    for (const [x, width] of offsets(columns)) {
      const data = new Uint8ClampedArray(width * height * 4)
      for (let row = 0; row < height; row++) data.set(sample.data.subarray(((y + row) * sample.width + x) * 4, ((y + row) * sample.width + x + width) * 4), row * width * 4)
      tiles.push(new ImageData(data, width, height))
    }
  }
  return tiles
}

/**
 * quality=auto for one conversion: each try encodes every tile of `sample` (sampleRows, or LeanCodec.sampleOf for whole
 * pixels) with the settings the answer will have at that quality, decodes it and scores it against the tile (SSIMULACRA
 * 2 in the lean codec, over two backgrounds where the tile has transparency); the try's score is the worst tile's.
 *
 * @example
 * const { quality, score } = await chooseQuality(sample, 'webp', settings, plan)
 */
export async function chooseQuality(
  sample: ImageData,
  format: OutputFormat,
  settings: EncodeSettings,
  plan: { width: number; height: number; turbo: boolean; trellisPasses: boolean },
  cpuLimitMs: number,
): Promise<AutoQuality> {
  const tiles = tilesOf(sample, plan).map((tile) => ({ tile, alpha: CODECS[format].alpha && hasTransparency(tile) }))
  const lean = leanCodec(decoderMemoryCap())
  const clock = new Stopwatch()
  const budget = new TryBudget(SEARCH_SHARE * cpuLimitMs)
  const scoreAt = async (quality: number) => {
    let worst = Number.POSITIVE_INFINITY
    for (const { tile, alpha } of tiles) {
      const { bytes: encoded } = await encodeImage(tile, format, { ...atQuality(settings, quality), turbo: plan.turbo, trellisPasses: plan.trellisPasses })
      const decoded = await decodeImage(encoded, { ...readHeader(encoded), fileBytes: encoded.length })
      worst = Math.min(worst, lean.score(tile, decoded, alpha))
    }
    budget.record(await clock.lap())
    return worst
  }
  // (the encode after the search has the rest of the CPU time)
  return searchQuality({ ...settings.autoQuality!, start: settings.quality }, scoreAt, () => budget.exhausted())
}
