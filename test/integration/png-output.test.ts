/**
 * PNG output (wasm/lean/sink_png.c): the smallest lossless layout the pixels allow, read from them in a first pass
 * (a palette of 1-8 bits with tRNS, grey of 1-8 bits, no alpha channel where every pixel is opaque), and one zlib
 * stream made of chunks that libdeflate compressed one after another. Before it, oxipng found the palette for small
 * images only and libpng wrote every larger one as RGB or RGBA. Each answer is decoded with libpng and its IDAT
 * stream inflated again by workerd's own zlib (DecompressionStream), which checks the stream's Adler-32.
 */
import { describe, expect, it } from 'vitest'
import { compress, okBytes } from '../helpers/api'
import { firstDifference } from '../helpers/bytes'
import { fixture } from '../helpers/fixtures'
import { decode } from '../helpers/image'
import { withoutGamma, writePng } from '../helpers/png'

interface PngLayout {
  colourType: number
  depth: number
  chunks: string[]
  /** The IDAT chunks' data, joined: one zlib stream. */
  stream: Uint8Array
  width: number
  height: number
}

function layoutOf(png: Uint8Array): PngLayout {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength)
  const chunks: string[] = []
  const idat: Uint8Array[] = []
  for (let at = 8; at < png.length; ) {
    const length = view.getUint32(at)
    const type = new TextDecoder().decode(png.subarray(at + 4, at + 8))
    chunks.push(type)
    if (type === 'IDAT') idat.push(png.subarray(at + 8, at + 8 + length))
    at += 12 + length
  }
  const stream = new Uint8Array(idat.reduce((sum, part) => sum + part.length, 0))
  let at = 0
  for (const part of idat) {
    stream.set(part, at)
    at += part.length
  }
  return { colourType: png[25]!, depth: png[24]!, chunks, stream, width: view.getUint32(16), height: view.getUint32(20) }
}

/** The IDAT stream inflated by workerd's zlib: throws on a bad stream or checksum. */
async function inflate(stream: Uint8Array): Promise<Uint8Array> {
  const out = new Response(new Blob([stream]).stream().pipeThrough(new DecompressionStream('deflate')))
  return new Uint8Array(await out.arrayBuffer())
}

/** Filtered scanlines' size for a layout: a filter byte and the packed samples per row. */
const scanlineBytes = ({ width, height, colourType, depth }: PngLayout) => {
  const channels = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 }[colourType]!
  return height * (1 + Math.ceil((width * channels * depth) / 8))
}

async function roundTrip(input: Uint8Array, query: Record<string, string | number> = {}, contentType = 'image/png') {
  const bytes = await okBytes(await compress(input, { format: 'png', ...query }, { contentType }))
  const layout = layoutOf(bytes)
  expect((await inflate(layout.stream)).length).toBe(scanlineBytes(layout))
  const [source, output] = await Promise.all([decode(input), decode(bytes)])
  expect(output.format).toBe('png')
  expect([output.image.width, output.image.height]).toEqual([source.image.width, source.image.height])
  const bytesOf = ({ data }: ImageData) => new Uint8Array(data.buffer, data.byteOffset, data.length)
  expect(firstDifference(bytesOf(output.image), bytesOf(source.image))).toBe(-1)
  return { bytes, layout }
}

/** RGBA samples: every pixel from `colour(x, y)`. */
function rgba(width: number, height: number, colour: (x: number, y: number) => readonly number[]): Uint8Array {
  const samples = new Uint8Array(width * height * 4)
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) samples.set(colour(x, y), (y * width + x) * 4)
  return samples
}

/** An RGB gradient of thousands of colours. */
const photoLike = (x: number, y: number) => [(x * 3) & 255, (y * 2) & 255, ((x + y) * 5) % 251, 255]

describe('PNG output layout', () => {
  it('writes an RGBA PNG whose alpha is all opaque as RGB, every pixel unchanged', async () => {
    const input = await writePng({ width: 300, height: 200, channels: 4, depth: 8, samples: rgba(300, 200, photoLike) })
    const { layout } = await roundTrip(input)
    expect([layout.colourType, layout.depth]).toEqual([2, 8])
  })

  it('writes 12 colours with transparency as a 4-bit palette with tRNS', async () => {
    const colours = Array.from({ length: 12 }, (_, i) => [i * 20, 255 - i * 20, (i * 77) & 255, i < 3 ? i * 100 : 255])
    const input = await writePng({ width: 257, height: 99, channels: 4, depth: 8, samples: rgba(257, 99, (x, y) => colours[(x + 3 * y) % 12]!) })
    const { layout } = await roundTrip(input)
    expect([layout.colourType, layout.depth]).toEqual([3, 4])
    expect(layout.chunks.slice(0, 3)).toEqual(['IHDR', 'PLTE', 'tRNS'])
  })

  it('writes a black and white image as 1-bit grey', async () => {
    const input = await writePng({ width: 333, height: 111, channels: 3, depth: 8, samples: rgba(333, 111, (x, y) => ((x >> 3) + y) % 3 ? [0, 0, 0, 255] : [255, 255, 255, 255]).filter((_, i) => i % 4 !== 3) })
    const { layout } = await roundTrip(input)
    expect([layout.colourType, layout.depth]).toEqual([0, 1])
  })

  it('keeps a 16-bit PNG with real alpha as RGBA, reduced to 8 bits', async () => {
    const { layout } = await roundTrip(withoutGamma(fixture('basn6a16.png')))
    expect([layout.colourType, layout.depth]).toEqual([6, 8])
  })

  it('writes a photo of several deflated chunks as one zlib stream, at every effort', async () => {
    // large.jpg, 1200x750 RGB, is 2.7 MB of scanlines: three chunks of about 1 MiB, each deflated on its own.
    const input = fixture('large.jpg')
    const sizes: number[] = []
    for (const effort of [0, 2, 4]) {
      const { bytes, layout } = await roundTrip(input, { effort }, 'image/jpeg')
      expect(layout.colourType).toBe(2)
      expect(layout.chunks.filter((c) => c === 'IDAT').length).toBe(4)
      sizes.push(bytes.length)
    }
    // More effort, fewer bytes.
    expect(sizes[1]).toBeLessThan(sizes[0]!)
    expect(sizes[2]).toBeLessThanOrEqual(sizes[1]!)
  }, 60_000)

  it('resizes a transparent PNG into RGBA rows and keeps its alpha', async () => {
    const bytes = await okBytes(await compress(fixture('alpha.png'), { format: 'png', width: 64 }, { contentType: 'image/png' }))
    const layout = layoutOf(bytes)
    expect((await inflate(layout.stream)).length).toBe(scanlineBytes(layout))
    const out = await decode(bytes)
    expect(out.image.width).toBe(64)
    expect(out.image.data.some((v, i) => i % 4 === 3 && v < 255)).toBe(true)
  })
})
