import { defaultOptions } from '@jsquash/jpeg/meta.js'
import { jpegEncoder, leanCodec, LeanFailure, MemoryCap } from '../../wasm'
import { type Codec, capped, DecodeFailure, decoderMemoryCap, effortOption, qualityOption } from './types'

/** An encoder's memory is bounded by the plan's estimate, not by the input; this only stops a runaway. */
export const ENCODER_MEMORY_CAP = 1024 * 1024 * 1024

export const jpeg: Codec = {
  id: 'jpeg',
  label: 'JPEG (MozJPEG; libjpeg-turbo for decoding and for conversions too large for MozJPEG)',
  mime: 'image/jpeg',
  extensions: ['jpg', 'jpeg'],
  lossy: true,
  lossless: false,
  alpha: false,
  orientsItself: true,
  options: {
    quality: qualityOption(80),
    effort: effortOption(4, 'libjpeg-turbo at 0-2 (baseline, optimised Huffman tables: fast, as sharp\'s default); MozJPEG at 3-7 (progressive, trellis quantisation: smaller files, about 10x the time) and 8-9 (adds multipass trellis). Where MozJPEG does not fit the memory budget, libjpeg-turbo progressive.'),
  },
  async decode(bytes, header, scaleEighths = 8) {
    // libjpeg-turbo, scaled in the DCT when the output is smaller, oriented while rows are written;
    // the pixels stay in the decoder's memory (a view, not a copy).
    const cap = decoderMemoryCap()
    return capped(cap, header, () =>
      jpegFailure(() => {
        const lean = leanCodec(cap)
        lean.openJpeg(bytes)
        lean.start(scaleEighths, 4)
        return lean.decodeRgba(header.orientation)
      }),
    )
  },
  async encode(image, { quality, effort, turbo }) {
    if (turbo) return leanCodec(new MemoryCap(ENCODER_MEMORY_CAP)).encodeJpeg(image, { quality, progressive: effort >= 3, optimize: true })
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

/** libjpeg's own messages ("Bogus Huffman table definition") are specific and safe to show. */
export function jpegFailure<T>(work: () => T): T {
  try {
    return work()
  } catch (error) {
    if (error instanceof LeanFailure) throw new DecodeFailure(`libjpeg: ${error.message}`)
    throw error
  }
}
