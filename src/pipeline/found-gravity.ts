/**
 * The gravities whose window is found in the pixels, by a pass over a preview of them (src/pipeline/rows.ts), rather
 * than given: `auto` and `face`. A module of its own, importing nothing, so that the options, the geometry and the
 * stream check can all ask without an import cycle.
 */

/** A gravity whose window is found in the pixels. */
export type FoundGravity = 'auto' | 'face'

/**
 * Whether `gravity` is found in the pixels (auto, face), rather than given.
 *
 * @example
 * isFound(options.gravity) // true for gravity=face
 */
export const isFound = (gravity: unknown): gravity is FoundGravity => gravity === 'auto' || gravity === 'face'
