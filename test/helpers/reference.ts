/**
 * An independent resampler to hold the API's against: jSquash's Lanczos3 (squoosh resize, Rust),
 * which the worker itself used before wasm/lean/resample.c. Tests only; the worker never loads it.
 */
import resizeModule from '@jsquash/resize/lib/resize/pkg/squoosh_resize_bg.wasm?module'
import resize, { initResize } from '@jsquash/resize'

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
