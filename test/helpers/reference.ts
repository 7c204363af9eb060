/**
 * Independent codecs to hold the API's against: jSquash's Lanczos3 (squoosh resize, Rust), which the
 * worker itself used before wasm/lean/resample.c, squoosh's PNG decoder, used before the lean codec's
 * libpng, and jSquash's WebP decoder (libwebp built by squoosh), used before wasm/lean/webp_dec.c. Tests
 * only; the worker never loads them.
 */
import resizeModule from '@jsquash/resize/lib/resize/pkg/squoosh_resize_bg.wasm?module'
import resize, { initResize } from '@jsquash/resize'
import pngModule from '@jsquash/png/codec/pkg/squoosh_png_bg.wasm?module'
import { decode as decodePng, init as initPng } from '@jsquash/png/decode.js'
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
  // jSquash reads `image.data.buffer` from its start, and the lean codec's decoders (JPEG, PNG) return
  // views into their instance's memory: give it pixels of their own.
  const own = new ImageData(image.data.slice(), image.width, image.height)
  return resize(own, { width, height, method: 'lanczos3', premultiply, linearRGB: false, fitMethod: 'stretch' })
}

let pngReady: Promise<unknown> | undefined

/**
 * `png` decoded by squoosh's PNG decoder (Rust's png crate), the worker's own before the lean codec's
 * libpng, keeping 16-bit samples: { width, height, data } with 4 samples of 0-65535 per pixel.
 *
 * @example
 * const { data } = await referencePng16(bytes)
 */
export async function referencePng16(png: Uint8Array): Promise<{ width: number; height: number; data: Uint16Array }> {
  pngReady ??= initPng(pngModule)
  await pngReady
  const image = await decodePng(png.slice().buffer, { bitDepth: 16 })
  return { width: image.width, height: image.height, data: image.data }
}

let webpReady: Promise<unknown> | undefined

/** A still WebP decoded to RGBA (not premultiplied) by jSquash's decoder. */
export async function referenceWebpDecode(bytes: Uint8Array): Promise<ImageData> {
  webpReady ??= initWebp(webpDecModule)
  await webpReady
  return decodeWebp(bytes.slice().buffer)
}
