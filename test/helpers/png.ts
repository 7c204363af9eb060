/**
 * PNG files written byte by byte, for what none of the project's encoders writes: 16-bit samples,
 * Adam7 interlacing, image data that does not match its IHDR.
 */
import { concat, crc32 } from './hostile'

const SIGNATURE = Uint8Array.of(137, 80, 78, 71, 13, 10, 26, 10)

/** Colour type by channel count: grey, grey + alpha, RGB, RGBA. */
const COLOUR_TYPE = { 1: 0, 2: 4, 3: 2, 4: 6 } as const

/** Adam7 passes: first column, first row, column step, row step. */
const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
] as const

export interface RawImage {
  width: number
  height: number
  channels: 1 | 2 | 3 | 4
  depth: 8 | 16
  /** width x height x channels samples, row by row; 0-255 or 0-65535 by depth. */
  samples: ArrayLike<number>
}

/** One chunk: length, type, data, CRC-32. */
export function pngChunk(type: string, data: Uint8Array = new Uint8Array()): Uint8Array {
  const out = new Uint8Array(12 + data.length)
  const view = new DataView(out.buffer)
  view.setUint32(0, data.length)
  out.set(Array.from(type, (c) => c.charCodeAt(0)), 4)
  out.set(data, 8)
  view.setUint32(8 + data.length, crc32(out, 4, 8 + data.length))
  return out
}

/** The image's scanlines as PNG stores them before compression (filter type 0), pass by pass when interlaced. */
export function scanlines({ width, height, channels, depth, samples }: RawImage, interlaced: boolean): Uint8Array {
  const bytesPerSample = depth / 8
  const passes = (interlaced ? ADAM7 : [[0, 0, 1, 1] as const]).filter(([x0, y0]) => x0 < width && y0 < height)
  const rowBytes = (x0: number, dx: number) => 1 + Math.ceil((width - x0) / dx) * channels * bytesPerSample
  const size = passes.reduce((sum, [x0, y0, dx, dy]) => sum + Math.ceil((height - y0) / dy) * rowBytes(x0, dx), 0)
  const out = new Uint8Array(size)
  let at = 0
  for (const [x0, y0, dx, dy] of passes) {
    for (let y = y0; y < height; y += dy) {
      at++ // filter type 0
      for (let x = x0; x < width; x += dx) {
        for (let c = 0; c < channels; c++) {
          const value = samples[(y * width + x) * channels + c]!
          if (bytesPerSample === 2) out[at++] = value >> 8
          out[at++] = value & 255
        }
      }
    }
  }
  return out
}

/** zlib-wrapped deflate (RFC 1950), as IDAT holds. */
export async function zlibDeflate(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes]).stream().pipeThrough(new CompressionStream('deflate'))
  return new Uint8Array(await new Response(stream).arrayBuffer())
}

/**
 * A PNG of `image`, interlaced or not. `header` overrides the IHDR's size and `idat` the compressed
 * data (both with correct CRCs), for files whose image data does not match their header.
 */
export async function writePng(
  image: RawImage,
  { interlaced = false, header, idat }: { interlaced?: boolean; header?: { width: number; height: number }; idat?: (data: Uint8Array) => Uint8Array } = {},
): Promise<Uint8Array> {
  const ihdr = new Uint8Array(13)
  const view = new DataView(ihdr.buffer)
  view.setUint32(0, header?.width ?? image.width)
  view.setUint32(4, header?.height ?? image.height)
  ihdr.set([image.depth, COLOUR_TYPE[image.channels], 0, 0, interlaced ? 1 : 0], 8)
  const data = await zlibDeflate(scanlines(image, interlaced))
  return concat(SIGNATURE, pngChunk('IHDR', ihdr), pngChunk('IDAT', idat ? idat(data) : data), pngChunk('IEND'))
}

/**
 * RGB samples of a screenshot-like image: flat panels, a bluish title bar and lines of "text". It
 * deflates to well under the tests' 1 MiB body limit even at 3840x2160.
 */
export function screenshotSamples(width: number, height: number): Uint8Array {
  const samples = new Uint8Array(width * height * 3)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const text = y >= 90 && y % 28 < 12 && x > 400 && x < width - 280 && (x * 7 + Math.floor(y / 28) * 131) % 23 < 14
      const grey = text ? 40 : y < 60 ? 236 : x < 360 ? 246 : 255
      samples.set([grey, grey, y < 60 ? 250 : grey], (y * width + x) * 3)
    }
  }
  return samples
}

/**
 * A PNG without its gAMA chunk. PngSuite's files declare gamma 1.0, which the API honours (docs/guide/colour-metadata.md): tests
 * that take their decoded pixels as the expected output send them without it, so that both sides are the same
 * numbers; test/integration/colour.test.ts checks the gamma itself.
 */
export function withoutGamma(png: Uint8Array): Uint8Array {
  const parts: Uint8Array[] = [png.subarray(0, 8)]
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength)
  for (let at = 8; at + 12 <= png.length; ) {
    const length = view.getUint32(at)
    const type = String.fromCharCode(...png.subarray(at + 4, at + 8))
    if (type !== 'gAMA') parts.push(png.subarray(at, at + 12 + length))
    at += 12 + length
  }
  return concat(...parts)
}
