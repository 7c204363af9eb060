/**
 * How JPEG input is converted (src/pipeline/limits.ts `planConversion`): a JPEG kept at its size
 * becomes a lossy WebP, or a JPEG at effort 0-2 or too large for MozJPEG within the memory budget, in one pass of the
 * lean codec (libjpeg-turbo + libwebp, wasm/lean/lean.c); everything else is decoded to pixels,
 * scaled in the DCT when the output is smaller. Each of those paths applies the EXIF orientation
 * itself, so every orientation goes through each.
 *
 * Inputs: exif-6.upright.png (180x120) stored as each orientation needs (the inverse turn), as a
 * quality-95 JPEG with an Exif Orientation tag. PSNR floor as in orientation.test.ts (27 dB: a
 * re-encode at quality 80 measures 30-32 dB there; a wrong turn is far under 15 dB or the wrong size).
 */
import { describe, expect, it } from 'vitest'
import { CODECS } from '../../src/codecs/registry'
import { readHeader } from '../../src/pipeline/sniff'
import { orient } from '../../src/pipeline/transform'
import { compress, expectProblem, MIME, okBytes } from '../helpers/api'
import { firstDifference, jpegWithBogusHuffmanTable, withExifOrientation } from '../helpers/bytes'
import { fixture } from '../helpers/fixtures'
import { jpegSof, prng } from '../helpers/hostile'
import { mozjpeg, mozjpegDecode } from '../helpers/mozjpeg'
import { decode, psnr } from '../helpers/image'
import { referenceResize } from '../helpers/reference'
import { callWorker } from '../helpers/worker'

const FLOOR = 27
/** The orientation that undoes each one (6 and 8 undo each other; the rest undo themselves). */
const INVERSE: Record<number, number> = { 1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 8, 7: 7, 8: 6 }
/**
 * A budget MozJPEG's trellis cannot fit for the 1200x750 large.jpg (estimate 23 MiB through the row pipeline)
 * but the one-pass route through its libjpeg-turbo profile can (20 MiB).
 */
const TIGHT = { MEMORY_BUDGET_MIB: '22' }

const uprightPicture = async () => (await decode(fixture('exif-6.upright.png'))).image

/** large.jpg's pixels (decoded once). */
let large: Promise<ImageData> | undefined
const largePicture = () => (large ??= decode(fixture('large.jpg')).then(({ image }) => new ImageData(image.data.slice(), image.width, image.height)))

async function storedAs(orientation: number, upright: ImageData): Promise<Uint8Array> {
  const stored = orient(upright, INVERSE[orientation]!)
  return withExifOrientation(await mozjpeg(stored, { quality: 95 }), orientation)
}

async function expectUpright(res: Response, format: string, upright: ImageData): Promise<void> {
  const out = await decode(await okBytes(res))
  expect(out.format).toBe(format)
  expect([out.image.width, out.image.height]).toEqual([upright.width, upright.height])
  const score = psnr(upright, out.image)
  expect(score, `PSNR ${score.toFixed(2)} dB`).toBeGreaterThan(FLOOR)
}

const post = (body: Uint8Array, query: string, vars: Record<string, string> = {}) =>
  callWorker(`/api/compress?${query}`, { method: 'POST', body, headers: { 'Content-Type': MIME.jpeg } }, vars)

/** A copy of `width` x `height` pixels of `image` from (`x`, `y`). */
function cropped(image: ImageData, x: number, y: number, width: number, height: number): ImageData {
  const out = new ImageData(width, height)
  for (let row = 0; row < height; row++) {
    const from = ((y + row) * image.width + x) * 4
    out.data.set(image.data.subarray(from, from + width * 4), row * width * 4)
  }
  return out
}

describe('EXIF orientation on every route', () => {
  for (let orientation = 1; orientation <= 8; orientation++) {
    it(`turns an orientation-${orientation} JPEG upright as a WebP in one pass`, async () => {
      const upright = await uprightPicture()
      await expectUpright(await post(await storedAs(orientation, upright), 'format=webp'), 'webp', upright)
    })

    it(`turns an orientation-${orientation} JPEG upright as a JPEG through MozJPEG`, async () => {
      const upright = await uprightPicture()
      await expectUpright(await post(await storedAs(orientation, upright), 'format=jpeg'), 'jpeg', upright)
    })

    it(`turns an orientation-${orientation} JPEG upright as a JPEG in one pass (effort 2: libjpeg-turbo's profile)`, async () => {
      const upright = await largePicture()
      const res = await post(await storedAs(orientation, upright), 'format=jpeg&effort=2')
      const out = await okBytes(res.clone())
      expect(out[jpegSof(out) + 1]).toBe(0xc0)
      await expectUpright(res, 'jpeg', upright)
    })

    it(`turns an orientation-${orientation} JPEG upright when decoding to pixels at a DCT-scaled size`, async () => {
      const res = await post(await storedAs(orientation, await uprightPicture()), 'format=png&width=90')
      const out = await decode(await okBytes(res))
      expect([out.image.width, out.image.height]).toEqual([90, 60])
      const score = psnr((await decode(await okBytes(await compress(fixture('exif-6.upright.png'), { width: 90 })))).image, out.image)
      expect(score, `PSNR ${score.toFixed(2)} dB against the PNG resized`).toBeGreaterThan(FLOOR)
    })
  }
})

describe('JPEG routes', () => {
  it('re-encodes a JPEG that MozJPEG cannot fit in the budget instead of refusing it', async () => {
    const source = fixture('large.jpg')
    const res = await post(source, 'format=jpeg', TIGHT)
    const out = await decode(await okBytes(res))
    expect([out.image.width, out.image.height]).toEqual([1200, 750])
    expect(Number.parseInt(res.headers.get('x-memory-estimate') ?? '', 10)).toBeLessThanOrEqual(22)
    const score = psnr((await decode(source)).image, out.image)
    expect(score, `PSNR ${score.toFixed(2)} dB`).toBeGreaterThan(30)
  })

  it('writes a baseline libjpeg-turbo JPEG at effort 0-2, a smaller progressive MozJPEG one at effort 4', async () => {
    const source = fixture('large.jpg')
    for (const query of ['format=jpeg&effort=2&quality=70', 'format=jpeg&effort=0&quality=70&width=600']) {
      const fast = await okBytes(await post(source, query))
      expect(fast[jpegSof(fast) + 1], query).toBe(0xc0)
      const careful = await okBytes(await post(source, query.replace(/effort=\d/, 'effort=4')))
      expect(careful[jpegSof(careful) + 1], query).toBe(0xc2)
      expect(careful.length, query).toBeLessThan(fast.length)
      expect(psnr((await decode(fast)).image, (await decode(careful)).image), query).toBeGreaterThan(30)
    }
  })

  it('encodes with MozJPEG\'s trellis per scan at effort 9: byte for byte what jSquash\'s MozJPEG writes from the same pixels', async () => {
    const png = fixture('photo.png')
    const { image } = await decode(png)
    const res = await callWorker('/api/compress?format=jpeg&quality=80&effort=9', { method: 'POST', body: png, headers: { 'Content-Type': MIME.png } })
    const reference = await mozjpeg(image, { quality: 80, progressive: true, optimize_coding: true, trellis_multipass: true, auto_subsample: false, chroma_subsample: 2 })
    expect(Buffer.from(await okBytes(res)).equals(Buffer.from(reference))).toBe(true)
  })

  it("encodes with MozJPEG's trellis a row at a time at effort 4: no more than 2 % over the bytes MozJPEG's own passes write, as close to the source", async () => {
    for (const name of ['photo.png', 'large.jpg']) {
      const source = fixture(name)
      const { image } = await decode(source)
      // (large.jpg at quality 95 would come back as itself: never bigger than the input)
      for (const quality of name.endsWith('.png') ? [50, 80, 95] : [50, 80]) {
        const headers = { 'Content-Type': name.endsWith('.png') ? MIME.png : MIME.jpeg }
        const ours = await okBytes(await callWorker(`/api/compress?format=jpeg&quality=${quality}&effort=4`, { method: 'POST', body: source, headers }))
        const reference = await mozjpeg(image, { quality, progressive: true, optimize_coding: true, auto_subsample: false, chroma_subsample: 2 })
        const at = `${name} q${quality}: ${ours.length} bytes against ${reference.length}`
        expect(ours[jpegSof(ours) + 1], at).toBe(0xc2)
        expect(ours.length / reference.length, at).toBeLessThan(1.02)
        const [mine, theirs] = [psnr(image, (await decode(ours)).image), psnr(image, (await decode(reference)).image)]
        expect(mine, `${at}, PSNR ${mine.toFixed(2)} against ${theirs.toFixed(2)} dB`).toBeGreaterThan(theirs - 0.1)
      }
    }
  })

  it("writes MozJPEG's fixed progressive script at effort 3 instead of its scan search: the same pixels as effort 4", async () => {
    // Each scan's components, spectral band and successive approximation (Ah, Al), from its SOS header; an SOS marker
    // cannot occur inside entropy-coded data (an 0xFF there is followed by 0x00 or a restart marker).
    const scans = (jpeg: Uint8Array) => {
      const out: string[] = []
      for (let i = 0; i + 1 < jpeg.length; i++) {
        if (jpeg[i] !== 0xff || jpeg[i + 1] !== 0xda) continue
        const n = jpeg[i + 4]!
        const at = i + 5 + 2 * n
        out.push(`${Array.from({ length: n }, (_, c) => jpeg[i + 5 + 2 * c]).join('+')}:${jpeg[at]}-${jpeg[at + 1]}/${jpeg[at + 2]! >> 4}${jpeg[at + 2]! & 15}`)
      }
      return out
    }
    // jpgcrush's script for YCbCr that MozJPEG's simple progression writes: DC of all three, the low luma and chroma
    // bands, the rest of luma's, luma's last two bits, then the rest of chroma's (components 1 Y, 2 Cb, 3 Cr).
    const fixed = ['1+2+3:0-0/00', '1:1-8/02', '2:1-8/00', '3:1-8/00', '1:9-63/02', '1:1-63/21', '1:1-63/10', '2:9-63/00', '3:9-63/00']
    for (const name of ['photo.png', 'large.jpg']) {
      const source = fixture(name)
      const headers = { 'Content-Type': name.endsWith('.png') ? MIME.png : MIME.jpeg }
      const at = (effort: number) => callWorker(`/api/compress?format=jpeg&quality=80&effort=${effort}`, { method: 'POST', body: source, headers }).then(okBytes)
      const [three, four] = [await at(3), await at(4)]
      expect(scans(three), name).toEqual(fixed)
      expect(scans(four), name).not.toEqual(fixed)
      // (firstDifference, not toEqual: toEqual walks large.jpg's 3.6 MB of pixels element by element, for seconds)
      const pixels = async (jpeg: Uint8Array) => {
        const { data } = (await decode(jpeg)).image
        return new Uint8Array(data.buffer, data.byteOffset, data.length)
      }
      expect(firstDifference(await pixels(three), await pixels(four)), name).toBe(-1)
      expect(three.length / four.length, name).toBeLessThan(1.1)
    }
  })

  it("decodes byte for byte as MozJPEG's C code does (the lean codec's IDCT and YCbCr conversion are WebAssembly SIMD)", async () => {
    // Saturated hues with strong noise, so the IDCT's samples and the decoded YCbCr fall outside their range and are
    // clamped (at quality 5 the ringing is large); 250 px wide, so each row ends with pixels the 16-pixel steps leave to
    // the scalar code. 4:4:4 and 4:2:0 (upsampled before the conversion).
    const random = prng(11)
    const [width, height] = [250, 130]
    const data = new Uint8ClampedArray(width * height * 4)
    for (let i = 0; i < width * height; i++) {
      const hue = ((i % width) / width) * 6
      const rgb = [Math.abs(hue - 3) - 1, 2 - Math.abs(hue - 2), 2 - Math.abs(hue - 4)].map((v) => Math.min(1, Math.max(0, v)) * 255)
      rgb.forEach((v, c) => (data[4 * i + c] = v + (random() - 0.5) * 160))
      data[4 * i + 3] = 255
    }
    for (const [quality, chroma_subsample] of [[98, 1], [98, 2], [5, 2]] as const) {
      const jpeg = await mozjpeg(new ImageData(data, width, height), { quality, auto_subsample: false, chroma_subsample })
      const ours = await CODECS.jpeg.decode!(jpeg, readHeader(jpeg))
      const reference = await mozjpegDecode(jpeg)
      expect(Buffer.from(ours.data.buffer, ours.data.byteOffset, ours.data.byteLength).equals(Buffer.from(reference.data.buffer, reference.data.byteOffset, reference.data.byteLength)), `quality ${quality}, chroma ${chroma_subsample}`).toBe(true)
    }
  })

  it('writes 4:2:0 chroma on every JPEG route and quality, as sharp does', async () => {
    // A 4:4:4 quality-100 source: larger than any re-encode, so the never-bigger rule keeps out of the way.
    const picture = await largePicture()
    const source = await mozjpeg(picture, { quality: 100, auto_subsample: false, chroma_subsample: 1 })
    // Sampling factors of the three components in the frame header: luma 2x2, chroma 1x1.
    const sampling = (jpeg: Uint8Array) => [0, 1, 2].map((c) => jpeg[jpegSof(jpeg) + 11 + 3 * c])
    const routes: [string, Record<string, string>][] = [
      ['format=jpeg&effort=2', {}],
      ['format=jpeg&effort=4', {}],
      // One pass through the libjpeg-turbo profile: this quality-100 4:4:4 source's file needs 24 MiB, the trellis 27
      // (its progressive coefficients are charged by its file, 4.5 MiB per MiB at most).
      ['format=jpeg&effort=4', { MEMORY_BUDGET_MIB: '24' }],
    ]
    for (const quality of [80, 95]) {
      for (const [query, vars] of routes) {
        const res = await post(source, `${query}&quality=${quality}`, vars)
        if (vars.MEMORY_BUDGET_MIB) expect(Number(res.headers.get('x-memory-estimate')?.split(' ')[0])).toBeLessThanOrEqual(24)
        const out = await okBytes(res)
        expect(sampling(out), `${query} quality ${quality} ${JSON.stringify(vars)}`).toEqual([0x22, 0x11, 0x11])
      }
    }
  })

  it("keeps a 4:2:0 JPEG's own chroma when it is re-encoded at its size: its planes go through, not converted to RGB and back", async () => {
    // flat-420.jpg (bands of flat colour, 203x101: partial blocks and MCUs at both edges), and large.jpg as a
    // progressive 4:2:0 JPEG. Through RGB, the chroma was upsampled and downsampled again, blurring every colour edge:
    // 37.1 and 39.7 dB from the source's pixels at quality 80, where the planes passed through give 45.0 and 40.2.
    const progressive = await mozjpeg(await largePicture(), { quality: 90, progressive: true, auto_subsample: false, chroma_subsample: 2 })
    for (const [name, source, floor] of [['flat-420.jpg', fixture('flat-420.jpg'), 42], ['large.jpg, progressive', progressive, 39.95]] as const) {
      const input = (await decode(source)).image
      const out = await decode(await okBytes(await post(source, 'format=jpeg&effort=2&quality=80')))
      expect([out.image.width, out.image.height]).toEqual([input.width, input.height])
      expect(psnr(out.image, input), name).toBeGreaterThan(floor)
    }
  })

  it('passes the planes of tiny 4:2:0 JPEGs through whole: every edge block and a last iMCU row shorter than its 16 rows', async () => {
    // Sizes whose one iMCU row is shorter than its 16 rows (5, 9 and 3 rows), or whose one iMCU column is narrower than
    // 16 (9 px), odd both ways, baseline and progressive. A gradient with saturated corners, so a lost or shifted edge
    // block shows in the PSNR against the source's own pixels (38.2-44.0 dB here).
    for (const [width, height] of [[17, 5], [33, 9], [9, 31], [65, 3]] as const) {
      const picture = new ImageData(width, height)
      for (let y = 0; y < height; y++) {
        for (let x = 0; x < width; x++) picture.data.set([(255 * x) / Math.max(1, width - 1), (255 * y) / Math.max(1, height - 1), 128, 255], 4 * (y * width + x))
      }
      for (const progressive of [false, true]) {
        // (quality 100 in, 85 out: smaller, so the never-bigger rule does not answer with the input itself)
        const source = await mozjpeg(picture, { quality: 100, progressive, auto_subsample: false, chroma_subsample: 2 })
        const input = (await decode(source)).image
        const res = await post(source, 'format=jpeg&effort=2&quality=85')
        const at = `${width}x${height}${progressive ? ', progressive' : ''}`
        expect(res.headers.get('x-original-returned'), at).toBeNull()
        const out = (await decode(await okBytes(res))).image
        expect([out.width, out.height], at).toEqual([width, height])
        expect(psnr(out, input), at).toBeGreaterThan(34)
      }
    }
  })

  it('writes the last odd row and column of a JPEG converted to WebP in one pass', async () => {
    // The upright route converts two rows at a time; the others pixel by pixel. Odd sizes leave 2x2
    // chroma cells with one row or one column, which each route must average from the pixels it has.
    // Saturated colour at the far edges (red right, green at the bottom), so wrong chroma there shows.
    const upright = new ImageData(179, 119)
    for (let y = 0; y < upright.height; y++) {
      for (let x = 0; x < upright.width; x++) {
        const r = Math.round((255 * x) / (upright.width - 1))
        const g = Math.round((255 * y) / (upright.height - 1))
        upright.data.set([r, g, 255 - Math.max(r, g), 255], (y * upright.width + x) * 4)
      }
    }
    for (const orientation of [1, 6]) {
      const out = (await decode(await okBytes(await post(await storedAs(orientation, upright), 'format=webp')))).image
      expect([out.width, out.height]).toEqual([upright.width, upright.height])
      const { width: w, height: h } = upright
      const regions: [string, [number, number, number, number]][] = [
        ['last column', [w - 1, 0, 1, h]],
        ['last row', [0, h - 1, w, 1]],
      ]
      for (const [name, [x, y, rw, rh]] of regions) {
        const score = psnr(cropped(upright, x, y, rw, rh), cropped(out, x, y, rw, rh))
        expect(score, `orientation ${orientation}, ${name}: PSNR ${score.toFixed(2)} dB`).toBeGreaterThan(FLOOR)
      }
    }
  })

  it('still refuses with 422 operation_too_large what no route fits', async () => {
    const problem = await expectProblem(await post(fixture('large.jpg'), 'format=jpeg', { MEMORY_BUDGET_MIB: '12' }), 'operation_too_large', 422)
    expect(problem.detail).toMatch(/MEMORY_BUDGET_MIB/)
  })

  it('keeps a downscale from a DCT-scaled decode close to the full-size decode resized', async () => {
    const scaled = await decode(await okBytes(await post(fixture('large.jpg'), 'format=png&width=300')))
    expect([scaled.image.width, scaled.image.height]).toEqual([300, 188])
    // Against the full-size pixels resampled with Lanczos3 alone: measured 43.0 dB (decoded at 4/8,
    // 600x375, then Lanczos3). Decoding straight at 300x188 (2/8) scored 29.7 dB, at 3/8 31.8 dB, and
    // 4/8 with a 2x box shrink before Lanczos3 (the transform before) 40.7 dB.
    const full = await largePicture()
    const reference = await referenceResize(full, 300, 188)
    const score = psnr(reference, scaled.image)
    expect(score, `PSNR ${score.toFixed(2)} dB`).toBeGreaterThan(41)
  })

  it('charges less memory for a downscale of a large JPEG than for its full size', async () => {
    const full = await post(fixture('large.jpg'), 'format=webp&effort=4&lossless=true')
    const small = await post(fixture('large.jpg'), 'format=webp&effort=4&lossless=true&width=300')
    const mib = (res: Response) => Number.parseInt(res.headers.get('x-memory-estimate') ?? '', 10)
    expect(mib(small)).toBeLessThan(mib(full))
  })

  for (const format of ['webp', 'jpeg'] as const) {
    it(`answers 422 corrupt_image for a truncated JPEG going to ${format} in one pass`, async () => {
      const vars = format === 'jpeg' ? TIGHT : {}
      const source = fixture('large.jpg')
      const problem = await expectProblem(await post(source.slice(0, source.length >> 1), `format=${format}`, vars), 'corrupt_image', 422)
      expect(problem.detail).toMatch(/truncated/)
    })

    it(`answers 422 corrupt_image with libjpeg's reason for a broken JPEG going to ${format} in one pass, then serves the next`, async () => {
      const vars = format === 'jpeg' ? TIGHT : {}
      const problem = await expectProblem(await post(jpegWithBogusHuffmanTable(fixture('large.jpg')), `format=${format}`, vars), 'corrupt_image', 422)
      expect(problem.detail).toMatch(/libjpeg: Bogus Huffman table definition/)
      expect((await post(fixture('photo.jpg'), `format=${format}`)).status).toBe(200)
    })
  }
})
