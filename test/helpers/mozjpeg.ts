/**
 * jSquash's MozJPEG encoder, for tests that need a JPEG the service's own encoder does not write (4:4:4 chroma,
 * say). The worker no longer bundles it: its MozJPEG is the lean codec's.
 */
import factory from '@jsquash/jpeg/codec/enc/mozjpeg_enc.js'
import type { MozJPEGModule } from '@jsquash/jpeg/codec/enc/mozjpeg_enc'
import wasm from '@jsquash/jpeg/codec/enc/mozjpeg_enc.wasm'
import { defaultOptions, type EncodeOptions } from '@jsquash/jpeg/meta.js'

/** `image` as a JPEG with jSquash's defaults, overridden by `options`. */
export async function mozjpeg(image: ImageData, options: Partial<EncodeOptions>): Promise<Uint8Array> {
  const encoder = await (factory as (options: Record<string, unknown>) => Promise<MozJPEGModule>)({
    noInitialRun: true,
    instantiateWasm(imports: WebAssembly.Imports, done: (instance: WebAssembly.Instance) => void) {
      const instance = new WebAssembly.Instance(wasm, imports)
      done(instance)
      return instance.exports
    },
  })
  const out = encoder.encode(image.data, image.width, image.height, { ...defaultOptions, ...options })
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength)
}
