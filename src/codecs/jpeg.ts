import { leanCodec, type LeanJpegSettings } from '../../wasm'
import { type Codec, capped, decoderMemoryCap, type EncodeSettings, effortOption, encoderMemoryCap, leanFailure, qualityOption } from './types'

/** libjpeg-turbo's settings for the common ones: progressive from effort 3, Huffman tables always optimised. */
export const turboJpegSettings = ({ quality, effort }: EncodeSettings): LeanJpegSettings => ({ quality, progressive: effort >= 3, optimize: true, mozjpeg: false })

/**
 * MozJPEG's (effort 3 and up): trellis quantisation, each row as it is transformed, progressive scans chosen by
 * trial (at effort 3 its fixed script instead: the same pixels, 0.4-0.7x the time, a few % more bytes); trellis per scan
 * in passes where the plan says (`trellisPasses`). 4:2:0 chroma, as libjpeg-turbo and sharp write.
 */
const mozJpegSettings = ({ quality, effort, trellisPasses }: EncodeSettings): LeanJpegSettings => ({
  quality,
  progressive: true,
  optimize: true,
  mozjpeg: trellisPasses ? 'multipass' : effort <= 3 ? 'trellis-fixed-scans' : 'trellis',
})

/**
 * The lean JPEG encoder's settings for a plan's choice: MozJPEG's trellis, or (`turbo`) libjpeg-turbo's behaviour,
 * which without `buffered` coefficients is baseline with the standard tables (a band of rows held).
 */
export const leanJpegSettings = (settings: EncodeSettings, buffered = true): LeanJpegSettings =>
  !settings.turbo ? mozJpegSettings(settings)
  : buffered ? turboJpegSettings(settings)
  : { quality: settings.quality, progressive: false, optimize: false, mozjpeg: false }

export const jpeg: Codec = {
  id: 'jpeg',
  label: 'JPEG (MozJPEG 4.1.5, row by row in the lean codec: its trellis from effort 3, its libjpeg-turbo profile at effort 0-2)',
  mime: 'image/jpeg',
  extensions: ['jpg', 'jpeg'],
  lossy: true,
  lossless: false,
  alpha: false,
  orientsItself: true,
  autoQuality: { target: 73, low: 20, high: 95 },
  options: {
    quality: qualityOption(80),
    effort: effortOption(4, 'libjpeg-turbo at 0-2 (baseline, optimised Huffman tables: fast, as sharp\'s default); MozJPEG at 3-7 (progressive, trellis quantisation of each row as it is transformed: smaller files, at every size; at 3 with MozJPEG\'s fixed progressive script, at 4-7 with the scans chosen by trial, a few % smaller in about 1.7x the time) and 8-9 (trellis per scan, in passes over a copy of every coefficient, up to about 8 MP; above, as 3-7). Where MozJPEG does not fit the memory budget, libjpeg-turbo progressive.'),
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
    return { bytes: leanCodec(encoderMemoryCap()).encodeJpeg(image, leanJpegSettings(settings)) }
  },
}
