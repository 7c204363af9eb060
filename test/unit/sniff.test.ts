import { describe, it, expect } from 'vitest'
import { ApiError } from '../../src/errors'
import { detectFormat, readHeader } from '../../src/pipeline/sniff'
import { crc32 } from '../helpers/hostile'

// ---------------------------------------------------------------------------------------------
// Byte builders: every fixture is a hand-made header, so the tests run inside workerd without fs.
// ---------------------------------------------------------------------------------------------

type Part = number[] | Uint8Array | string

function bytes(...parts: Part[]): Uint8Array {
  const arrays = parts.map((part) => (typeof part === 'string' ? ascii(part) : Array.from(part)))
  return Uint8Array.from(arrays.flat())
}

function ascii(text: string): number[] {
  return Array.from(text, (char) => char.charCodeAt(0))
}

const u16be = (n: number) => [(n >>> 8) & 0xff, n & 0xff]
const u16le = (n: number) => [n & 0xff, (n >>> 8) & 0xff]
const u24le = (n: number) => [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff]
const u32be = (n: number) => [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]
const u32le = (n: number) => [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff]
const zeros = (count: number) => new Array<number>(count).fill(0)

function caught(run: () => unknown): ApiError {
  try {
    run()
  } catch (error) {
    if (error instanceof ApiError) return error
    throw error
  }
  throw new Error('expected an ApiError')
}

// --- PNG --------------------------------------------------------------------------------------

function pngChunk(type: string, data: number[] = [], length = data.length): number[] {
  const body = [...ascii(type), ...data]
  return [...u32be(length), ...body, ...u32be(crc32(Uint8Array.from(body)))]
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]

function ihdr(width: number, height: number, bitDepth = 8, colourType = 2, interlace = 0): number[] {
  return pngChunk('IHDR', [...u32be(width), ...u32be(height), bitDepth, colourType, 0, 0, interlace])
}

function png(options: { width?: number; height?: number; bitDepth?: number; colourType?: number; before?: number[][] } = {}) {
  const { width = 32, height = 16, bitDepth = 8, colourType = 2, before = [] } = options
  return bytes(
    PNG_SIGNATURE,
    ihdr(width, height, bitDepth, colourType),
    ...before,
    pngChunk('IDAT', [0x78, 0x9c, 0x03, 0x00]),
    pngChunk('IEND'),
  )
}

// --- JPEG -------------------------------------------------------------------------------------

const SOI = [0xff, 0xd8]
const EOI = [0xff, 0xd9]

function segment(marker: number, payload: Part[]): number[] {
  const body = Array.from(bytes(...payload))
  return [0xff, marker, ...u16be(body.length + 2), ...body]
}

function sof(marker: number, width: number, height: number, precision = 8): number[] {
  return segment(marker, [[precision, ...u16be(height), ...u16be(width), 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]])
}

/** A scan header plus entropy-coded bytes with a stuffed 0xFF00, a restart marker and fill bytes. */
function scan(): number[] {
  return [
    ...segment(0xda, [[3, 1, 0x00, 2, 0x11, 3, 0x11, 0, 63, 0]]),
    ...[0x12, 0xff, 0x00, 0x34, 0xff, 0xd0, 0x56, 0xff, 0x00, 0xff, 0xd7, 0x78],
  ]
}

interface IfdEntry {
  tag: number
  type: number
  count: number
  value: number
}

/** A TIFF block (as in an Exif APP1) with IFD0 at offset 8. */
function tiff(littleEndian: boolean, entries: IfdEntry[], ifdOffset = 8): number[] {
  const u16 = littleEndian ? u16le : u16be
  const u32 = littleEndian ? u32le : u32be
  const value = (entry: IfdEntry) => (entry.type === 3 ? [...u16(entry.value), 0, 0] : u32(entry.value))
  return [
    ...ascii(littleEndian ? 'II' : 'MM'),
    ...u16(42),
    ...u32(ifdOffset),
    ...u16(entries.length),
    ...entries.flatMap((entry) => [...u16(entry.tag), ...u16(entry.type), ...u32(entry.count), ...value(entry)]),
    ...u32(0),
  ]
}

const orientationEntry = (value: number): IfdEntry => ({ tag: 0x0112, type: 3, count: 1, value })

function exifApp1(tiffBytes: number[]): number[] {
  return segment(0xe1, ['Exif\0\0', tiffBytes])
}

function jpeg(options: { frame?: number[]; before?: number[][]; scans?: number; eoi?: boolean } = {}): Uint8Array {
  const { frame = sof(0xc0, 640, 480), before = [], scans = 1, eoi = true } = options
  const jfif = segment(0xe0, ['JFIF\0', [1, 1, 0, 0, 1, 0, 1, 0, 0]])
  const dqt = segment(0xdb, [[0], zeros(64)])
  const dht = segment(0xc4, [[0], zeros(16)])
  const scanParts = Array.from({ length: scans }, (_, i) => (i === 0 ? scan() : [...dht, ...scan()]))
  return bytes(SOI, jfif, ...before, dqt, frame, dht, ...scanParts, eoi ? EOI : [])
}

// --- GIF --------------------------------------------------------------------------------------

function gifHeader(width: number, height: number, globalTableBits?: number): number[] {
  const packed = globalTableBits === undefined ? 0 : 0x80 | (globalTableBits - 1)
  const table = globalTableBits === undefined ? [] : zeros(3 * (1 << globalTableBits))
  return [...ascii('GIF89a'), ...u16le(width), ...u16le(height), packed, 0, 0, ...table]
}

function gifGraphicControl(transparent: boolean): number[] {
  return [0x21, 0xf9, 4, transparent ? 1 : 0, 10, 0, 0, 0]
}

function gifFrame(width: number, height: number, localTableBits?: number): number[] {
  const packed = localTableBits === undefined ? 0 : 0x80 | (localTableBits - 1)
  const table = localTableBits === undefined ? [] : zeros(3 * (1 << localTableBits))
  return [0x2c, ...u16le(0), ...u16le(0), ...u16le(width), ...u16le(height), packed, ...table, 2, 3, 0x4c, 0x01, 0x05, 0]
}

const NETSCAPE_LOOP = [0x21, 0xff, 11, ...ascii('NETSCAPE2.0'), 3, 1, 0, 0, 0]

// --- WebP -------------------------------------------------------------------------------------

function riffChunk(type: string, data: number[]): number[] {
  return [...ascii(type), ...u32le(data.length), ...data, ...(data.length & 1 ? [0] : [])]
}

function webp(...chunks: number[][]): Uint8Array {
  const body = chunks.flat()
  return bytes('RIFF', u32le(4 + body.length), 'WEBP', body)
}

function vp8(width: number, height: number): number[] {
  return riffChunk('VP8 ', [0x50, 0x02, 0x00, 0x9d, 0x01, 0x2a, ...u16le(width), ...u16le(height), ...zeros(8)])
}

function vp8l(width: number, height: number, alpha: boolean): number[] {
  const bits = ((width - 1) | ((height - 1) << 14) | ((alpha ? 1 : 0) << 28)) >>> 0
  return riffChunk('VP8L', [0x2f, ...u32le(bits), ...zeros(5)])
}

function vp8x(width: number, height: number, flags: number): number[] {
  return riffChunk('VP8X', [flags, 0, 0, 0, ...u24le(width - 1), ...u24le(height - 1)])
}

// --- AVIF / ISO-BMFF --------------------------------------------------------------------------

function box(type: string, ...payload: Part[]): number[] {
  const body = Array.from(bytes(...payload))
  return [...u32be(8 + body.length), ...ascii(type), ...body]
}

function fullBox(type: string, version: number, flags: number, ...payload: Part[]): number[] {
  return box(type, [version, (flags >>> 16) & 0xff, (flags >>> 8) & 0xff, flags & 0xff], ...payload)
}

const ALPHA_URN = 'urn:mpeg:mpegB:cicp:systems:auxiliary:alpha'

const ftyp = (major: string, ...compatible: string[]) => box('ftyp', major, u32be(0), ...compatible)
const ispe = (width: number, height: number) => fullBox('ispe', 0, 0, u32be(width), u32be(height))
const pixi = (bits: number) => fullBox('pixi', 0, 0, [3, bits, bits, bits])
const av1C = (flags: number) => box('av1C', [0x81, 0x00, flags, 0x00])
const irot = (angle: number) => box('irot', [angle])
const imir = (axis: number) => box('imir', [axis])
const auxC = (urn: string) => fullBox('auxC', 0, 0, urn, [0])
const pitm = (id: number) => fullBox('pitm', 0, 0, u16be(id))
const hdlr = fullBox('hdlr', 0, 0, u32be(0), 'pict', zeros(12), [0])

/** ipma version 0 with 7-bit indices; the high bit marks a property essential. */
function ipma(associations: Record<number, number[]>): number[] {
  const entries = Object.entries(associations)
  return fullBox(
    'ipma',
    0,
    0,
    u32be(entries.length),
    ...entries.map(([id, indices]) => [...u16be(Number(id)), indices.length, ...indices]),
  )
}

function avifMeta(properties: number[][], associations?: Record<number, number[]>, primary = 1): number[] {
  return fullBox(
    'meta',
    0,
    0,
    hdlr,
    associations ? pitm(primary) : [],
    box('iprp', box('ipco', ...properties), associations ? ipma(associations) : []),
  )
}

function avif(...boxes: number[][]): Uint8Array {
  return bytes(ftyp('avif', 'avif', 'mif1', 'miaf'), ...boxes, box('mdat', zeros(16)))
}

// ---------------------------------------------------------------------------------------------

describe('detectFormat', () => {
  it.each([
    ['jpeg', jpeg()],
    ['png', png()],
    ['gif', bytes(gifHeader(1, 1), gifFrame(1, 1), [0x3b])],
    ['webp', webp(vp8(1, 1))],
    ['avif', avif(avifMeta([ispe(1, 1)]))],
  ] as const)('identifies %s from its magic bytes', (format, data) => {
    expect(detectFormat(data)).toBe(format)
  })

  it('recognises AVIF from a compatible brand when the major brand is mif1', () => {
    expect(detectFormat(bytes(ftyp('mif1', 'mif1', 'avif'), avifMeta([ispe(1, 1)])))).toBe('avif')
  })

  it("returns 'svg' for SVG after a UTF-8 BOM and whitespace", () => {
    expect(detectFormat(bytes([0xef, 0xbb, 0xbf], '\n  \t<svg xmlns="http://www.w3.org/2000/svg"/>'))).toBe('svg')
  })

  it("returns 'svg' for an XML prolog or doctype followed by an svg root", () => {
    expect(detectFormat(bytes('<?xml version="1.0"?>\n<!-- drawn by hand -->\n<svg/>'))).toBe('svg')
    expect(detectFormat(bytes('<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "x">'))).toBe('svg')
  })

  it("returns 'other' for HTML and for known unsupported image formats", () => {
    expect(detectFormat(bytes('<!doctype html><html><body>hi</body></html>'))).toBe('other')
    expect(detectFormat(bytes('qoif', zeros(10)))).toBe('other')
  })

  it('returns undefined for unrecognised binary data and for an empty body', () => {
    expect(detectFormat(bytes([0x00, 0x01, 0x02, 0x03, 0xfe, 0x80]))).toBeUndefined()
    expect(detectFormat(new Uint8Array(0))).toBeUndefined()
  })

  it('does not trust a near-miss PNG signature (CR/LF mangled)', () => {
    const mangled = png()
    mangled[4] = 0x0a
    expect(detectFormat(mangled)).toBeUndefined()
  })
})

describe('readHeader: rejected inputs', () => {
  it('answers missing_image for an empty body', () => {
    const error = caught(() => readHeader(new Uint8Array(0)))
    expect(error.code).toBe('missing_image')
    expect(error.message).toBe('The request body is empty')
  })

  it('refuses SVG (with BOM and whitespace) as unsupported_format and says so', () => {
    const error = caught(() => readHeader(bytes([0xef, 0xbb, 0xbf], '  \r\n<svg width="10" height="10"></svg>')))
    expect(error.code).toBe('unsupported_format')
    expect(error.message).toMatch(/SVG/)
    expect(error.message).toMatch(/not rasterised/)
    expect(error.extensions.detected).toBe('svg')
  })

  it.each([
    ['bmp', 'BMP', bytes('BM', u32le(70), zeros(4), u32le(54), u32le(40), u32le(2), u32le(2))],
    ['tiff', 'TIFF', bytes([0x49, 0x49, 0x2a, 0x00], u32le(8), zeros(8))],
    ['tiff', 'TIFF', bytes([0x4d, 0x4d, 0x00, 0x2a], u32be(8), zeros(8))],
    ['jxl', 'JPEG XL', bytes([0xff, 0x0a, 0xfa, 0x12])],
    ['jxl', 'JPEG XL', bytes([0, 0, 0, 0x0c, 0x4a, 0x58, 0x4c, 0x20, 0x0d, 0x0a, 0x87, 0x0a], zeros(8))],
    ['qoi', 'QOI', bytes('qoif', u32be(50), u32be(50), [4, 0])],
    ['ico', 'ICO', bytes([0, 0, 1, 0, 1, 0], zeros(16))],
    ['psd', 'PSD', bytes('8BPS', [0, 1], zeros(20))],
    ['heic', 'HEIC', bytes(ftyp('heic', 'mif1', 'heic'), box('meta', zeros(8)))],
    ['heic', 'HEIC', bytes(ftyp('mif1', 'mif1', 'miaf'), box('meta', zeros(8)))],
  ] as const)('names %s in the unsupported_format detail', (detected, name, data) => {
    const error = caught(() => readHeader(data))
    expect(error.code).toBe('unsupported_format')
    expect(error.message).toBe(`${name} input is not supported; send JPEG, PNG, WebP, AVIF or GIF`)
    expect(error.extensions.detected).toBe(detected)
  })

  it('calls HTML text, not an image', () => {
    const error = caught(() => readHeader(bytes('<html><head><title>404</title></head></html>')))
    expect(error.code).toBe('unsupported_format')
    expect(error.extensions.detected).toBe('text')
  })

  it('answers unsupported_format without a detected name for unknown binary', () => {
    const error = caught(() => readHeader(bytes([0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66])))
    expect(error.code).toBe('unsupported_format')
    expect(error.extensions.detected).toBeUndefined()
  })

  it('treats a body of only whitespace as unknown, not as text', () => {
    expect(caught(() => readHeader(bytes('\n'))).code).toBe('unsupported_format')
    expect(detectFormat(bytes('\n'))).toBeUndefined()
  })

  it('does not call text starting with "BM" a BMP', () => {
    expect(caught(() => readHeader(bytes('BMW announced a new model today'))).extensions.detected).toBe('text')
  })
})

describe('readHeader: PNG', () => {
  it('reads a 50000x50000 PNG header without decoding', () => {
    const header = readHeader(png({ width: 50000, height: 50000, bitDepth: 1, colourType: 3 }))
    expect(header).toEqual({
      format: 'png',
      width: 50000,
      height: 50000,
      orientation: 1,
      hasAlpha: false,
      frames: 1,
      bitDepth: 1,
      progressive: false,
      scans: 1,
      truncated: false,
      lossless: false,
      colour: 'srgb',
    })
  })

  it('marks an Adam7-interlaced PNG progressive: the row pipeline decodes it whole, and the plan charges that', () => {
    const interlaced = (interlace: number) => bytes(PNG_SIGNATURE, ihdr(64, 48, 8, 2, interlace), pngChunk('IDAT', [0x78, 0x9c, 0x03, 0x00]), pngChunk('IEND'))
    expect(readHeader(interlaced(1)).progressive).toBe(true)
    expect(readHeader(interlaced(0)).progressive).toBe(false)
  })

  it('reads a 65536x65536 header (2^32 pixels) without overflowing', () => {
    const header = readHeader(png({ width: 65536, height: 65536, bitDepth: 1, colourType: 0 }))
    expect(header.width * header.height).toBe(2 ** 32)
  })

  it.each([
    [0, 1, false],
    [0, 16, false],
    [2, 8, false],
    [2, 16, false],
    [3, 4, false],
    [4, 8, true],
    [4, 16, true],
    [6, 8, true],
    [6, 16, true],
  ])('reports colour type %i at depth %i with hasAlpha %s', (colourType, bitDepth, hasAlpha) => {
    const header = readHeader(png({ colourType, bitDepth }))
    expect(header.bitDepth).toBe(bitDepth)
    expect(header.hasAlpha).toBe(hasAlpha)
  })

  it('sees transparency from a tRNS chunk before IDAT', () => {
    const palette = pngChunk('PLTE', [255, 0, 0, 0, 0, 255])
    const header = readHeader(png({ colourType: 3, before: [palette, pngChunk('tRNS', [0])] }))
    expect(header.hasAlpha).toBe(true)
  })

  it('reads the APNG frame count from acTL', () => {
    const header = readHeader(png({ before: [pngChunk('acTL', [...u32be(12), ...u32be(0)])] }))
    expect(header.frames).toBe(12)
  })

  it.each([
    ['bit depth 0 (xd0n2c08)', 0, 2],
    ['bit depth 3 (xd3n2c08)', 3, 2],
    ['bit depth 99 (xd9n2c08)', 99, 2],
    ['colour type 1 (xc1n0g08)', 8, 1],
    ['colour type 9 (xc9n2c08)', 8, 9],
    ['16-bit palette', 16, 3],
    ['4-bit RGB', 4, 2],
  ])('rejects %s as corrupt_image', (_name, bitDepth, colourType) => {
    expect(caught(() => readHeader(png({ bitDepth, colourType }))).code).toBe('corrupt_image')
  })

  it('rejects a zero width or height as corrupt_image', () => {
    expect(caught(() => readHeader(png({ width: 0 }))).code).toBe('corrupt_image')
    expect(caught(() => readHeader(png({ height: 0 }))).code).toBe('corrupt_image')
  })

  it('rejects a width over 2^31-1 as corrupt_image', () => {
    expect(caught(() => readHeader(png({ width: 0x80000000 }))).code).toBe('corrupt_image')
  })

  it('rejects an IHDR with the wrong length or a different first chunk', () => {
    const longIhdr = bytes(PNG_SIGNATURE, pngChunk('IHDR', [...u32be(1), ...u32be(1), 8, 2, 0, 0, 0, 0]))
    const noIhdr = bytes(PNG_SIGNATURE, pngChunk('gAMA', u32be(45455)), ihdr(1, 1))
    expect(caught(() => readHeader(longIhdr)).code).toBe('corrupt_image')
    expect(caught(() => readHeader(noIhdr)).code).toBe('corrupt_image')
  })

  it('rejects a PNG cut inside IHDR as corrupt_image', () => {
    const error = caught(() => readHeader(png().subarray(0, 20)))
    expect(error.code).toBe('corrupt_image')
    expect(error.message).toMatch(/truncated/)
  })

  it('rejects an IHDR whose checksum does not match (xhdn0g08)', () => {
    const data = png()
    data[32] = data[32]! ^ 0xff
    expect(caught(() => readHeader(data)).code).toBe('corrupt_image')
  })

  // Only the IHDR checksum was checked, so a PNG with a damaged IDAT (PngSuite xcsn0g01) was decoded.
  it('rejects a PNG whose IDAT checksum does not match, naming the chunk (xcsn0g01)', () => {
    const data = png()
    const idatCrc = data.length - 12 - 4
    data[idatCrc] = data[idatCrc]! ^ 0xff
    const error = caught(() => readHeader(data))
    expect(error.code).toBe('corrupt_image')
    expect(error.message).toBe('The PNG IDAT chunk at byte 33 is damaged: its CRC-32 checksum does not match.')
  })

  it('checks the checksum of every critical chunk up to IEND (a second IDAT, IEND) and skips ancillary ones', () => {
    const idat = pngChunk('IDAT', [0x78, 0x9c, 0x03, 0x00])
    const text = pngChunk('tEXt', ascii('a\0b'))
    const broken = (chunk: number[]) => [...chunk.slice(0, -1), chunk.at(-1)! ^ 1]
    const file = (...chunks: number[][]) => bytes(PNG_SIGNATURE, ihdr(1, 1, 8, 0), ...chunks)
    expect(readHeader(file(idat, idat, text, pngChunk('IEND'))).width).toBe(1)
    expect(caught(() => readHeader(file(idat, broken(idat), pngChunk('IEND')))).message).toMatch(/IDAT chunk at byte 49 /)
    expect(readHeader(file(idat, broken(text), pngChunk('IEND'))).width).toBe(1)
    expect(caught(() => readHeader(file(idat, broken(pngChunk('IEND'))))).message).toMatch(/IEND chunk/)
  })

  it('does not read past IEND: bytes appended after it are not checked', () => {
    expect(readHeader(bytes(png(), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13])).width).toBe(32)
  })

  it('rejects a chunk before IDAT that claims more bytes than exist', () => {
    const huge = pngChunk('tEXt', [], 0x3fffffff).slice(0, 8)
    const data = bytes(PNG_SIGNATURE, ihdr(1, 1, 8, 0), huge)
    expect(caught(() => readHeader(data)).message).toMatch(/tEXt chunk runs past the end/)
  })

  it('rejects a PNG with no IDAT before IEND (xdtn0g01)', () => {
    const data = bytes(PNG_SIGNATURE, ihdr(1, 1, 8, 0), pngChunk('IEND'))
    expect(caught(() => readHeader(data)).code).toBe('corrupt_image')
  })

  it('accepts a PNG cut inside its image data (the decoder decides)', () => {
    const data = png({ width: 1440, height: 900, colourType: 6 })
    expect(readHeader(data.subarray(0, data.length - 14)).width).toBe(1440)
  })
})

describe('readHeader: JPEG', () => {
  it('marks a JPEG without an end-of-image marker as truncated', () => {
    expect(readHeader(jpeg({ eoi: false })).truncated).toBe(true)
    expect(readHeader(jpeg()).truncated).toBe(false)
  })

  it('reads a CMYK JPEG as colour cmyk, and an APP2 ICC profile as colour profile', () => {
    const cmyk = sof(0xc0, 64, 64)
    cmyk[9] = 4
    expect(readHeader(jpeg({ frame: cmyk })).colour).toBe('cmyk')
    expect(readHeader(jpeg({ frame: sof(0xc0, 64, 64) })).colour).toBe('srgb')
    const icc = segment(0xe2, ['ICC_PROFILE\0', [1, 1], zeros(128)])
    expect(readHeader(jpeg({ before: [icc] })).colour).toBe('profile')
    expect(readHeader(jpeg({ before: [segment(0xe2, ['FPXR\0', zeros(16)])] })).colour).toBe('srgb')
  })

  it('reads a baseline JPEG frame header', () => {
    expect(readHeader(jpeg({ frame: sof(0xc0, 1800, 1200) }))).toEqual({
      format: 'jpeg',
      width: 1800,
      height: 1200,
      orientation: 1,
      hasAlpha: false,
      frames: 1,
      bitDepth: 8,
      progressive: false,
      scans: 1,
      truncated: false,
      lossless: false,
      colour: 'srgb',
    })
  })

  it('reads a 50000x50000 JPEG header without decoding', () => {
    const header = readHeader(jpeg({ frame: sof(0xc0, 50000, 50000) }))
    expect([header.width, header.height]).toEqual([50000, 50000])
  })

  it('detects a progressive JPEG and counts its scans across entropy-coded data', () => {
    const header = readHeader(jpeg({ frame: sof(0xc2, 16, 16), scans: 7 }))
    expect(header.progressive).toBe(true)
    expect(header.scans).toBe(7)
  })

  it('does not take DHT (0xC4) for a frame header', () => {
    const dht = segment(0xc4, [[0x10], [0xc0, 0xc0], zeros(14)])
    const header = readHeader(jpeg({ before: [dht], frame: sof(0xc1, 300, 400) }))
    expect([header.width, header.height]).toEqual([300, 400])
  })

  it.each([
    ['C3', 'lossless', 0xc3],
    ['C9', 'arithmetic', 0xc9],
    ['CA', 'arithmetic progressive', 0xca],
  ] as const)('recognises SOF 0x%s (%s) as a frame header', (_hex, _name, marker) => {
    expect(readHeader(jpeg({ frame: sof(marker, 20, 10) })).width).toBe(20)
  })

  it('reports 12-bit sample precision as the bit depth', () => {
    expect(readHeader(jpeg({ frame: sof(0xc1, 8, 8, 12) })).bitDepth).toBe(12)
  })

  describe('EXIF orientation', () => {
    const cases = [1, 2, 3, 4, 5, 6, 7, 8].flatMap((value) => [
      [value, 'little-endian (II)', true] as const,
      [value, 'big-endian (MM)', false] as const,
    ])

    it.each(cases)('reads orientation %i from %s EXIF', (value, _name, littleEndian) => {
      const app1 = exifApp1(tiff(littleEndian, [{ tag: 0x010f, type: 2, count: 4, value: 0 }, orientationEntry(value)]))
      const header = readHeader(jpeg({ before: [app1], frame: sof(0xc0, 1800, 1200) }))
      expect(header.orientation).toBe(value)
      expect([header.width, header.height]).toEqual([1800, 1200])
    })

    it('treats EXIF orientation 0 as 1', () => {
      expect(readHeader(jpeg({ before: [exifApp1(tiff(true, [orientationEntry(0)]))] })).orientation).toBe(1)
    })

    it('treats EXIF orientation above 8 as 1', () => {
      expect(readHeader(jpeg({ before: [exifApp1(tiff(false, [orientationEntry(9)]))] })).orientation).toBe(1)
    })

    it('reads an orientation stored as LONG', () => {
      const entry = { tag: 0x0112, type: 4, count: 1, value: 6 }
      expect(readHeader(jpeg({ before: [exifApp1(tiff(false, [entry]))] })).orientation).toBe(6)
    })

    it('finds Exif in an APP1 that follows an XMP APP1', () => {
      const xmp = segment(0xe1, ['http://ns.adobe.com/xap/1.0/\0', '<x:xmpmeta/>'])
      const header = readHeader(jpeg({ before: [xmp, exifApp1(tiff(true, [orientationEntry(8)]))] }))
      expect(header.orientation).toBe(8)
    })

    it.each([
      ['an IFD offset past the segment', tiff(true, [orientationEntry(6)], 4000)],
      ['an IFD offset inside the header', tiff(true, [orientationEntry(6)], 2)],
      ['an entry count larger than the data', [...ascii('II'), ...u16le(42), ...u32le(8), ...u16le(500), 0x12, 0x01]],
      ['an unknown byte order', [...ascii('XX'), ...u16le(42), ...u32le(8), ...zeros(20)]],
      ['a wrong TIFF magic number', [...ascii('MM'), ...u16be(43), ...u32be(8), ...zeros(20)]],
      ['an orientation of the wrong type', tiff(true, [{ tag: 0x0112, type: 2, count: 1, value: 6 }])],
      ['no TIFF data at all', []],
    ])('ignores broken EXIF with %s (orientation 1, no error)', (_name, tiffBytes) => {
      const header = readHeader(jpeg({ before: [exifApp1(tiffBytes)], frame: sof(0xc2, 1, 1) }))
      expect(header.orientation).toBe(1)
      expect(header.width).toBe(1)
    })
  })

  it('rejects a JPEG cut inside EXIF before any frame header as corrupt_image', () => {
    const app1 = exifApp1([...tiff(true, [orientationEntry(6)]), ...zeros(2000)])
    const data = jpeg({ before: [app1] }).subarray(0, 1024)
    const error = caught(() => readHeader(data))
    expect(error.code).toBe('corrupt_image')
    expect(error.message).toMatch(/SOF/)
  })

  it('rejects a JPEG with no frame header at all as corrupt_image', () => {
    expect(caught(() => readHeader(bytes(SOI, segment(0xfe, ['hello']), EOI))).code).toBe('corrupt_image')
    expect(caught(() => readHeader(bytes([0xff, 0xd8, 0xff]))).code).toBe('corrupt_image')
  })

  it('rejects a frame header cut short as corrupt_image', () => {
    const data = bytes(SOI, [0xff, 0xc0, 0x00, 0x11, 0x08, 0x01])
    expect(caught(() => readHeader(data)).code).toBe('corrupt_image')
  })

  it('rejects a zero height (DNL) or width as corrupt_image', () => {
    expect(caught(() => readHeader(jpeg({ frame: sof(0xc0, 100, 0) }))).code).toBe('corrupt_image')
    expect(caught(() => readHeader(jpeg({ frame: sof(0xc0, 0, 100) }))).code).toBe('corrupt_image')
  })

  it('rejects a frame header whose length field is too short to hold the size', () => {
    const data = bytes(SOI, [0xff, 0xc0, 0x00, 0x04, 0x08, 0x00], zeros(10), EOI)
    expect(caught(() => readHeader(data)).code).toBe('corrupt_image')
  })

  it('refuses a body made of a huge number of tiny scans as corrupt_image, from the header walk', () => {
    const head = bytes(SOI, sof(0xc2, 8, 8))
    const data = new Uint8Array(head.length + 70000 * 4)
    data.set(head)
    for (let i = head.length; i < data.length; i += 4) data.set([0xff, 0xda, 0x00, 0x02], i)
    expect(caught(() => readHeader(data)).code).toBe('corrupt_image')
  })

  it('rejects a segment length below 2 as corrupt_image', () => {
    expect(caught(() => readHeader(bytes(SOI, [0xff, 0xe0, 0x00, 0x01], sof(0xc0, 1, 1)))).code).toBe('corrupt_image')
  })

  it('accepts a JPEG truncated inside its scan data (the decoder decides)', () => {
    const header = readHeader(jpeg({ frame: sof(0xc0, 360, 216), eoi: false }).slice(0, -4))
    expect([header.width, header.height, header.scans]).toEqual([360, 216, 1])
  })

  it('tolerates stray bytes between segments', () => {
    const data = bytes(SOI, segment(0xfe, ['comment']), [0x00, 0x00], sof(0xc0, 5, 6), scan(), EOI)
    expect(readHeader(data).height).toBe(6)
  })

  it('stops at EOI and ignores data after it', () => {
    const data = bytes(jpeg({ frame: sof(0xc0, 10, 10) }), SOI, sof(0xc2, 99, 99), scan(), EOI)
    const header = readHeader(data)
    expect([header.width, header.progressive, header.scans]).toEqual([10, false, 1])
  })
})

describe('readHeader: GIF', () => {
  it('reads the logical screen size of a still GIF', () => {
    const header = readHeader(bytes(gifHeader(256, 128, 2), gifFrame(256, 128), [0x3b]))
    expect(header).toMatchObject({ format: 'gif', width: 256, height: 128, frames: 1, hasAlpha: false, bitDepth: 8 })
  })

  it('sees transparency where the first frame leaves the screen uncovered', () => {
    expect(readHeader(bytes(gifHeader(256, 128, 2), gifFrame(200, 128), [0x3b])).hasAlpha).toBe(true)
  })

  it('sees transparency from the first frame graphic control extension', () => {
    const header = readHeader(bytes(gifHeader(4, 4, 1), gifGraphicControl(true), gifFrame(4, 4), [0x3b]))
    expect(header.hasAlpha).toBe(true)
  })

  it('ignores a transparency flag that only a later frame sets', () => {
    const data = bytes(gifHeader(4, 4), gifGraphicControl(false), gifFrame(4, 4), gifGraphicControl(true), gifFrame(4, 4), [0x3b])
    expect(readHeader(data).hasAlpha).toBe(false)
  })

  it('counts frames by walking blocks, skipping local colour tables and extensions', () => {
    const frames = [gifFrame(80, 80, 3), gifGraphicControl(false), gifFrame(40, 40), gifFrame(80, 80, 8)]
    const header = readHeader(bytes(gifHeader(80, 80, 8), NETSCAPE_LOOP, ...frames, [0x3b]))
    expect(header.frames).toBe(3)
  })

  it('stops counting safely when the data is cut off mid-frame', () => {
    const data = bytes(gifHeader(10, 10), gifFrame(10, 10), gifFrame(10, 10).slice(0, 12))
    expect(readHeader(data).frames).toBe(2)
  })

  it("uses the first frame's size when the logical screen is 0x0", () => {
    const header = readHeader(bytes(gifHeader(0, 0), gifFrame(30, 20), [0x3b]))
    expect([header.width, header.height]).toEqual([30, 20])
  })

  it('reads a 50000x50000 logical screen without decoding', () => {
    const header = readHeader(bytes(gifHeader(50000, 50000), gifFrame(1, 1), [0x3b]))
    expect([header.width, header.height]).toEqual([50000, 50000])
  })

  it('rejects a GIF with no image descriptor as corrupt_image', () => {
    expect(caught(() => readHeader(bytes(gifHeader(10, 10), [0x3b]))).code).toBe('corrupt_image')
  })

  it('rejects a GIF cut inside the logical screen descriptor as corrupt_image', () => {
    expect(caught(() => readHeader(bytes('GIF89a', [10, 0]))).code).toBe('corrupt_image')
  })
})

describe('readHeader: WebP', () => {
  it('reads a lossy (VP8) WebP', () => {
    const header = readHeader(webp(vp8(128, 96)))
    expect(header).toMatchObject({ format: 'webp', width: 128, height: 96, hasAlpha: false, frames: 1 })
  })

  it('reads a lossless (VP8L) WebP and its alpha hint', () => {
    expect(readHeader(webp(vp8l(300, 200, false)))).toMatchObject({ width: 300, height: 200, hasAlpha: false })
    expect(readHeader(webp(vp8l(16384, 16384, true)))).toMatchObject({ width: 16384, height: 16384, hasAlpha: true })
  })

  it('reads a 50000x50000 VP8X canvas without decoding', () => {
    const header = readHeader(webp(vp8x(50000, 50000, 0), vp8(1, 1)))
    expect([header.width, header.height]).toEqual([50000, 50000])
  })

  it('sees alpha from the VP8X flag or an ALPH chunk', () => {
    expect(readHeader(webp(vp8x(100, 100, 0x10), riffChunk('ALPH', [0]), vp8(100, 100))).hasAlpha).toBe(true)
    expect(readHeader(webp(vp8x(100, 100, 0), riffChunk('ALPH', [0]), vp8(100, 100))).hasAlpha).toBe(true)
    expect(readHeader(webp(vp8x(100, 100, 0), vp8(100, 100))).hasAlpha).toBe(false)
  })

  it('counts ANMF chunks of an animated WebP', () => {
    const frame = riffChunk('ANMF', [...zeros(16), ...vp8(10, 10)])
    const anim = riffChunk('ANIM', [...zeros(4), 0, 0])
    const header = readHeader(webp(vp8x(200, 200, 0x02 | 0x10), anim, frame, frame, frame, frame, frame, frame))
    expect(header.frames).toBe(6)
    expect(header.hasAlpha).toBe(true)
  })

  it('reads orientation from an EXIF chunk, with or without the Exif prefix', () => {
    const plain = riffChunk('EXIF', tiff(true, [orientationEntry(6)]))
    const prefixed = riffChunk('EXIF', [...ascii('Exif\0\0'), ...tiff(false, [orientationEntry(3)])])
    expect(readHeader(webp(vp8x(10, 10, 0x08), vp8(10, 10), plain)).orientation).toBe(6)
    expect(readHeader(webp(vp8x(10, 10, 0x08), vp8(10, 10), prefixed)).orientation).toBe(3)
  })

  it('rejects a VP8 chunk without its start code as corrupt_image', () => {
    const broken = riffChunk('VP8 ', [0x50, 0x02, 0x00, 0x00, 0x00, 0x00, ...zeros(12)])
    expect(caught(() => readHeader(webp(broken))).code).toBe('corrupt_image')
  })

  it('rejects an unknown first chunk or a cut header as corrupt_image', () => {
    expect(caught(() => readHeader(webp(riffChunk('JUNK', zeros(10))))).code).toBe('corrupt_image')
    expect(caught(() => readHeader(webp(vp8(10, 10)).subarray(0, 24))).code).toBe('corrupt_image')
    expect(caught(() => readHeader(bytes('RIFF', u32le(4), 'WEBP'))).code).toBe('corrupt_image')
  })

  it('rejects a zero-sized VP8 frame as corrupt_image', () => {
    expect(caught(() => readHeader(webp(vp8(0, 10)))).code).toBe('corrupt_image')
  })
})

describe('readHeader: AVIF', () => {
  it('reads size, bit depth and alpha from the item properties', () => {
    const meta = avifMeta(
      [ispe(768, 512), pixi(10), av1C(0x40), ispe(768, 512), pixi(8), auxC(ALPHA_URN)],
      { 1: [1, 2, 0x83], 2: [4, 5, 0x83, 6] },
    )
    expect(readHeader(avif(meta))).toEqual({
      format: 'avif',
      width: 768,
      height: 512,
      orientation: 1,
      hasAlpha: true,
      frames: 1,
      bitDepth: 10,
      chroma: '444',
      progressive: false,
      scans: 1,
      truncated: false,
      lossless: false,
      colour: 'srgb',
    })
  })

  it("reads the chroma subsampling from av1C (the memory model charges the decoded planes by it)", () => {
    for (const [flags, chroma] of [[0x0c, '420'], [0x08, '422'], [0x00, '444'], [0x1c, 'mono']] as const) {
      expect(readHeader(avif(avifMeta([ispe(10, 10), av1C(flags)], { 1: [1, 2] }))).chroma).toBe(chroma)
    }
    expect(readHeader(avif(avifMeta([ispe(10, 10), pixi(8)], { 1: [1, 2] }))).chroma).toBeUndefined()
  })

  it('reports no alpha when no auxiliary alpha property exists', () => {
    expect(readHeader(avif(avifMeta([ispe(10, 10), pixi(8)], { 1: [1, 2] }))).hasAlpha).toBe(false)
  })

  it('recognises the HEVC-style alpha URN', () => {
    const meta = avifMeta([ispe(10, 10), auxC('urn:mpeg:hevc:2015:auxid:1')])
    expect(readHeader(avif(meta)).hasAlpha).toBe(true)
  })

  it("uses the primary item's ispe over a larger one of another item", () => {
    const meta = avifMeta([ispe(4000, 4000), ispe(403, 302)], { 1: [1], 2: [2] }, 2)
    expect(readHeader(avif(meta))).toMatchObject({ width: 403, height: 302 })
  })

  it('falls back to the largest ispe when there is no primary item association', () => {
    const meta = avifMeta([ispe(64, 64), ispe(50000, 50000), ispe(128, 128)])
    expect(readHeader(avif(meta))).toMatchObject({ width: 50000, height: 50000 })
  })

  it('takes the bit depth from av1C when there is no pixi', () => {
    expect(readHeader(avif(avifMeta([ispe(8, 8), av1C(0x40 | 0x20)], { 1: [1, 2] }))).bitDepth).toBe(12)
  })

  it.each([
    [undefined, undefined, 1],
    [1, undefined, 8],
    [2, undefined, 3],
    [3, undefined, 6],
    [undefined, 0, 4],
    [undefined, 1, 2],
    [1, 0, 5],
    [1, 1, 7],
    [2, 0, 2],
    [2, 1, 4],
    [3, 0, 7],
    [3, 1, 5],
  ])('maps irot %s + imir axis %s to EXIF orientation %i', (angle, axis, orientation) => {
    const props = [ispe(512, 256), ...(angle === undefined ? [] : [irot(angle)]), ...(axis === undefined ? [] : [imir(axis)])]
    const indices = props.map((_, i) => i + 1)
    const header = readHeader(avif(avifMeta(props, { 1: indices })))
    expect(header.orientation).toBe(orientation)
    expect([header.width, header.height]).toEqual([512, 256])
  })

  it('counts frames of an image sequence from the track sample table', () => {
    const entry = box('av01', zeros(6), u16be(1), zeros(16), u16be(150), u16be(150), zeros(50))
    const stbl = box('stbl', fullBox('stsd', 0, 0, u32be(1), entry), fullBox('stsz', 0, 0, u32be(0), u32be(5), zeros(20)))
    const moov = box('moov', box('trak', box('mdia', box('minf', stbl))))
    const withMeta = bytes(ftyp('avis', 'avif', 'avis', 'msf1'), avifMeta([ispe(150, 150)], { 1: [1] }), moov)
    const trackOnly = bytes(ftyp('avis', 'avis', 'msf1'), moov)
    expect(readHeader(withMeta)).toMatchObject({ width: 150, height: 150, frames: 5, hasAlpha: false })
    expect(readHeader(trackOnly)).toMatchObject({ width: 150, height: 150, frames: 5, hasAlpha: undefined })
  })

  it("reports more than one frame for an 'avis' file whose sample count is unreadable", () => {
    const data = bytes(ftyp('avis', 'avif', 'avis'), avifMeta([ispe(10, 10)]))
    expect(readHeader(data).frames).toBeGreaterThan(1)
  })

  it('handles 64-bit box sizes and a final box that runs to the end', () => {
    const meta = avifMeta([ispe(640, 360)])
    const wide = [...u32be(1), ...meta.slice(4, 8), ...u32be(0), ...u32be(meta.length + 8), ...meta.slice(8)]
    const toEnd = [...u32be(0), ...ascii('mdat'), ...zeros(32)]
    const data = bytes(ftyp('avif', 'avif'), box('free', zeros(3)), wide, toEnd)
    expect(readHeader(data)).toMatchObject({ width: 640, height: 360 })
  })

  it('still reads the size when a box overruns a truncated file', () => {
    const data = avif(avifMeta([ispe(1024, 428), pixi(10)], { 1: [1, 2] }))
    const cut = data.subarray(0, data.length - 30)
    expect(readHeader(cut)).toMatchObject({ width: 1024, height: 428, bitDepth: 10 })
  })

  it('ignores unknown properties and boxes', () => {
    const meta = avifMeta([ispe(100, 60), box('1234', zeros(8)), box('uuid', zeros(16)), pixi(8)], { 1: [1, 2, 3, 4] })
    expect(readHeader(avif(box('abcd', zeros(5)), meta))).toMatchObject({ width: 100, height: 60 })
  })

  it('rejects an AVIF without any ispe as corrupt_image', () => {
    expect(caught(() => readHeader(avif(avifMeta([pixi(8)])))).code).toBe('corrupt_image')
    expect(caught(() => readHeader(bytes(ftyp('avif', 'avif')))).code).toBe('corrupt_image')
  })

  it('rejects an ispe of 0x0 as corrupt_image', () => {
    expect(caught(() => readHeader(avif(avifMeta([ispe(0, 0)])))).code).toBe('corrupt_image')
  })

  it('does not loop on a box with an impossible size', () => {
    const broken = bytes(ftyp('avif', 'avif'), u32be(4), 'meta', zeros(32))
    expect(caught(() => readHeader(broken)).code).toBe('corrupt_image')
  })
})
