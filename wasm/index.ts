/**
 * The only place that imports `.wasm` files and instantiates them.
 *
 * Workers cannot compile WebAssembly from bytes at run time, so every module is imported as an
 * already-compiled `WebAssembly.Module` (wrangler's CompiledWasm rule) and instantiated here.
 *
 * Memory is the binding limit of a Worker (128 MB per isolate) and WebAssembly memory never shrinks.
 * The lean codec (our own module) has one instance over one memory per isolate, reset for every
 * conversion (wasm/session.ts), so what it holds does not depend on the garbage collector.
 * oxipng, the one codec outside it, keeps its own memory: each encode gets a *fresh* instance, used once and
 * dropped (a dropped memory stays resident until V8 collects it, so the plan lets oxipng take only small
 * images), instead of the module-level singleton that would stay at its high-water mark for the life of
 * the isolate. Instantiating a compiled module costs well under a millisecond.
 */
import oxipngModule from '@jsquash/oxipng/codec/pkg/squoosh_oxipng_bg.wasm?module'
import leanModule from './lean/lean.wasm'

import { MemoryCap } from './cap'
import { sessionCodec } from './session'
import './imagedata'

export { MemoryCap }
export { AVIF_WHOLE_PIXELS, LeanFailure, type LeanAvifSettings, type LeanCodec, type LeanJpegSettings } from './lean'

/**
 * The lean codec (MozJPEG, libwebp, libpng, giflib, libavif with dav1d and libaom, row by row;
 * wasm/lean.ts): inside a conversion
 * (withLeanSession), the conversion's one instance over the isolate's lean memory; elsewhere a fresh
 * instance whose memory stops at `cap`.
 */
export const leanCodec = (cap: MemoryCap) => sessionCodec(leanModule, cap)
export { leanResidentMiB, releaseLeanMemory, withLeanSession } from './session'

/**
 * oxipng's wasm-bindgen module has one import, so we call its exports directly on a fresh instance
 * rather than through the generated glue, whose single module-level instance would keep its
 * largest-ever memory for the life of the isolate.
 */
interface BindgenExports {
  memory: WebAssembly.Memory
  __wbindgen_add_to_stack_pointer(delta: number): number
  __wbindgen_malloc(size: number, align: number): number
  __wbindgen_free(ptr: number, size: number, align: number): void
}

function callReturningBytes(
  exports: BindgenExports,
  input: Uint8Array | Uint8ClampedArray,
  call: (retptr: number, ptr: number, len: number) => void,
): Uint8Array {
  const retptr = exports.__wbindgen_add_to_stack_pointer(-16)
  try {
    const ptr = exports.__wbindgen_malloc(input.length, 1) >>> 0
    new Uint8Array(exports.memory.buffer, ptr, input.length).set(input)
    call(retptr, ptr, input.length)
    const [outPtr, outLen] = new Int32Array(exports.memory.buffer, retptr, 2)
    const out = new Uint8Array(exports.memory.buffer, outPtr! >>> 0, outLen!).slice()
    exports.__wbindgen_free(outPtr!, outLen!, 1)
    return out
  } finally {
    exports.__wbindgen_add_to_stack_pointer(16)
  }
}

/** Losslessly optimise RGBA pixels into a PNG with oxipng at `level` 0-6. */
export function oxipngRgba(
  rgba: Uint8ClampedArray,
  width: number,
  height: number,
  level: number,
  interlace: boolean,
  optimiseAlpha: boolean,
): Uint8Array {
  let memory: WebAssembly.Memory | undefined
  const imports = {
    wbg: {
      __wbindgen_throw(ptr: number, len: number) {
        throw new Error(new TextDecoder().decode(new Uint8Array(memory!.buffer, ptr, len)))
      },
    },
  }
  const exports = new WebAssembly.Instance(oxipngModule, imports).exports as unknown as BindgenExports & {
    optimise_raw(...args: number[]): void
  }
  memory = exports.memory
  return callReturningBytes(exports, rgba, (retptr, ptr, len) =>
    exports.optimise_raw(retptr, ptr, len, width, height, level, interlace ? 1 : 0, optimiseAlpha ? 1 : 0),
  )
}
