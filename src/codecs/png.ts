import { leanCodec, oxipngRgba } from '../../wasm'
import { type Codec, capped, decoderMemoryCap, effortOption, leanFailure } from './types'

/** oxipng level for each effort step 0-9 (its own scale is 0-6; level 2 is its default). */
const OXIPNG_LEVELS = [0, 1, 1, 2, 2, 3, 4, 5, 6, 6] as const

/** Above this many pixels oxipng is held to level 1: higher levels try more filters, each a pass over the image (CPU time). */
export const PNG_LEAN_PIXELS = 4_000_000

export const png: Codec = {
  id: 'png',
  label: 'PNG (oxipng)',
  mime: 'image/png',
  extensions: ['png'],
  lossy: false,
  lossless: true,
  alpha: true,
  options: {
    effort: effortOption(4, 'oxipng optimisation level 0-6 (effort 4 = level 2); capped at level 1 above 4 MP.'),
  },
  async decode(bytes, header) {
    // libpng in the lean codec: the pixels stay in the decoder's memory (a view, not a copy).
    const cap = decoderMemoryCap()
    return capped(cap, header, () => leanFailure('libpng', () => leanCodec(cap).decodePng(bytes, header.width, header.height)))
  },
  async encode(image, { effort }) {
    const pixels = image.width * image.height
    const level = Math.min(OXIPNG_LEVELS[effort] ?? 2, pixels > PNG_LEAN_PIXELS ? 1 : 6)
    return oxipngRgba(image.data, image.width, image.height, level, false, true)
  },
}
