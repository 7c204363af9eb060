/**
 * What a conversion is expected to take, from its input's size, for the queue's admission. The rate is learnt from
 * the conversions this isolate has finished (an average that follows the recent ones); the first guess is a 12 MP
 * photo JPEG's (about 3.5 MiB in 2 s).
 *
 * @example
 * const costMs = estimateMs(declaredBytes)
 * recordCost(bytes, Date.now() - started)
 */
const FIRST_MS_PER_MIB = 500
/** What any conversion costs at least: parsing, planning, answering. */
const FLOOR_MS = 30
/** An input of unknown size (a chunked upload) is taken to be a typical web image. */
const UNKNOWN_BYTES = 512 * 1024
/** Smaller inputs teach nothing: their time is the floor's, not their bytes'. */
const LEARN_FROM_BYTES = 256 * 1024
/** How much the newest conversion moves the average. */
const WEIGHT = 0.3

let msPerMiB = FIRST_MS_PER_MIB

export function estimateMs(bytes: number | undefined): number {
  const size = bytes !== undefined && Number.isFinite(bytes) && bytes > 0 ? bytes : UNKNOWN_BYTES
  return FLOOR_MS + (size / 2 ** 20) * msPerMiB
}

export function recordCost(bytes: number, ms: number): void {
  if (!(bytes >= LEARN_FROM_BYTES) || !(ms >= 0)) return
  const observed = Math.max(0, ms - FLOOR_MS) / (bytes / 2 ** 20)
  msPerMiB = (1 - WEIGHT) * msPerMiB + WEIGHT * observed
}
