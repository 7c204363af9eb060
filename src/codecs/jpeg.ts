import { defaultOptions } from '@jsquash/jpeg/meta.js'
import { jpegDecoder, jpegEncoder } from '../../wasm'
import { type Codec, decodedOrThrow, effortOption, qualityOption } from './types'

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
    const encoder = await jpegEncoder()
    const out = encoder.encode(image.data, image.width, image.height, {
      ...defaultOptions,
      quality,
      // Baseline or single-pass settings would not save memory: trellis quantisation keeps every
      // coefficient either way (docs/memory.md measured 193 MiB at 12 MP with each).
      progressive: effort >= 3,
      optimize_coding: true,
      trellis_multipass: effort >= 8,
    })
    return new Uint8Array(out.buffer, out.byteOffset, out.byteLength)
  },
}
