/**
 * AVIF output's chroma subsampling, read from the colour item's av1C box (AV1CodecConfigurationRecord:
 * byte 1 seq_profile in its top 3 bits; byte 2 seq_tier_0, high_bitdepth, twelve_bit, monochrome,
 * chroma_subsampling_x, chroma_subsampling_y, chroma_sample_position (2 bits), from the top bit).
 *
 * Lossy AVIF is 4:2:0 (jSquash `subsample: 1`, Main profile; converted from RGB by libsharpyuv),
 * lossless 4:4:4 (`subsample: 3`, High profile). 4:4:4 for lossy output was measured and not adopted: at the SSIM of sharp's default AVIF it
 * needed 0.89-1.04x the bytes of 4:2:0 depending on the photo, for 1.3-2.3x libaom's CPU time and about
 * 11 MiB more memory per megapixel (scripts/lib/avif-explore.mjs).
 */
import { describe, expect, it } from 'vitest'
import { compress, okBytes } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import { decode, psnr } from '../helpers/image'

interface Av1Config {
  profile: number
  monochrome: boolean
  subsamplingX: number
  subsamplingY: number
}

/** The first av1C box of an AVIF (libavif writes the colour item's properties first, before mdat). */
function av1Config(bytes: Uint8Array): Av1Config {
  for (let i = 4; i + 8 <= bytes.length; i++) {
    if (bytes[i] === 0x61 && bytes[i + 1] === 0x76 && bytes[i + 2] === 0x31 && bytes[i + 3] === 0x43) {
      const body = i + 4
      expect(bytes[body]).toBe(0x81) // marker 1, version 1
      const flags = bytes[body + 2]!
      return { profile: bytes[body + 1]! >> 5, monochrome: Boolean(flags & 0x10), subsamplingX: (flags >> 3) & 1, subsamplingY: (flags >> 2) & 1 }
    }
  }
  throw new Error('no av1C box')
}

describe('avif output', () => {
  it('writes lossy AVIF as 4:2:0 (av1C subsampling x = y = 1, Main profile), close to the source', async () => {
    const src = await decode(fixture('photo.png'))
    const res = await compress(fixture('photo.png'), { format: 'avif' })
    const body = await okBytes(res)
    expect(res.headers.get('x-effort')).toBe('4')
    expect(av1Config(body)).toEqual({ profile: 0, monochrome: false, subsamplingX: 1, subsamplingY: 1 })
    const out = await decode(body)
    expect(out.format).toBe('avif')
    expect([out.image.width, out.image.height]).toEqual([480, 300])
    // The formats matrix measured 29.2 dB for quality 50 at effort 0 on this image; the floor sits under it.
    expect(psnr(src.image, out.image)).toBeGreaterThan(27)
  })

  it('writes lossless AVIF as 4:4:4 (High profile), visually exact', async () => {
    const src = await decode(fixture('photo.png'))
    const body = await okBytes(await compress(fixture('photo.png'), { format: 'avif', lossless: true, effort: 0 }))
    expect(av1Config(body)).toEqual({ profile: 1, monochrome: false, subsamplingX: 0, subsamplingY: 0 })
    expect(psnr(src.image, (await decode(body)).image)).toBeGreaterThan(50)
  })
})
