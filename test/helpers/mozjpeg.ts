/**
 * jSquash's MozJPEG encoder, for tests that need a JPEG the service's own encoder does not write (4:4:4 chroma,
 * say), and its decoder, MozJPEG's C code throughout, as a reference. The worker no longer bundles them: its MozJPEG is
 * the lean codec's.
 */
import factory from '@jsquash/jpeg/codec/enc/mozjpeg_enc.js'
import type { MozJPEGModule } from '@jsquash/jpeg/codec/enc/mozjpeg_enc'
import wasm from '@jsquash/jpeg/codec/enc/mozjpeg_enc.wasm'
import { defaultOptions, type EncodeOptions } from '@jsquash/jpeg/meta.js'
import decoderFactory from '@jsquash/jpeg/codec/dec/mozjpeg_dec.js'
import type { MozJPEGModule as MozJPEGDecoder } from '@jsquash/jpeg/codec/dec/mozjpeg_dec'
import decoderWasm from '@jsquash/jpeg/codec/dec/mozjpeg_dec.wasm'

/** An Emscripten module's options that instantiate it from an imported module (workerd compiles no wasm from bytes). */
const emscriptenOver = (module: WebAssembly.Module) => ({
  noInitialRun: true,
  instantiateWasm(imports: WebAssembly.Imports, done: (instance: WebAssembly.Instance) => void) {
    const instance = new WebAssembly.Instance(module, imports)
    done(instance)
    return instance.exports
  },
})

/** `image` as a JPEG with jSquash's defaults, overridden by `options`. */
export async function mozjpeg(image: ImageData, options: Partial<EncodeOptions>): Promise<Uint8Array> {
  const encoder = await (factory as (options: Record<string, unknown>) => Promise<MozJPEGModule>)(emscriptenOver(wasm))
  const out = encoder.encode(image.data, image.width, image.height, { ...defaultOptions, ...options })
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength)
}

/** jSquash's MozJPEG decoder (Emscripten, C code throughout): `jpeg` as RGBA, the reference for the lean codec's decoder. */
export async function mozjpegDecode(jpeg: Uint8Array): Promise<ImageData> {
  const decoder = await (decoderFactory as (options: Record<string, unknown>) => Promise<MozJPEGDecoder>)(emscriptenOver(decoderWasm))
  const image = decoder.decode(jpeg, false)
  if (!image) throw new Error("jSquash's decoder refused the JPEG")
  return image
}
