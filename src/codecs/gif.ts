import { type Codec, decodeFromRows } from './types'

/**
 * GIF input: the first frame on a transparent canvas of the logical screen size, decoded by giflib in
 * the lean codec (wasm/lean/gif_dec.c). Conversions take it as a row source (src/pipeline/rows.ts);
 * `decode`, the whole image, is the same rows collected.
 */
export const gif: Codec = {
  id: 'gif',
  label: 'GIF (first frame)',
  mime: 'image/gif',
  extensions: ['gif'],
  lossy: false,
  lossless: true,
  alpha: true,
  options: {},
  async decode(bytes, header) {
    return decodeFromRows('giflib', header, (lean) => lean.rowsFromGif(bytes, header.width, header.height))
  },
}
