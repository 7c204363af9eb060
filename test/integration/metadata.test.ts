/**
 * The `metadata` option: `none` (default) strips everything, `copyright` keeps EXIF Artist and Copyright, `keep`
 * keeps EXIF (orientation reset to 1), XMP and the ICC profile, whose colours the pixels then stay in. The input is a
 * test photo given, here, a big-endian EXIF block, an XMP packet and the Display P3 profile of the colour fixtures;
 * answers are checked by searching their bytes and by the sniffer, not by the code that wrote them.
 */
import { describe, expect, it } from 'vitest'
import expected from '../fixtures/colour/expected.json'
import { compress, okBytes } from '../helpers/api'
import { jpegSegment, withJpegSegments } from '../helpers/bytes'
import { fixture } from '../helpers/fixtures'
import { decode, pixel } from '../helpers/image'
import { readHeader } from '../../src/pipeline/sniff'

const ARTIST = 'Ada Photographer'
const COPYRIGHT = '(c) 2026 Ada Photographer, all rights reserved'
const MAKE = 'CameraMaker Inc'
const XMP_MARK = 'imgedge-xmp-test-packet'
const PROFILE_NAME = 'Display P3 (imgedge test)'

const text = (s: string) => new TextEncoder().encode(s)
const has = (bytes: Uint8Array, s: string) => {
  const needle = text(s)
  outer: for (let i = 0; i + needle.length <= bytes.length; i++) {
    for (let k = 0; k < needle.length; k++) if (bytes[i + k] !== needle[k]) continue outer
    return true
  }
  return false
}

/** A big-endian TIFF block: IFD0 with Make, Orientation, Artist and Copyright. */
function exif(orientation: number): Uint8Array {
  const strings = [MAKE, ARTIST, COPYRIGHT].map((s) => text(`${s}\0`))
  const entries = 4
  const dataAt = 8 + 2 + entries * 12 + 4
  const size = dataAt + strings.reduce((sum, s) => sum + s.length, 0)
  const out = new Uint8Array(size)
  const view = new DataView(out.buffer)
  out.set([0x4d, 0x4d, 0, 42, 0, 0, 0, 8])
  view.setUint16(8, entries)
  let data = dataAt
  const ascii = (entry: number, tag: number, s: Uint8Array) => {
    view.setUint16(entry, tag)
    view.setUint16(entry + 2, 2)
    view.setUint32(entry + 4, s.length)
    view.setUint32(entry + 8, data)
    out.set(s, data)
    data += s.length
  }
  ascii(10, 0x010f, strings[0]!)
  view.setUint16(22, 0x0112)
  view.setUint16(24, 3)
  view.setUint32(26, 1)
  view.setUint16(30, orientation)
  ascii(34, 0x013b, strings[1]!)
  ascii(46, 0x8298, strings[2]!)
  return out
}

/** `jpeg` with EXIF, XMP and the P3 profile of colour/p3.jpg after SOI. */
function tagged(jpeg: Uint8Array, orientation = 1): Uint8Array {
  const p3 = fixture('colour/p3.jpg')
  const iccLength = (p3[4]! << 8) | p3[5]!
  const icc = p3.subarray(2, 4 + iccLength)
  const xmp = text(`<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:Description tiff:Orientation="${orientation}" dc:source="${XMP_MARK}"/></x:xmpmeta>`)
  return withJpegSegments(jpeg, jpegSegment(0xe1, text('Exif\0\0'), exif(orientation)), jpegSegment(0xe1, text('http://ns.adobe.com/xap/1.0/\0'), xmp), icc)
}

const photo = () => tagged(fixture('photo.jpg'))
const send = async (bytes: Uint8Array, query: Record<string, string | number>) => okBytes(await compress(bytes, query, { contentType: 'image/jpeg' }))

describe('metadata=none (default): nothing but pixels', () => {
  for (const format of ['jpeg', 'png', 'webp', 'avif']) {
    it(`${format}: no EXIF, XMP or profile`, async () => {
      const out = await send(photo(), { format, width: 240, effort: 0 })
      expect(readHeader(out).format).toBe(format)
      for (const s of [ARTIST, COPYRIGHT, MAKE, XMP_MARK, PROFILE_NAME]) expect(has(out, s), s).toBe(false)
    })
  }

  it('a JPEG answered with itself (never bigger) is answered stripped', async () => {
    const input = photo()
    const res = await compress(input, { format: 'jpeg', quality: 100, effort: 0 }, { contentType: 'image/jpeg' })
    // The P3 profile makes this a colour conversion, so the input cannot be the answer: send one without it.
    expect(res.headers.get('x-original-returned')).not.toBe('true')
    const plain = withJpegSegments(fixture('photo.jpg'), jpegSegment(0xe1, text('Exif\0\0'), exif(1)))
    const again = await compress(plain, { format: 'jpeg', quality: 100, effort: 0 }, { contentType: 'image/jpeg' })
    const body = await okBytes(again)
    expect(again.headers.get('x-original-returned')).toBe('true')
    expect(has(body, COPYRIGHT) || has(body, MAKE)).toBe(false)
    expect(body.length).toBeLessThan(plain.length)
  })
})

describe('metadata=copyright: Artist and Copyright only', () => {
  for (const format of ['jpeg', 'png', 'webp', 'avif']) {
    it(`${format}: the photographer's names kept, the camera and the profile not`, async () => {
      const out = await send(photo(), { format, width: 240, effort: 0, metadata: 'copyright' })
      expect(readHeader(out).format).toBe(format)
      expect(has(out, ARTIST)).toBe(true)
      expect(has(out, COPYRIGHT)).toBe(true)
      for (const s of [MAKE, XMP_MARK, PROFILE_NAME]) expect(has(out, s), s).toBe(false)
    })
  }
})

describe('metadata=keep: EXIF, XMP and the profile, the colours left in it', () => {
  for (const format of ['jpeg', 'png', 'webp', 'avif']) {
    it(`${format}: every piece kept`, async () => {
      const out = await send(photo(), { format, width: 240, effort: 0, metadata: 'keep' })
      for (const s of [ARTIST, COPYRIGHT, MAKE, XMP_MARK]) expect(has(out, s), s).toBe(true)
      // PNG's iCCP is compressed: its name shows, the profile's own text does not.
      expect(has(out, format === 'png' ? 'iCCP' : PROFILE_NAME)).toBe(true)
    })
  }

  it('resets the orientation to 1 once the pixels are turned upright, in EXIF and in XMP', async () => {
    const input = tagged(fixture('exif-6.jpg'), 6)
    for (const format of ['jpeg', 'webp']) {
      const out = await send(input, { format, metadata: 'keep' })
      const header = readHeader(out)
      expect([header.width, header.height, header.orientation]).toEqual([180, 120, 1])
      expect(has(out, 'tiff:Orientation="1"')).toBe(true)
    }
  })

  it('leaves the pixels in the kept profile: a P3 PNG keeps its numbers and its profile', async () => {
    const res = await compress(fixture('colour/p3.png'), { format: 'png', metadata: 'keep' }, { contentType: 'image/png' })
    const body = await okBytes(res)
    expect(has(body, 'iCCP')).toBe(true)
    const out = await decode(body)
    const stored = [[200, 80, 60], [70, 160, 90], [60, 90, 180], [128, 128, 128]]
    expect([0, 1, 2, 3].map((i) => pixel(out.image, i * 16 + 8, 8).slice(0, 3))).toEqual(stored)
    // The default converts them (test/integration/colour.test.ts).
    const converted = await decode(await okBytes(await compress(fixture('colour/p3.png'), { format: 'png' }, { contentType: 'image/png' })))
    expect(pixel(converted.image, 8, 8).slice(0, 3)).toEqual((expected as Record<string, number[][]>)['p3.png']![0])
  })

  it('a CMYK profile is not kept (the answer is RGB): its colours are converted instead', async () => {
    const out = await send(fixture('colour/cmyk-constant.jpg'), { format: 'jpeg', metadata: 'keep' })
    expect(has(out, 'Constant CMYK')).toBe(false)
    const decoded = await decode(out)
    expect(pixel(decoded.image, 50, 50).slice(0, 3).every((v, k) => Math.abs(v - (expected as Record<string, number[][]>)['cmyk-constant.jpg']![0]![k]!) <= 3)).toBe(true)
  })
})

it('refuses an unknown metadata mode with 400 invalid_option', async () => {
  const res = await compress(photo(), { metadata: 'all' }, { contentType: 'image/jpeg' })
  expect(res.status).toBe(400)
  expect((await res.json<{ code: string }>()).code).toBe('invalid_option')
})
