import { defaultOptions } from '@jsquash/jpeg/meta.js'
import { jpegEncoder, leanCodec, type LeanJpegSettings } from '../../wasm'
import { type Codec, capped, decoderMemoryCap, type EncodeSettings, effortOption, encoderMemoryCap, leanFailure, qualityOption } from './types'

/** libjpeg-turbo's settings for the common ones: progressive from effort 3, Huffman tables always optimised. */
export const turboJpegSettings = ({ quality, effort }: EncodeSettings): LeanJpegSettings => ({ quality, progressive: effort >= 3, optimize: true })

export const jpeg: Codec = {
  id: 'jpeg',
  label: 'JPEG (MozJPEG; libjpeg-turbo for decoding, at effort 0-2 and for conversions too large for MozJPEG)',
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
      leanFailure('libjpeg', () => {
        const lean = leanCodec(cap)
        lean.openJpeg(bytes)
        lean.start(scaleEighths, 4)
        return lean.decodeRgba(header.orientation)
      }),
    )
  },
  async encode(image, settings) {
    const { quality, effort, turbo } = settings
    if (turbo) return leanCodec(encoderMemoryCap()).encodeJpeg(image, turboJpegSettings(settings))
    const encoder = await jpegEncoder()
    const out = encoder.encode(image.data, image.width, image.height, {
      ...defaultOptions,
      quality,
      // Baseline or single-pass settings would not save memory: trellis quantisation keeps every
      // coefficient either way (docs/memory.md measured 193 MiB at 12 MP with each).
      progressive: effort >= 3,
      optimize_coding: true,
      trellis_multipass: effort >= 8,
      // jSquash's default lets MozJPEG switch to 4:2:2 from quality 80, which costs up to 28 % more bytes
      // for colour that SSIM on Y, Cb and Cr barely sees (docs/benchmarks.md); 4:2:0 is also what
      // libjpeg-turbo (effort 0-2) and sharp write.
      auto_subsample: false,
      chroma_subsample: 2,
    })
    return new Uint8Array(out.buffer, out.byteOffset, out.byteLength)
  },
}
