/**
 * Independent codecs to hold the API's against: jSquash's Lanczos3 (squoosh resize, Rust), which the
 * worker itself used before wasm/lean/resample.c, and jSquash's WebP decoder (libwebp built by
 * squoosh), which it used before wasm/lean/webp_dec.c. Tests only; the worker never loads them.
 */
import resizeModule from '@jsquash/resize/lib/resize/pkg/squoosh_resize_bg.wasm?module'
import resize, { initResize } from '@jsquash/resize'
import webpDecModule from '@jsquash/webp/codec/dec/webp_dec.wasm?module'
import decodeWebp, { init as initWebp } from '@jsquash/webp/decode.js'

let ready: Promise<unknown> | undefined

/**
 * `image` resampled to `width` x `height` with jSquash's Lanczos3 in sRGB; `premultiply` for alpha.
 *
 * @example
 * const reference = await referenceResize(full, 300, 188)
 */
export async function referenceResize(image: ImageData, width: number, height: number, premultiply = false): Promise<ImageData> {
  ready ??= initResize(resizeModule)
  await ready
  return resize(image, { width, height, method: 'lanczos3', premultiply, linearRGB: false, fitMethod: 'stretch' })
}

let webpReady: Promise<unknown> | undefined

/** A still WebP decoded to RGBA (not premultiplied) by jSquash's decoder. */
export async function referenceWebpDecode(bytes: Uint8Array): Promise<ImageData> {
  webpReady ??= initWebp(webpDecModule)
  await webpReady
  return decodeWebp(bytes.slice().buffer)
}
