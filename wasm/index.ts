/**
 * The only place that imports `.wasm` files and instantiates them.
 *
 * Workers cannot compile WebAssembly from bytes at run time, so every module is imported as an
 * already-compiled `WebAssembly.Module` (wrangler's CompiledWasm rule) and instantiated here.
 *
 * Memory is the binding limit of a Worker (128 MB per isolate) and WebAssembly memory never shrinks
 * while its instance lives. So every heavy operation gets a *fresh* instance from the compiled module,
 * used once and dropped: its linear memory becomes garbage as soon as the operation returns, instead of
 * staying at its high-water mark for the life of the isolate as it would with the codecs' own
 * module-level singletons. Instantiating a compiled module costs well under a millisecond.
 */
import jpegDecModule from '@jsquash/jpeg/codec/dec/mozjpeg_dec.wasm'
import jpegEncModule from '@jsquash/jpeg/codec/enc/mozjpeg_enc.wasm'
import webpDecModule from '@jsquash/webp/codec/dec/webp_dec.wasm'
import webpEncModule from '@jsquash/webp/codec/enc/webp_enc_simd.wasm'
import avifDecModule from '@jsquash/avif/codec/dec/avif_dec.wasm'
import avifEncModule from '@jsquash/avif/codec/enc/avif_enc.wasm'
import pngModule from '@jsquash/png/codec/pkg/squoosh_png_bg.wasm?module'
import oxipngModule from '@jsquash/oxipng/codec/pkg/squoosh_oxipng_bg.wasm?module'
import resizeModule from '@jsquash/resize/lib/resize/pkg/squoosh_resize_bg.wasm?module'

import jpegDecFactory from '@jsquash/jpeg/codec/dec/mozjpeg_dec.js'
import jpegEncFactory from '@jsquash/jpeg/codec/enc/mozjpeg_enc.js'
import webpDecFactory from '@jsquash/webp/codec/dec/webp_dec.js'
import webpEncFactory from '@jsquash/webp/codec/enc/webp_enc_simd.js'
import avifDecFactory from '@jsquash/avif/codec/dec/avif_dec.js'
import avifEncFactory from '@jsquash/avif/codec/enc/avif_enc.js'
import type { MozJPEGModule as JpegDecoder } from '@jsquash/jpeg/codec/dec/mozjpeg_dec'
import type { MozJPEGModule as JpegEncoder } from '@jsquash/jpeg/codec/enc/mozjpeg_enc'
import type { WebPModule as WebpDecoder } from '@jsquash/webp/codec/dec/webp_dec'
import type { WebPModule as WebpEncoder } from '@jsquash/webp/codec/enc/webp_enc'
import type { AVIFModule as AvifDecoder } from '@jsquash/avif/codec/dec/avif_dec'
import type { AVIFModule as AvifEncoder } from '@jsquash/avif/codec/enc/avif_enc'
import { init as initPng } from '@jsquash/png/decode.js'
import { decode as pngDecode, encode as pngEncode } from '@jsquash/png/codec/pkg/squoosh_png.js'
import './imagedata'

type Factory<T> = (options: Record<string, unknown>) => Promise<T>

/** A fresh Emscripten instance over an already-compiled module. */
function emscripten<T>(factory: unknown, module: WebAssembly.Module): Promise<T> {
  return (factory as Factory<T>)({
    noInitialRun: true,
    instantiateWasm(imports: WebAssembly.Imports, done: (instance: WebAssembly.Instance) => void) {
      const instance = new WebAssembly.Instance(module, imports)
      done(instance)
      return instance.exports
    },
  })
}

export const jpegDecoder = () => emscripten<JpegDecoder>(jpegDecFactory, jpegDecModule)
export const jpegEncoder = () => emscripten<JpegEncoder>(jpegEncFactory, jpegEncModule)
export const webpDecoder = () => emscripten<WebpDecoder>(webpDecFactory, webpDecModule)
export const webpEncoder = () => emscripten<WebpEncoder>(webpEncFactory, webpEncModule)
export const avifDecoder = () => emscripten<AvifDecoder>(avifDecFactory, avifDecModule)
export const avifEncoder = () => emscripten<AvifEncoder>(avifEncFactory, avifEncModule)

/**
 * The wasm-bindgen modules below have no imports (resize) or one (oxipng), so we call their exports
 * directly on a fresh instance rather than through the generated glue, whose single module-level
 * instance would keep its largest-ever memory for the life of the isolate.
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

/** Resample RGBA pixels (squoosh resize: 0 triangle, 1 catrom, 2 mitchell, 3 lanczos3). */
export function resizeRgba(
  rgba: Uint8ClampedArray,
  width: number,
  height: number,
  outWidth: number,
  outHeight: number,
  method: 0 | 1 | 2 | 3,
  premultiply: boolean,
  linearRgb: boolean,
): Uint8ClampedArray {
  const exports = new WebAssembly.Instance(resizeModule, {}).exports as unknown as BindgenExports & {
    resize(...args: number[]): void
  }
  const out = callReturningBytes(exports, rgba, (retptr, ptr, len) =>
    exports.resize(retptr, ptr, len, width, height, outWidth, outHeight, method, premultiply ? 1 : 0, linearRgb ? 1 : 0),
  )
  return new Uint8ClampedArray(out.buffer)
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

let pngReady: Promise<unknown> | undefined
/** The PNG codec (decode and plain encode) through its own glue, initialised once from our module. */
export async function pngCodec(): Promise<{ decode: typeof pngDecode; encode: typeof pngEncode }> {
  pngReady ??= initPng(pngModule)
  await pngReady
  return { decode: pngDecode, encode: pngEncode }
}
