import { GifReader } from 'omggif'
import type { Codec } from './types'
import { DecodeFailure } from './types'

/** GIF input: the first frame, composited onto a transparent canvas of the logical screen size. */
export const gif: Codec = {
  id: 'gif',
  label: 'GIF (first frame)',
  mime: 'image/gif',
  extensions: ['gif'],
  lossy: false,
  lossless: true,
  alpha: true,
  options: {},
  async decode(bytes) {
    let reader: GifReader
    try {
      reader = new GifReader(bytes)
      const pixels = new Uint8ClampedArray(reader.width * reader.height * 4)
      reader.decodeAndBlitFrameRGBA(0, pixels)
      return new ImageData(pixels, reader.width, reader.height)
    } catch (error) {
      throw new DecodeFailure(`GIF data could not be decoded: ${(error as Error).message}`)
    }
  },
}
