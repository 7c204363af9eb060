import { shrink } from '../../wasm/lean'

/**
 * Byte arrays written in parts (a row sink's output, a file's chunks) as one.
 *
 * @example
 * joinParts([Uint8Array.of(1, 2), Uint8Array.of(3)]) // Uint8Array [1, 2, 3]
 */
export function joinParts(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0))
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}

/** The size of the parts an answer is copied and streamed in. */
export const PART_BYTES = 1024 * 1024

/**
 * A copy of `bytes` (one array or parts) in arrays of at most PART_BYTES each, for an answer that would otherwise be
 * views of a large buffer: workerd sent such views at a cost of about twice the buffer more (a 16 MP photo PNG returned
 * as itself, as views of the request body: 137 MiB peak; as views of one fresh copy 110; copied into parts 92). The
 * arrays of `room` (a PNG sink's parts, written before it gave up) are filled first, in order, so that no new memory is
 * taken while they are garbage; new ones only for what they cannot hold.
 *
 * @example
 * copyParts([body.subarray(0, 33), body.subarray(57)]) // new arrays, none over 1 MiB
 */
export function copyParts(bytes: Uint8Array | readonly Uint8Array[], room: readonly Uint8Array[] = []): Uint8Array[] {
  const sources = Array.isArray(bytes) ? bytes : [bytes as Uint8Array]
  let left = sources.reduce((sum, part) => sum + part.length, 0)
  const parts: Uint8Array[] = []
  let spare = 0
  let target: Uint8Array = new Uint8Array(0)
  let at = 0
  for (const source of sources) {
    for (let from = 0; from < source.length; ) {
      if (at === target.length) {
        if (target.length) parts.push(target)
        target = room[spare++] ?? new Uint8Array(Math.min(PART_BYTES, left))
        at = 0
      }
      const n = Math.min(source.length - from, target.length - at)
      target.set(source.subarray(from, from + n), at)
      at += n
      from += n
      left -= n
    }
  }
  if (at) parts.push(shrink(target, at))
  return parts
}

/**
 * Give back the memory of an array at once, by detaching its buffer (ArrayBuffer.transfer(0)), once what it held has
 * been copied where it goes (a Response made from it, a stream write that resolved, or nothing, for a request body
 * that is over): left to V8, each stayed as garbage until a collection, and request after request the isolate grew
 * by about its size. Only an array that is its whole buffer (what a codec wrote, a body buffer), never a view into a
 * buffer something else may hold.
 *
 * @example
 * const response = new Response(bytes); release(bytes)
 */
export function release(bytes: Uint8Array): void {
  const buffer = bytes.buffer as ArrayBuffer & { transfer?: (length: number) => ArrayBuffer }
  if (bytes.byteOffset === 0 && bytes.byteLength === buffer.byteLength) buffer.transfer?.(0)
}
