import { release } from './bytes'

/**
 * One buffer per isolate for request bodies, read into by a BYOB reader (no chunk of the body is allocated
 * by the stream, so none is left as garbage), reused by every conversion. Conversions run one at a time
 * (the conversion slot) and read their bodies only once they hold it, so one buffer serves them all; a
 * fresh array per request was garbage after it, and back-to-back 12 MP photo PNGs (21 MiB each) to WebP
 * grew workerd by about 20 MiB a request until V8 collected them (npm run memory:steady). It grows to the
 * largest body seen (at most MAX_INPUT_BYTES), and is kept while that is at most KEEP_BYTES.
 *
 * What a conversion hands on after its slot (the answer) must not be a view of it: the next body would
 * overwrite it (the input as the answer is copied out: copyParts in src/lib/bytes.ts). A buffer grown past KEEP_BYTES for one large body is freed when its conversion ends
 * (`endBodyBuffer`), so an isolate does not keep a 21 MiB photo PNG's room for the photos that follow.
 *
 * @example
 * let buffer = bodyBuffer(declaredLength)
 */
let shared = new Uint8Array(0)

/** The largest body buffer kept from one conversion to the next (a 12 MP phone JPEG is 2-5 MiB). */
const KEEP_BYTES = 8 * 2 ** 20

/** Bytes of the body buffer kept now (the isolate's view of its memory, /api/health?memory=1). */
export const bodyBufferBytes = (): number => shared.length

/** A buffer of at least `size` bytes, keeping the first `keep` bytes of the one handed out before. */
export function bodyBuffer(size: number, keep = 0): Uint8Array {
  if (shared.length < size) {
    const grown = new Uint8Array(size)
    if (keep > 0) grown.set(shared.subarray(0, keep))
    shared = grown
  }
  return shared
}

/**
 * A BYOB read moves the buffer's memory into a new ArrayBuffer (the one it answers with) and detaches the
 * old one: keep the new one. A read that failed leaves the old one detached (length 0), and the next
 * `bodyBuffer` allocates afresh.
 */
export function adoptBodyBuffer(moved: ArrayBuffer): Uint8Array {
  shared = new Uint8Array(moved)
  return shared
}

/**
 * The conversion that read a body is over: a buffer larger than KEEP_BYTES is given back now. Transferring
 * its memory to an empty ArrayBuffer detaches it, which frees it at once; dropping it would leave it to V8's
 * next full collection.
 *
 * @example
 * try { await convert() } finally { endBodyBuffer() }
 */
export function endBodyBuffer(): void {
  if (shared.length <= KEEP_BYTES) return
  const large = shared
  shared = new Uint8Array(0)
  release(large)
}

/**
 * A conversion that will not read its body again (an AVIF encoder about to start, its source closed) gives the body
 * buffer back early, as `endBodyBuffer` would at the turn's end, when `bytes` is a view of it: the file is then not held
 * beside libaom's state. Returns whether it was given back (`bytes` is then detached: length 0).
 *
 * @example
 * lean.rowsToAvif(settings, () => releaseBodyOf(bytes))
 */
export function releaseBodyOf(bytes: Uint8Array): boolean {
  if (bytes.buffer !== shared.buffer || shared.length <= KEEP_BYTES) return false
  endBodyBuffer()
  return true
}
