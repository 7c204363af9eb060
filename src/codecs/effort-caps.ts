/**
 * Effort caps by output size: a codec whose CPU time grows steeply with effort lowers the requested
 * effort for large outputs, so one encode stays under half of wrangler.toml's cpu_ms (30 s). Each
 * tier covers outputs up to and including `maxPixels`; the last has no bound. /api/formats publishes
 * them (`limits.avifEffortCaps`, `limits.pngEffortCaps`).
 */
export type EffortCaps = ReadonlyArray<{ maxPixels: number; maxEffort: number }>

/**
 * The effort used for an output of `pixels`: the requested one, or its tier's cap when lower.
 *
 * @example
 * capEffort([{ maxPixels: 1e6, maxEffort: 9 }, { maxPixels: Infinity, maxEffort: 4 }], 9, 2e6) // 4
 */
export function capEffort(caps: EffortCaps, requested: number, pixels: number): number {
  return Math.min(requested, caps.find((c) => pixels <= c.maxPixels)!.maxEffort)
}

/** The caps as JSON: an unbounded tier's maxPixels is null. */
export const publishedCaps = (caps: EffortCaps) =>
  caps.map(({ maxPixels, maxEffort }) => ({ maxPixels: Number.isFinite(maxPixels) ? maxPixels : null, maxEffort }))
