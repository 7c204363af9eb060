/**
 * Generated hostile input, inside workerd: truncations at many offsets, seeded byte corruption, zero
 * bytes, text/HTML/SVG sent as images, headers declaring huge sizes, decompression bombs behind a
 * small header, a codec that traps, progressive JPEGs with thousands of scans, malformed multipart,
 * bodies over the limit that never end. Each one gets a 4xx application/problem+json with the code
 * it should have (never a 5xx, never a hang), and the next valid request is served.
 *
 * Everything is generated from the fixtures with test/helpers/hostile.ts and a fixed seed, so a
 * failure names an input that can be rebuilt exactly. errors.test.ts has the single-case errors;
 * this file has the generated families.
 */
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { CODECS } from '../../src/codecs/registry'
import { MAX_JPEG_SCANS, readHeader } from '../../src/pipeline/sniff'
import { type Query, compress, compressForm, expectProblem, okBytes } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import * as H from '../helpers/hostile'
import { decode, psnr } from '../helpers/image'
import { callWorker } from '../helpers/worker'

const LIMIT = Number((env as unknown as Record<string, string>).MAX_INPUT_BYTES)
/** The side of the smallest square over MAX_INPUT_PIXELS. */
const OVER_PIXELS_SIDE = Math.floor(Math.sqrt(Number((env as unknown as Record<string, string>).MAX_INPUT_PIXELS))) + 1

/** The codes a bad image body may get; which one is asserted where it is known. */
const IMAGE_ERRORS = ['corrupt_image', 'unsupported_format', 'image_too_large', 'operation_too_large']

const text = (s: string) => new TextEncoder().encode(s)

/** One tiny valid conversion: the worker still serves after whatever came before. */
async function expectStillServing(): Promise<void> {
  const res = await compress(fixture('s01n3p01.png'), undefined, { contentType: 'image/png' })
  expect(res.status, 'the next valid request').toBe(200)
  await res.arrayBuffer()
}

/** What one request got: "200 WxH format" or "status code", for readable failure lists. */
async function outcome(res: Response): Promise<{ status: number; code?: string; summary: string; problemJson: boolean }> {
  if (res.status === 200) {
    await res.arrayBuffer()
    return { status: 200, summary: `200 ${res.headers.get('x-output-width')}x${res.headers.get('x-output-height')}`, problemJson: false }
  }
  const body = await res.text()
  let code: string | undefined
  try {
    code = (JSON.parse(body) as { code?: string }).code
  } catch {
    code = undefined
  }
  return { status: res.status, code, summary: `${res.status} ${code ?? body.slice(0, 60)}`, problemJson: res.headers.get('content-type') === 'application/problem+json' }
}

/** [name, signature length (a shorter prefix is not recognised), the shortest cut that still holds every pixel the API converts]. */
const TRUNCATED: Array<[string, number, (b: Uint8Array) => number]> = [
  ['photo.jpg', 3, () => Infinity],
  ['progressive.jpg', 3, () => Infinity],
  ['exif-6.jpg', 3, () => Infinity],
  ['photo.png', 8, (b) => b.length - 12], // inside IEND: the image data is complete
  ['basi6a08.png', 8, (b) => b.length - 12],
  ['photo.webp', 12, () => Infinity],
  ['anim.webp', 12, firstAnmfEnd], // later frames cut: the first frame is complete
  ['photo.avif', 12, () => Infinity],
  ['alpha.gif', 6, (b) => b.length - 1], // only the trailer byte missing
  ['anim.gif', 6, firstGifFrameEnd], // later frames cut: the first frame is complete
]

/** Where a GIF's first image ends: after its descriptor, colour table and data sub-blocks. */
function firstGifFrameEnd(gif: Uint8Array): number {
  const table = (packed: number) => (packed & 0x80 ? 3 << ((packed & 7) + 1) : 0)
  const skipSubBlocks = (at: number) => {
    while (gif[at]) at += gif[at]! + 1
    return at + 1
  }
  for (let at = 13 + table(gif[10]!); at < gif.length; ) {
    if (gif[at] === 0x21) at = skipSubBlocks(at + 2)
    else if (gif[at] === 0x2c) return skipSubBlocks(at + 10 + table(gif[at + 9]!) + 1)
    else break
  }
  throw new Error('no image descriptor')
}

function firstAnmfEnd(webp: Uint8Array): number {
  const view = new DataView(webp.buffer, webp.byteOffset, webp.byteLength)
  for (let at = 12; at + 8 <= webp.length; ) {
    const size = view.getUint32(at + 4, true)
    if (String.fromCharCode(...webp.subarray(at, at + 4)) === 'ANMF') return at + 8 + size
    at += 8 + size + (size & 1)
  }
  throw new Error('no ANMF chunk')
}

describe('truncated images', () => {
  for (const [name, signature, complete] of TRUNCATED) {
    it(`${name} cut at each of ~30 offsets: 415 before the signature is whole, then 422 corrupt_image`, async () => {
      const bytes = fixture(name)
      const full = readHeader(bytes)
      const wrong: string[] = []
      for (const at of H.truncationOffsets(bytes.length, 4, 20261121)) {
        const got = await outcome(await compress(bytes.slice(0, at), { effort: 0 }, { contentType: 'application/octet-stream' }))
        const wantCode = at < signature ? 'unsupported_format' : 'corrupt_image'
        const wantStatus = at < signature ? 415 : 422
        const wholeEnough = at >= complete(bytes) && got.status === 200
        const turned = full.orientation >= 5
        const dims = `200 ${turned ? full.height : full.width}x${turned ? full.width : full.height}`
        if (wholeEnough ? got.summary !== dims : got.status !== wantStatus || got.code !== wantCode || !got.problemJson) {
          wrong.push(`cut at ${at}: got ${got.summary}, expected ${wantStatus} ${wantCode}${at >= complete(bytes) ? ` or ${dims}` : ''}`)
        }
        await expectStillServing()
      }
      expect(wrong).toEqual([])
    })
  }
})

describe('seeded byte corruption', () => {
  const FILES = ['photo.jpg', 'progressive.jpg', 'exif-6.jpg', 'photo.png', 'basi6a08.png', 'photo.webp', 'anim.webp', 'photo.avif', 'alpha.gif', 'anim.gif']
  const PER_FILE = 12
  for (const [index, name] of FILES.entries()) {
    it(`${name}: ${PER_FILE} mutants (bit flips, byte sets, deletes, duplicates, field edits) give 200 or a 4xx image error`, async () => {
      const random = H.prng(1000 + index)
      const source = fixture(name)
      const wrong: string[] = []
      for (let i = 0; i < PER_FILE; i++) {
        const mutant = H.mutate(source, random)
        const res = await compress(mutant.bytes, { effort: 0, width: 64 }, { contentType: 'application/octet-stream' })
        if (res.status === 200) {
          const out = await decode(await okBytes(res))
          if (out.image.width !== 64 && out.image.width > 64) wrong.push(`${mutant.description}: 200 but ${out.image.width} wide`)
        } else {
          const got = await outcome(res)
          if (got.status >= 500 || !got.problemJson || !IMAGE_ERRORS.includes(got.code ?? '')) wrong.push(`${mutant.description}: ${got.summary}`)
        }
        await expectStillServing()
      }
      expect(wrong).toEqual([])
    })
  }
})

describe('zero bytes', () => {
  for (const size of [1, 2, 7, 64, 4096]) {
    it(`answers 415 unsupported_format for ${size} zero bytes sent as image/png`, async () => {
      const body = await expectProblem(await compress(new Uint8Array(size), undefined, { contentType: 'image/png' }), 'unsupported_format', 415)
      expect(body.detected).toBeUndefined()
      await expectStillServing()
    })
  }

  const SIGNATURES: Array<[string, number[]]> = [
    ['PNG', [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]],
    ['JPEG', [0xff, 0xd8, 0xff]],
    ['GIF', [...text('GIF89a')]],
    ['WebP', [...text('RIFF'), 0, 0, 0, 0, ...text('WEBP')]],
    ['AVIF', [0, 0, 0, 0x18, ...text('ftypavif'), 0, 0, 0, 0, ...text('mif1avif')]],
  ]
  for (const [format, signature] of SIGNATURES) {
    it(`answers 422 corrupt_image for a ${format} signature followed by zero bytes`, async () => {
      const body = H.concat(Uint8Array.from(signature), new Uint8Array(1000))
      await expectProblem(await compress(body, undefined, { contentType: 'application/octet-stream' }), 'corrupt_image', 422)
      await expectStillServing()
    })
  }

  it('answers 422 corrupt_image for photo.png with its image data zeroed', async () => {
    const png = fixture('photo.png')
    const idat = H.concat(png.subarray(0, 41)) // signature, IHDR, then a chunk header
    const zeroed = png.slice()
    zeroed.fill(0, idat.length + 8, png.length - 12) // keep IHDR and the chunk header, zero the rest
    await expectProblem(await compress(H.fixPngCrcs(zeroed), undefined, { contentType: 'image/png' }), 'corrupt_image', 422)
    await expectStillServing()
  })
})

describe('text, HTML and SVG sent with an image Content-Type', () => {
  const TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/avif', 'image/gif', 'image/svg+xml', 'application/octet-stream']
  for (const { name, text: body, detected } of H.TEXT_BODIES) {
    it(`answers 415 unsupported_format (detected: ${detected}) for ${name} under ${TYPES.length} Content-Types`, async () => {
      for (const type of TYPES) {
        const problem = await expectProblem(await compress(text(body), undefined, { contentType: type }), 'unsupported_format', 415)
        expect(problem.detected, type).toBe(detected)
      }
      await expectStillServing()
    })
  }

  it('answers 415 unsupported_format for an SVG uploaded as a multipart file named photo.png', async () => {
    const form = new FormData()
    form.append('image', new File([text(H.TEXT_BODIES.find((t) => t.detected === 'svg')!.text)], 'photo.png', { type: 'image/png' }))
    const problem = await expectProblem(await compressForm(form), 'unsupported_format', 415)
    expect(problem.detected).toBe('svg')
    await expectStillServing()
  })
})

describe('headers that declare a huge size: refused from the header, in well under a second', () => {
  const CASES: Array<[string, () => Uint8Array, string]> = [
    ['PNG 65535x65535', () => H.pngWithSize(fixture('photo.png'), 65535, 65535), 'image_too_large'],
    ['PNG 2^31-1 x 1', () => H.pngWithSize(fixture('photo.png'), 0x7fffffff, 1), 'image_too_large'],
    [`PNG ${OVER_PIXELS_SIDE}x${OVER_PIXELS_SIDE} (just over MAX_INPUT_PIXELS)`, () => H.pngWithSize(fixture('photo.png'), OVER_PIXELS_SIDE, OVER_PIXELS_SIDE), 'image_too_large'],
    // Under the pixel limit and, since PNG output streams, within the memory budget: its missing pixel data refuses it, at once.
    ['PNG 4000x4000 (16 MP, its data a 480x300 image\'s)', () => H.pngWithSize(fixture('photo.png'), 4000, 4000), 'corrupt_image'],
    ['JPEG 65535x65535', () => H.jpegWithSize(fixture('photo.jpg'), 65535, 65535), 'image_too_large'],
    ['progressive JPEG 30000x30000', () => H.jpegWithSize(fixture('progressive.jpg'), 30000, 30000), 'image_too_large'],
    // (its coefficients are charged by its small file, but a 25 MP answer's with them are over the budget)
    ['progressive JPEG 5000x5000 (25 MP, over the memory budget)', () => H.jpegWithSize(fixture('progressive.jpg'), 5000, 5000), 'operation_too_large'],
    ['GIF 65535x65535 screen', () => H.gifWithScreen(fixture('alpha.gif'), 65535, 65535), 'image_too_large'],
    ['GIF 0x0 screen with a 65535x65535 frame', () => H.gifWithFrame(0, 0, 65535, 65535), 'image_too_large'],
    ['GIF 1x1 screen with a 65535x65535 frame', () => H.gifWithFrame(1, 1, 65535, 65535), 'corrupt_image'],
    ['GIF 16x16 screen with a 4096x4096 frame', () => H.gifWithFrame(16, 16, 4096, 4096), 'corrupt_image'],
    ['WebP (VP8) 16383x16383', () => H.webpWithSize(fixture('photo.webp'), 16383, 16383), 'image_too_large'],
    ['WebP (VP8L) 16384x16384 that really decodes to that size', () => H.vp8lSolid(16384, 16384), 'image_too_large'],
    ['WebP (VP8X) canvas 2^24 x 2^24', () => H.webpWithSize(fixture('anim.webp'), 1 << 24, 1 << 24), 'image_too_large'],
    ['AVIF ispe 100000x100000', () => H.avifWithIspe(fixture('photo.avif'), 100000, 100000), 'image_too_large'],
    ['AVIF ispe 2^32-1 x 2^32-1', () => H.avifWithIspe(fixture('photo.avif'), 0xffffffff, 0xffffffff), 'image_too_large'],
  ]
  for (const [what, bytes, code] of CASES) {
    it(`${what}: 422 ${code}`, async () => {
      const started = performance.now()
      await expectProblem(await compress(bytes(), undefined, { contentType: 'application/octet-stream' }), code, 422)
      expect(performance.now() - started).toBeLessThan(1000)
      await expectStillServing()
    })
  }
})

describe('decompression bombs behind a small header', () => {
  it('refuses an animated WebP whose 16x16 canvas holds a 16383x16383 frame (32 bytes of VP8L), 422 corrupt_image', async () => {
    const bomb = H.webpAnimationOf(H.vp8lSolid(16383, 16383), 16)
    expect(bomb.length).toBeLessThan(200)
    expect(readHeader(bomb)).toMatchObject({ format: 'webp', width: 16, height: 16, frames: 2 })
    const started = performance.now()
    await expectProblem(await compress(bomb, undefined, { contentType: 'image/webp' }), 'corrupt_image', 422)
    expect(performance.now() - started).toBeLessThan(2000)
    await expectStillServing()
  })

  it('still converts an animated WebP whose frame is as big as its canvas', async () => {
    const res = await compress(H.webpAnimationOf(H.vp8lSolid(300, 300), 300), { format: 'png' }, { contentType: 'image/webp' })
    const out = await decode(await okBytes(res))
    expect([out.image.width, out.image.height]).toEqual([300, 300])
    expect(res.headers.get('x-frames-dropped')).toBe('1')
  })

  for (const side of [16, 1000]) {
    it(`refuses a 609-byte AVIF whose ispe says ${side}x${side} but whose AV1 frame is 4200x4200, 422 corrupt_image`, async () => {
      const bomb = H.avifWithIspe(fixture('solid-4200.avif'), side, side)
      expect(readHeader(bomb)).toMatchObject({ format: 'avif', width: side, height: side })
      await expectProblem(await compress(bomb, { format: 'jpeg' }, { contentType: 'image/avif' }), 'corrupt_image', 422)
      await expectStillServing()
    })
  }

  it('converts the same AVIF when its header tells the truth (17.6 MP, under MAX_INPUT_PIXELS)', async () => {
    const res = await compress(fixture('solid-4200.avif'), { format: 'jpeg', width: 400 }, { contentType: 'image/avif' })
    const out = await decode(await okBytes(res))
    expect([out.format, out.image.width, out.image.height]).toEqual(['jpeg', 400, 400])
  })
})

describe('an AVIF that the decoder before needed far more memory for', () => {
  /**
   * A real AVIF, lossless 8-bit 4:4:4 with alpha and noisy pixels, as our own encoder writes it: 2.8 MB
   * for 700x700. jSquash's decoder (libavif + dav1d, Emscripten) needed 145 MiB of linear memory for it,
   * ran out under the 120 MiB cap and trapped (abort()), so it was refused. The lean codec's libavif +
   * dav1d hold its planes (4 B/px with alpha) and dav1d's state, and convert it.
   */
  const noisy = (side: number): Promise<Uint8Array> => {
    const random = H.prng(side)
    const data = new Uint8ClampedArray(side * side * 4)
    for (let i = 0; i < data.length; i++) data[i] = random() * 256
    return CODECS.avif.encode!(new ImageData(data, side, side), { quality: 100, lossless: true, effort: 0 }).then(({ bytes }) => bytes)
  }
  const BIG_BODY = { MAX_INPUT_BYTES: String(16 * 1024 * 1024) }

  it('converts it to a lossless PNG with every pixel as the AVIF decodes, and the next image of each format converts', async () => {
    const bytes = await noisy(700)
    const res = await callWorker('/api/compress?format=png&effort=0', { method: 'POST', headers: { 'Content-Type': 'image/avif' }, body: bytes }, BIG_BODY)
    const out = await decode(await okBytes(res))
    expect([out.image.width, out.image.height]).toEqual([700, 700])
    expect(Number.parseInt(res.headers.get('x-memory-estimate') ?? '', 10)).toBeLessThanOrEqual(120)
    const source = await CODECS.avif.decode!(bytes, readHeader(bytes))
    expect(psnr(out.image, source, { alpha: true })).toBe(Number.POSITIVE_INFINITY)
    for (const name of ['photo.avif', 'photo.jpg', 'photo.png', 'photo.webp', 'alpha.gif']) {
      const next = await decode(await okBytes(await compress(fixture(name), { width: 48, effort: 0 })))
      expect(next.image.width, name).toBe(48)
    }
  })
})

describe('one decoder instance per operation', () => {
  // squoosh's PNG glue, the PNG decoder before the lean codec's libpng, kept one instance, and each
  // decode that failed through wasm-bindgen's unwrap_throw leaked its shadow stack: after about 745
  // failures every PNG decode trapped with "memory access out of bounds". Every decode now gets a
  // fresh instance.
  const broken = () => fixture('photo.png').slice(0, 2000) // IHDR is whole, the zlib data is cut

  it('still decodes a valid PNG after 1000 PNG decodes that failed', async () => {
    const header = readHeader(broken())
    for (let i = 0; i < 1000; i++) await expect(CODECS.png.decode!(broken(), header)).rejects.toThrow()
    const image = await CODECS.png.decode!(fixture('basn3p08.png'), readHeader(fixture('basn3p08.png')))
    expect([image.width, image.height]).toEqual([32, 32])
  })

  it('converts a valid PNG after 800 requests with a broken one', async () => {
    for (let i = 0; i < 800; i++) {
      const res = await compress(broken(), undefined, { contentType: 'image/png' })
      expect(res.status).toBe(422)
      await res.arrayBuffer()
    }
    const out = await decode(await okBytes(await compress(fixture('photo.png'), { width: 64, effort: 0 })))
    expect(out.image.width).toBe(64)
  })
})

describe('a GIF whose LZW codes loop', () => {
  it('answers 422 corrupt_image at once for a 41-byte GIF on which the decoder would never return', async () => {
    const gif = H.gifLzwCycle()
    const started = performance.now()
    const problem = await expectProblem(await compress(gif, undefined, { contentType: 'image/gif' }), 'corrupt_image', 422)
    expect(problem.detail).toMatch(/giflib: Image is defective/)
    expect(performance.now() - started).toBeLessThan(1000)
    await expectStillServing()
  })
})

describe('progressive JPEGs with thousands of scans', () => {
  const progressive = () => fixture('progressive.jpg')
  const scansOf = (jpeg: Uint8Array) => readHeader(jpeg).scans

  it(`converts one with exactly ${MAX_JPEG_SCANS} scans (the limit)`, async () => {
    const jpeg = H.jpegWithEmptyScans(progressive(), MAX_JPEG_SCANS - scansOf(progressive()))
    expect(scansOf(jpeg)).toBe(MAX_JPEG_SCANS)
    const out = await decode(await okBytes(await compress(jpeg, { effort: 0 }, { contentType: 'image/jpeg' })))
    expect(out.image.width).toBe(480)
  })

  for (const extra of [MAX_JPEG_SCANS, 5000, 70_000]) {
    it(`refuses one with ${extra} extra empty scans (${extra * 10 > 100_000 ? `${Math.round(extra / 100)} KB` : 'small'}), 422 corrupt_image, without decoding`, async () => {
      const jpeg = H.jpegWithEmptyScans(progressive(), extra)
      const started = performance.now()
      const problem = await expectProblem(await compress(jpeg, undefined, { contentType: 'image/jpeg' }), 'corrupt_image', 422)
      expect(problem.detail).toMatch(/scans/)
      expect(performance.now() - started).toBeLessThan(1000)
      await expectStillServing()
    })
  }

  it('converts one whose last scan (with its tables) is repeated 20 times: libjpeg only warns', async () => {
    const jpeg = H.jpegWithManyScans(progressive(), 20)
    const out = await decode(await okBytes(await compress(jpeg, { effort: 0 }, { contentType: 'image/jpeg' })))
    expect(out.image.width).toBe(480)
  })
})

describe('malformed multipart', () => {
  const multipart = (boundary: string, parts: string[], close = true) =>
    text(`${parts.map((p) => `--${boundary}\r\n${p}\r\n`).join('')}${close ? `--${boundary}--\r\n` : ''}`)
  const send = (body: Uint8Array, type = 'multipart/form-data; boundary=b0undary') => compress(body, undefined, { contentType: type })
  const filePart = (name: string, content: string) => `Content-Disposition: form-data; name="${name}"; filename="x.png"\r\nContent-Type: image/png\r\n\r\n${content}`
  const fieldPart = (name: string, value: string) => `Content-Disposition: form-data; name="${name}"\r\n\r\n${value}`

  const CASES: Array<[string, () => Promise<Response>, string, number]> = [
    ['no parts at all', () => send(text('--b0undary--\r\n')), 'missing_image', 400],
    ['only option fields, no file part', () => send(multipart('b0undary', [fieldPart('format', 'webp'), fieldPart('width', '10')])), 'missing_image', 400],
    ['a boundary that the body does not use', () => send(multipart('other', [filePart('image', 'x')])), 'invalid_request', 400],
    ['no boundary parameter', () => send(multipart('b0undary', [filePart('image', 'x')]), 'multipart/form-data'), 'invalid_request', 400],
    ['a body cut before the closing boundary', () => send(multipart('b0undary', [filePart('image', 'GIF89a')], false).slice(0, 90)), 'invalid_request', 400],
    ['a part without Content-Disposition', () => send(multipart('b0undary', ['Content-Type: image/png\r\n\r\nxx'])), 'invalid_request', 400],
    ['two image file parts', () => send(multipart('b0undary', [filePart('image', 'a'), filePart('image', 'b')])), 'invalid_request', 400],
    ['an image file part and an image text field', () => send(multipart('b0undary', [filePart('image', 'a'), fieldPart('image', 'b')])), 'invalid_request', 400],
    ['the same option twice', () => send(multipart('b0undary', [filePart('image', 'a'), fieldPart('quality', '50'), fieldPart('quality', '60')])), 'invalid_option', 400],
    ['2000 unknown fields', () => send(multipart('b0undary', [filePart('image', 'a'), ...Array.from({ length: 2000 }, (_, i) => fieldPart(`f${i}`, 'v'))])), 'invalid_option', 400],
    ['an empty image file part', () => send(multipart('b0undary', [filePart('image', '')])), 'missing_image', 400],
    ['an image part holding HTML', () => send(multipart('b0undary', [filePart('image', '<html><body>hi</body></html>')])), 'unsupported_format', 415],
  ]
  for (const [what, request, code, status] of CASES) {
    it(`answers ${status} ${code} for ${what}`, async () => {
      await expectProblem(await request(), code, status)
      await expectStillServing()
    })
  }
})

describe('bodies over the limit', () => {
  /** A body that never ends: 64 KiB chunks for as long as anyone reads. */
  function endless(): { stream: ReadableStream<Uint8Array>; sent: () => number } {
    let sent = 0
    const chunk = new Uint8Array(64 * 1024)
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        sent += chunk.length
        controller.enqueue(chunk)
      },
    })
    return { stream, sent: () => sent }
  }

  it('answers 413 to an endless raw body without Content-Length, having read little more than the limit', async () => {
    const body = endless()
    await expectProblem(await compress(body.stream, undefined, { contentType: 'image/jpeg' }), 'payload_too_large', 413)
    expect(body.sent()).toBeLessThan(LIMIT + 1024 * 1024)
    await expectStillServing()
  })

  it('answers 413 to an endless multipart body without Content-Length', async () => {
    const body = endless()
    await expectProblem(await compress(body.stream, undefined, { contentType: 'multipart/form-data; boundary=b0undary' }), 'payload_too_large', 413)
    await expectStillServing()
  })

  it('answers 413 to a body over the limit with a valid image at its start', async () => {
    const body = H.concat(fixture('photo.jpg'), new Uint8Array(LIMIT))
    await expectProblem(await compress(body, undefined, { contentType: 'image/jpeg' }), 'payload_too_large', 413)
    await expectStillServing()
  })
})

describe('outputs too wide for the encoder', () => {
  /** A grey PNG of width x height, made with the project's own PNG encoder. */
  async function greyPng(width: number, height: number): Promise<Uint8Array> {
    return CODECS.png.encode!(new ImageData(new Uint8ClampedArray(width * height * 4).fill(128), width, height), { quality: 100, lossless: true, effort: 0 }).then(({ bytes }) => bytes)
  }
  const CASES: Array<[string, number, number, Query]> = [
    ['a 16384x1 PNG to WebP (WebP stores 14-bit sizes)', 16384, 1, { format: 'webp' }],
    ['a 1x16384 PNG to WebP', 1, 16384, { format: 'webp' }],
    ['a 16x16 PNG enlarged to 16384x1 WebP', 16, 16, { format: 'webp', width: 16384, height: 1, fit: 'fill', enlarge: true }],
    ['a 65501x8 PNG to JPEG (libjpeg stops at 65500)', 65501, 8, { format: 'jpeg' }],
  ]
  for (const [what, width, height, query] of CASES) {
    it(`answers 422 image_too_large for ${what}, not a 500 from the encoder`, async () => {
      const problem = await expectProblem(await compress(await greyPng(width, height), query, { contentType: 'image/png' }), 'image_too_large', 422)
      expect(problem.detail).toMatch(/at most (16383|65500) pixels/)
      await expectStillServing()
    })
  }

  it('still converts the largest sizes each encoder can write', async () => {
    for (const [format, width] of [['webp', 16383], ['jpeg', 65500]] as const) {
      const res = await compress(await greyPng(width, 1), { format, effort: 0 }, { contentType: 'image/png' })
      expect(res.status, format).toBe(200)
      expect(res.headers.get('x-output-width')).toBe(String(width))
      await res.arrayBuffer()
    }
  })
})
