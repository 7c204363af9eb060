/**
 * Each format's metadata reader, stripper and writer (src/formats/<format>/metadata.ts) on real files: what is
 * written is read back, what is stripped is gone, and the image still decodes to the same pixels.
 */
import { describe, expect, it } from 'vitest'
import { readJpegMetadata, stripJpegMetadata, writeJpegMetadata } from '../../src/formats/jpeg/metadata'
import { readPngMetadata, stripPngMetadata, writePngMetadata } from '../../src/formats/png/metadata'
import { exifForOutput, exifOrientation } from '../../src/formats/shared/exif'
import { joinParts } from '../../src/lib/bytes'
import { readWebpMetadata, stripWebpMetadata, writeWebpMetadata } from '../../src/formats/webp/metadata'
import { fixture } from '../helpers/fixtures'
import { decode, psnr } from '../helpers/image'

const text = (s: string) => new TextEncoder().encode(s)
/** A little-endian TIFF with Orientation 6 and a 12-byte Copyright. */
const EXIF = Uint8Array.of(0x49, 0x49, 42, 0, 8, 0, 0, 0, 2, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, 6, 0, 0, 0, 0x98, 0x82, 2, 0, 12, 0, 0, 0, 38, 0, 0, 0, 0, 0, 0, 0, ...text('(c) someone\0'))
const sample = { exif: EXIF, xmp: text('<x:xmpmeta/>'), icc: fixture('colour/p3.jpg').subarray(20, 200) }

describe.each([
  ['jpeg', 'photo.jpg', readJpegMetadata, writeJpegMetadata, stripJpegMetadata],
  ['png', 'photo.png', readPngMetadata, writePngMetadata, stripPngMetadata],
  ['webp', 'photo.webp', readWebpMetadata, writeWebpMetadata, stripWebpMetadata],
] as const)('%s', (_format, name, read, write, strip) => {
  it('reads back what it writes, and strips it again to a file that decodes to the same pixels', async () => {
    const plain = fixture(name)
    const written = await write(plain, sample)
    const found = await read(written)
    expect(found.exif).toEqual(sample.exif)
    expect(found.xmp).toEqual(sample.xmp)
    expect(found.icc).toEqual(sample.icc)
    const stripped = joinParts(strip(written))
    expect(await read(stripped)).toEqual({})
    expect(psnr((await decode(stripped)).image, (await decode(plain)).image)).toBe(Number.POSITIVE_INFINITY)
  })

  it('leaves a file without metadata as it is (one view, no copy)', async () => {
    const parts = strip(fixture(name))
    expect(parts).toHaveLength(1)
  })
})

describe('EXIF for the answer', () => {
  it('keep: everything, with the orientation set to 1', () => {
    const kept = exifForOutput(EXIF, 'keep')!
    expect(exifOrientation(kept)).toBe(1)
    expect(kept.length).toBe(EXIF.length)
  })

  it('copyright: a new block with the Copyright only, no orientation', () => {
    const kept = exifForOutput(EXIF, 'copyright')!
    expect(exifOrientation(kept)).toBe(1)
    expect(new TextDecoder().decode(kept)).toContain('(c) someone')
    expect(kept.length).toBeLessThan(EXIF.length)
  })

  it('broken EXIF is dropped, never an error', () => {
    expect(exifForOutput(EXIF.subarray(0, 20), 'copyright')).toBeUndefined()
    expect(exifForOutput(text('not a tiff'), 'keep')).toBeUndefined()
  })
})
