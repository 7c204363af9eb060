import { defaultOptions } from '@jsquash/jpeg/meta.js'
import { jpegDecoder, jpegEncoder } from '../../wasm'
import { type Codec, decodedOrThrow, effortOption, qualityOption } from './types'

/**
 * Above this many pixels MozJPEG writes baseline with a single pass: progressive and two-pass
 * Huffman optimisation keep every DCT coefficient of the image in memory (about 6 bytes a pixel),
 * which a 128 MB isolate cannot afford next to the RGBA pixels.
 */
export const JPEG_LEAN_PIXELS = 6_000_000

export const jpeg: Codec = {
  id: 'jpeg',
  label: 'JPEG (MozJPEG)',
  mime: 'image/jpeg',
  extensions: ['jpg', 'jpeg'],
  lossy: true,
  lossless: false,
  alpha: false,
  orientsItself: true,
  options: {
    quality: qualityOption(80),
    effort: effortOption(4, 'MozJPEG: 0-2 baseline, 3-7 progressive with trellis quantisation, 8-9 adds multipass trellis.'),
  },
  async decode(bytes) {
    const decoder = await jpegDecoder()
    // true: the decoder applies the EXIF orientation, so the pixels come out upright.
    return decodedOrThrow(decoder.decode(bytes, true), 'JPEG')
  },
  async encode(image, { quality, effort }) {
    const lean = image.width * image.height > JPEG_LEAN_PIXELS
    const encoder = await jpegEncoder()
    const out = encoder.encode(image.data, image.width, image.height, {
      ...defaultOptions,
      quality,
      progressive: effort >= 3 && !lean,
      optimize_coding: !lean,
      trellis_multipass: effort >= 8,
    })
    return new Uint8Array(out.buffer, out.byteOffset, out.byteLength)
  },
}
