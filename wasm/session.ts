/**
 * One lean codec instance per isolate, over its one lean memory, reset for each conversion.
 *
 * A fresh WebAssembly memory per codec step is dropped when the step ends, but it stays resident until
 * V8 collects it, which it does about every other request: back-to-back 12 MP conversions peaked at
 * twice the first one's growth. Instead, a conversion's lean steps (decode, resize, encode, or a
 * one-pass route) share one instance, and every conversion gets the same instance back, reset to what
 * instantiation left (`LeanCodec.reset`: the static data and the stack pointer), so the allocator starts
 * clean and hands out the pages the memory already has before it grows. (A new instance per conversion,
 * as before, also took 1 ms and left about 0.1 MiB each that V8's collections did not give back.) The memory
 * never shrinks, so it stays at the largest conversion's size, no larger than its cap; the plan charges
 * what it keeps (`leanResidentMiB`). Pixels a step leaves in the instance are passed to the next step by
 * address, without a copy.
 *
 * Conversions run one at a time (the isolate's conversion slot), and only code inside
 * `withLeanSession` gets the shared instance: it is found through the async context, so a request
 * outside the session (a deep health check, say) gets a fresh instance of its own, as before.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import type { MemoryCap } from './cap'
import { INITIAL_PAGES, LeanCodec, pagesFor } from './lean'

interface Session {
  cap: MemoryCap
  codec?: LeanCodec
}

const sessions = new AsyncLocalStorage<Session>()
/** The lean memory and its instances: the usual one, and one whose input may stream (JSPI; made on first use). */
let shared: { memory: WebAssembly.Memory; maxPages: number; codec?: LeanCodec; streaming?: LeanCodec } | undefined
let busy = false

/** MiB of the isolate's shared lean memory: resident since earlier conversions, reused by the next. */
export const leanResidentMiB = (): number => (shared ? shared.memory.buffer.byteLength / 2 ** 20 : 0)

/**
 * Give up the isolate's lean memory: the next session makes a new one. For a conversion that fits only
 * without it; the old memory is then garbage, resident until V8 collects it, like every codec's was.
 */
export function releaseLeanMemory(): void {
  shared = undefined
}

/**
 * The conversion holding the session ended without finishing (workerd ran none of its request's code again: its
 * client went away): the next session may start. Its memory is reset like after any conversion.
 */
export function abandonLeanSession(): void {
  busy = false
}

/**
 * Run one conversion with one lean instance over the isolate's lean memory, capped at `cap`.
 *
 * @example
 * const out = await withLeanSession(decoderMemoryCap(), () => convert(bytes))
 */
export async function withLeanSession<T>(cap: MemoryCap, work: () => Promise<T>): Promise<T> {
  // Sessions are meant to run one at a time; one that overlaps another gets fresh instances instead.
  if (busy) return work()
  busy = true
  try {
    return await sessions.run({ cap }, work)
  } finally {
    busy = false
  }
}

/**
 * Inside a session, the conversion's lean instance (made on first use; `cap` is the one marked if it
 * runs out of memory); outside, a fresh instance with a memory of its own.
 */
export function sessionCodec(module: WebAssembly.Module, cap: MemoryCap, streaming = false): LeanCodec {
  const session = sessions.getStore()
  if (!session) return new LeanCodec(module, cap, undefined, streaming)
  // A conversion that streams its file does nothing in the lean codec before it opens it, so switching instances
  // (which starts the memory's heap afresh) loses nothing.
  const codec = session.codec?.streaming === streaming ? session.codec : (session.codec = sharedCodec(module, session.cap, streaming))
  codec.markOnFailure(cap)
  return codec
}

/** The isolate's instance of that kind over its one lean memory, reset for `cap` (made, and the memory, on first use). */
function sharedCodec(module: WebAssembly.Module, cap: MemoryCap, streaming: boolean): LeanCodec {
  const maxPages = pagesFor(cap)
  // A memory made for another cap (MEMORY_BUDGET_MIB changed) is replaced, not reused.
  if (shared?.maxPages !== maxPages) shared = { memory: new WebAssembly.Memory({ initial: INITIAL_PAGES, maximum: maxPages }), maxPages }
  const kind = streaming ? 'streaming' : 'codec'
  const codec = shared[kind]
  if (codec) {
    codec.reset(cap)
    return codec
  }
  return (shared[kind] = new LeanCodec(module, cap, shared.memory, streaming))
}

