/**
 * Hostile inputs, made from valid images: truncations, seeded mutations, headers that declare huge
 * sizes, progressive JPEGs with thousands of scans, GIFs whose first frame is bigger than the screen.
 *
 * Shared by the workerd tests (test/integration/hostile.test.ts), the HTTP tests and the scripts
 * (scripts/fuzz.mjs, scripts/load.mjs import this file directly, with Node's type stripping), so it
 * has no imports and only erasable TypeScript.
 */

/** A deterministic PRNG (mulberry32): the same seed gives the same inputs on every machine. */
export function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** An integer in [0, n). */
export const pick = (random: () => number, n: number): number => Math.floor(random() * n)

// ---------------------------------------------------------------------------------------------
// Byte helpers

let crcTable: Uint32Array | undefined

/** CRC-32 of bytes[start, end) (the PNG chunk checksum). */
export function crc32(bytes: Uint8Array, start = 0, end = bytes.length): number {
  if (!crcTable) {
    crcTable = new Uint32Array(256)
    for (let n = 0; n < 256; n++) {
      let c = n
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
      crcTable[n] = c >>> 0
    }
  }
  let crc = 0xffffffff
  for (let i = start; i < end; i++) crc = crcTable[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8)
  return (crc ^ 0xffffffff) >>> 0
}

export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}

const ascii = (text: string): Uint8Array => Uint8Array.from(text, (c) => c.charCodeAt(0))
const fourcc = (bytes: Uint8Array, at: number): string => String.fromCharCode(...bytes.subarray(at, at + 4))
const be32 = (b: Uint8Array, at: number): number => ((b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) >>> 0
const le32 = (b: Uint8Array, at: number): number => (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0

/** Rewrite the CRC of every complete chunk of a PNG (after a mutation), so decoders look past the checksums. */
export function fixPngCrcs(png: Uint8Array): Uint8Array {
  const out = png.slice()
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength)
  let at = 8
  while (at + 12 <= out.length) {
    const length = view.getUint32(at)
    if (at + 12 + length > out.length) break
    view.setUint32(at + 8 + length, crc32(out, at + 4, at + 8 + length))
    at += 12 + length
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// Truncation and mutation

/**
 * Offsets to cut a file at: every one of the first 16 bytes, then spread over the file (the header,
 * the middle, just before the end), plus `random` seeded ones. Sorted, unique, all in [1, length).
 */
export function truncationOffsets(length: number, random = 8, seed = 1): number[] {
  const offsets = new Set<number>()
  for (let i = 1; i <= 16; i++) offsets.add(i)
  for (const n of [24, 32, 48, 64, 100, 200, 400, 1000]) offsets.add(n)
  for (const f of [0.1, 0.25, 0.5, 0.75, 0.9]) offsets.add(Math.floor(length * f))
  for (const back of [1, 2, 3, 16]) offsets.add(length - back)
  const rnd = prng(seed)
  for (let i = 0; i < random; i++) offsets.add(1 + pick(rnd, length - 1))
  return [...offsets].filter((n) => n >= 1 && n < length).sort((a, b) => a - b)
}

/** Values that often sit on the boundary of a check. */
const INTERESTING_8 = [0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff]
const INTERESTING_16 = [0x0000, 0x0001, 0x00ff, 0x0100, 0x3fff, 0x4000, 0x7fff, 0x8000, 0xfffe, 0xffff]
const INTERESTING_32 = [0, 1, 0xff, 0xffff, 0x10000, 0x3fffffff, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff]

export type MutationKind = 'bitflip' | 'byteset' | 'delete' | 'duplicate' | 'truncate' | 'field' | 'splice'

export const MUTATION_KINDS: readonly MutationKind[] = ['bitflip', 'byteset', 'delete', 'duplicate', 'truncate', 'field', 'splice']

export interface Mutation {
  bytes: Uint8Array
  /** What was done, e.g. "bitflip@1234.5, field32be@16=0x7fffffff". */
  description: string
}

/** Offsets biased towards the start, where the headers are: half the picks land in the first 512 bytes. */
function offsetIn(random: () => number, length: number): number {
  if (length <= 1) return 0
  return random() < 0.5 ? pick(random, Math.min(length, 512)) : pick(random, length)
}

function mutateOnce(input: Uint8Array, random: () => number, kind: MutationKind): Mutation {
  const n = input.length
  switch (kind) {
    case 'bitflip': {
      const out = input.slice()
      const at = offsetIn(random, n)
      const bit = pick(random, 8)
      out[at]! ^= 1 << bit
      return { bytes: out, description: `bitflip@${at}.${bit}` }
    }
    case 'byteset': {
      const out = input.slice()
      const at = offsetIn(random, n)
      const value = random() < 0.5 ? INTERESTING_8[pick(random, INTERESTING_8.length)]! : pick(random, 256)
      out[at] = value
      return { bytes: out, description: `byteset@${at}=0x${value.toString(16)}` }
    }
    case 'delete': {
      const at = offsetIn(random, n)
      const size = 1 + pick(random, Math.max(1, Math.min(n - at, random() < 0.7 ? 16 : 4096)))
      return { bytes: concat(input.subarray(0, at), input.subarray(at + size)), description: `delete@${at}+${size}` }
    }
    case 'duplicate': {
      const at = offsetIn(random, n)
      const size = 1 + pick(random, Math.max(1, Math.min(n - at, random() < 0.7 ? 16 : 4096)))
      const times = 1 + pick(random, random() < 0.9 ? 3 : 64)
      const copies = Array.from({ length: times }, () => input.subarray(at, at + size))
      return { bytes: concat(input.subarray(0, at + size), ...copies, input.subarray(at + size)), description: `duplicate@${at}+${size}x${times}` }
    }
    case 'truncate': {
      const at = random() < 0.3 ? pick(random, Math.min(n, 64)) : pick(random, n)
      return { bytes: input.slice(0, Math.max(1, at)), description: `truncate@${Math.max(1, at)}` }
    }
    case 'field': {
      // Overwrite a 16- or 32-bit field in the header area with a boundary value, either byte order.
      const out = input.slice()
      const wide = random() < 0.5
      const width = wide ? 4 : 2
      const at = pick(random, Math.max(1, Math.min(n, 512) - width))
      const little = random() < 0.5
      const value = wide ? INTERESTING_32[pick(random, INTERESTING_32.length)]! : INTERESTING_16[pick(random, INTERESTING_16.length)]!
      const view = new DataView(out.buffer, out.byteOffset, out.byteLength)
      if (at + width <= n) {
        if (wide) view.setUint32(at, value, little)
        else view.setUint16(at, value, little)
      }
      return { bytes: out, description: `field${width * 8}${little ? 'le' : 'be'}@${at}=0x${value.toString(16)}` }
    }
    case 'splice': {
      // Copy a run of the file over another place in it (moves real markers/chunk headers around).
      const out = input.slice()
      const from = pick(random, n)
      const to = offsetIn(random, n)
      const size = Math.min(1 + pick(random, 64), n - from, n - to)
      out.copyWithin(to, from, from + size)
      return { bytes: out, description: `splice@${from}->${to}+${size}` }
    }
  }
}

/**
 * 1 to 4 seeded mutations of `input` (of any kind, or only `kinds`). For PNG input, half the
 * mutants get their chunk CRCs fixed afterwards, so the mutation reaches the decoder instead of
 * being caught by the checksum.
 *
 * @example
 * const random = prng(42)
 * const { bytes, description } = mutate(fixture('photo.png'), random)
 */
export function mutate(input: Uint8Array, random: () => number, kinds: readonly MutationKind[] = MUTATION_KINDS): Mutation {
  let bytes = input
  const steps: string[] = []
  const count = 1 + (random() < 0.6 ? 0 : pick(random, 4))
  for (let i = 0; i < count && bytes.length > 0; i++) {
    const m = mutateOnce(bytes, random, kinds[pick(random, kinds.length)]!)
    bytes = m.bytes
    steps.push(m.description)
  }
  if (isPng(input) && isPng(bytes) && random() < 0.5) {
    bytes = fixPngCrcs(bytes)
    steps.push('png-crcs-fixed')
  }
  return { bytes, description: steps.join(', ') }
}

const isPng = (b: Uint8Array) => b.length > 8 && b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47

// ---------------------------------------------------------------------------------------------
// Headers that declare a size

/** A PNG with its IHDR width/height replaced and the CRC fixed. */
export function pngWithSize(png: Uint8Array, width: number, height: number): Uint8Array {
  const out = png.slice()
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength)
  view.setUint32(16, width)
  view.setUint32(20, height)
  view.setUint32(29, crc32(out, 12, 29))
  return out
}

/** Offset of the first SOFn marker of a JPEG (walking the segments), or -1. */
export function jpegSof(jpeg: Uint8Array): number {
  let at = 2
  while (at + 4 <= jpeg.length && jpeg[at] === 0xff) {
    const marker = jpeg[at + 1]!
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) return at
    if (marker === 0xda) return -1
    at += 2 + ((jpeg[at + 2]! << 8) | jpeg[at + 3]!)
  }
  return -1
}

/** A JPEG whose frame header (SOF) declares `width` x `height` (1-65535); the scan data is unchanged. */
export function jpegWithSize(jpeg: Uint8Array, width: number, height: number): Uint8Array {
  const sof = jpegSof(jpeg)
  if (sof < 0) throw new Error('no SOF marker')
  const out = jpeg.slice()
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength)
  view.setUint16(sof + 5, height)
  view.setUint16(sof + 7, width)
  return out
}

/** A GIF whose logical screen is `width` x `height` (1-65535). */
export function gifWithScreen(gif: Uint8Array, width: number, height: number): Uint8Array {
  const out = gif.slice()
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength)
  view.setUint16(6, width, true)
  view.setUint16(8, height, true)
  return out
}

/**
 * A minimal GIF89a: a `screenWidth` x `screenHeight` logical screen with a 2-colour global palette
 * and one image descriptor of `frameWidth` x `frameHeight` whose LZW data is only a clear code and
 * the end code (a few bytes for any frame size).
 */
export function gifWithFrame(screenWidth: number, screenHeight: number, frameWidth: number, frameHeight: number): Uint8Array {
  const u16 = (n: number) => [n & 0xff, (n >> 8) & 0xff]
  return Uint8Array.from([
    ...ascii('GIF89a'),
    ...u16(screenWidth), ...u16(screenHeight), 0x80, 0, 0, // global colour table of 2 entries
    0, 0, 0, 255, 255, 255,
    0x2c, ...u16(0), ...u16(0), ...u16(frameWidth), ...u16(frameHeight), 0, // image descriptor
    2, 1, 0x2c, 0, // LZW minimum code size 2; one sub-block: clear code (4), end code (5); terminator
    0x3b,
  ])
}

/** A WebP (simple VP8 or VP8L, or VP8X) with its declared size replaced. */
export function webpWithSize(webp: Uint8Array, width: number, height: number): Uint8Array {
  const out = webp.slice()
  const type = fourcc(out, 12)
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength)
  if (type === 'VP8 ') {
    view.setUint16(26, width & 0x3fff, true)
    view.setUint16(28, height & 0x3fff, true)
  } else if (type === 'VP8L') {
    const bits = view.getUint32(21, true)
    view.setUint32(21, ((bits & 0xf0000000) | (((height - 1) & 0x3fff) << 14) | ((width - 1) & 0x3fff)) >>> 0, true)
  } else if (type === 'VP8X') {
    out.set([(width - 1) & 255, ((width - 1) >> 8) & 255, ((width - 1) >> 16) & 255], 24)
    out.set([(height - 1) & 255, ((height - 1) >> 8) & 255, ((height - 1) >> 16) & 255], 27)
  } else {
    throw new Error(`unknown WebP chunk ${type}`)
  }
  return out
}

/** A RIFF chunk: `id`, the payload's size, the payload and its pad byte. */
export function riffChunk(id: string, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(8 + payload.length + (payload.length & 1))
  out.set(ascii(id), 0)
  new DataView(out.buffer).setUint32(4, payload.length, true)
  out.set(payload, 8)
  return out
}

/**
 * An animated WebP whose VP8X canvas (and ANMF frame rectangle) is `canvas` x `canvas` pixels, with
 * two frames, each the VP8 bitstream of `still` (a simple lossy WebP), its own size field rewritten to
 * `frameWidth` x `frameHeight`. The header a limit check reads is small; the bitstream is not.
 */
export function webpAnimatedWithFrame(still: Uint8Array, canvas: number, frameWidth: number, frameHeight: number): Uint8Array {
  if (fourcc(still, 12) !== 'VP8 ') throw new Error('needs a simple lossy (VP8) WebP')
  const vp8 = webpWithSize(still, frameWidth, frameHeight).subarray(20, 20 + le32(still, 16))
  const u24 = (n: number) => [n & 255, (n >> 8) & 255, (n >> 16) & 255]
  const vp8x = Uint8Array.from([0x02, 0, 0, 0, ...u24(canvas - 1), ...u24(canvas - 1)]) // animation flag
  const anim = Uint8Array.from([0, 0, 0, 0, 0, 0]) // background colour, loop count
  const anmfHeader = Uint8Array.from([...u24(0), ...u24(0), ...u24(canvas - 1), ...u24(canvas - 1), ...u24(100), 0])
  const body = concat(
    ascii('WEBP'),
    riffChunk('VP8X', vp8x),
    riffChunk('ANIM', anim),
    // Two frames: the API decodes the first frame of an animation (one frame would go to the still decoder).
    riffChunk('ANMF', concat(anmfHeader, riffChunk('VP8 ', vp8))),
    riffChunk('ANMF', concat(anmfHeader, riffChunk('VP8 ', vp8))),
  )
  return riffChunk('RIFF', body)
}

/** An AVIF (ISOBMFF) with every `ispe` property rewritten to `width` x `height`. */
export function avifWithIspe(avif: Uint8Array, width: number, height: number): Uint8Array {
  const out = avif.slice()
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength)
  let found = 0
  for (let at = 4; at + 16 <= out.length; at++) {
    if (fourcc(out, at) !== 'ispe' || be32(out, at - 4) !== 20) continue
    view.setUint32(at + 8, width)
    view.setUint32(at + 12, height)
    found++
  }
  if (!found) throw new Error('no ispe box')
  return out
}

// ---------------------------------------------------------------------------------------------
// Progressive JPEG with many scans

/** [start, end) of every scan (SOS marker to the next marker after its entropy-coded data). */
export function jpegScans(jpeg: Uint8Array): Array<[number, number]> {
  const scans: Array<[number, number]> = []
  let at = 2
  while (at + 4 <= jpeg.length) {
    if (jpeg[at] !== 0xff) {
      at++
      continue
    }
    const marker = jpeg[at + 1]!
    if (marker === 0xff) {
      at++
      continue
    }
    if (marker === 0xd9) break
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      at += 2
      continue
    }
    const end = at + 2 + ((jpeg[at + 2]! << 8) | jpeg[at + 3]!)
    if (marker !== 0xda) {
      at = end
      continue
    }
    let p = end
    while (p + 1 < jpeg.length && !(jpeg[p] === 0xff && jpeg[p + 1] !== 0 && (jpeg[p + 1]! < 0xd0 || jpeg[p + 1]! > 0xd7))) p++
    scans.push([at, p])
    at = p
  }
  return scans
}

/**
 * A progressive JPEG with `extra` more scans: the last scan (with the segments between it and the
 * scan before, such as its DHT) repeated before the end-of-image marker. libjpeg only warns about
 * the repeated progression and decodes every scan, each one a pass over the coefficients.
 */
export function jpegWithManyScans(progressive: Uint8Array, extra: number): Uint8Array {
  const scans = jpegScans(progressive)
  if (scans.length < 2) throw new Error('needs a progressive JPEG with at least two scans')
  const start = scans[scans.length - 2]![1]
  const end = scans[scans.length - 1]![1]
  const unit = progressive.subarray(start, end)
  const copies = new Uint8Array(unit.length * extra)
  for (let i = 0; i < extra; i++) copies.set(unit, i * unit.length)
  return concat(progressive.subarray(0, end), copies, progressive.subarray(end))
}

// ---------------------------------------------------------------------------------------------
// Text that is not an image

export const TEXT_BODIES: ReadonlyArray<{ name: string; text: string; detected: string }> = [
  { name: 'HTML page', text: '<!DOCTYPE html>\n<html><head><title>x</title></head><body><img src="a.png"></body></html>\n', detected: 'text' },
  { name: 'HTML fragment', text: '<html><body>not an image</body></html>', detected: 'text' },
  { name: 'SVG', text: '<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>', detected: 'svg' },
  { name: 'SVG with XML prolog and BOM', text: '\ufeff<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="50000" height="50000"/>', detected: 'svg' },
  { name: 'JSON', text: '{"image":"data:image/png;base64,iVBORw0KGgo="}', detected: 'text' },
  { name: 'plain text', text: 'GIF89 is almost a GIF header but not quite', detected: 'text' },
  { name: 'base64 of a PNG', text: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk', detected: 'text' },
]

/**
 * A progressive JPEG with `extra` empty scans before its end-of-image marker: copies of its last
 * SOS header with no entropy-coded data (10-14 bytes each). libjpeg accepts each one (it warns once
 * about the missing data) and still walks every block of the component, so the decode time grows
 * with the number of scans times the image size, while the file stays small.
 */
export function jpegWithEmptyScans(progressive: Uint8Array, extra: number): Uint8Array {
  const scans = jpegScans(progressive)
  const last = scans[scans.length - 1]
  if (!last || scans.length < 2) throw new Error('needs a progressive JPEG with at least two scans')
  const [start] = last
  const header = progressive.subarray(start, start + 2 + ((progressive[start + 2]! << 8) | progressive[start + 3]!))
  const copies = new Uint8Array(header.length * extra)
  for (let i = 0; i < extra; i++) copies.set(header, i * header.length)
  const eoi = last[1]
  return concat(progressive.subarray(0, eoi), copies, progressive.subarray(eoi))
}

/**
 * A lossless WebP (VP8L) of `width` x `height` (1-16384) in one colour, about 30 bytes for any size:
 * every prefix code has a single symbol, so each pixel takes no bits at all. A decoder still writes
 * width x height x 4 bytes, which is what makes it a decompression bomb when a header elsewhere
 * claims a small size.
 */
export function vp8lSolid(width: number, height: number, [r, g, b, a]: readonly [number, number, number, number] = [200, 100, 50, 255]): Uint8Array {
  const bits: number[] = []
  const put = (value: number, count: number) => {
    for (let i = 0; i < count; i++) bits.push((value >>> i) & 1)
  }
  put(width - 1, 14)
  put(height - 1, 14)
  put(a === 255 ? 0 : 1, 1) // alpha_is_used
  put(0, 3) // version
  put(0, 1) // no transform
  put(0, 1) // no colour cache
  put(0, 1) // no meta prefix codes
  // Five simple prefix codes of one 8-bit symbol each: green, red, blue, alpha; then distance.
  for (const symbol of [g, r, b, a]) {
    put(1, 1) // simple code
    put(0, 1) // one symbol
    put(1, 1) // 8-bit symbol
    put(symbol, 8)
  }
  put(1, 1)
  put(0, 1)
  put(0, 1) // 1-bit symbol
  put(0, 1)
  const stream = new Uint8Array(1 + Math.ceil(bits.length / 8))
  stream[0] = 0x2f
  bits.forEach((bit, i) => (stream[1 + (i >> 3)]! |= bit << (i & 7)))
  return riffChunk('RIFF', concat(ascii('WEBP'), riffChunk('VP8L', stream)))
}

/**
 * An animated WebP whose VP8X canvas and frame rectangles are `canvas` x `canvas`, with two frames
 * holding `frame` (a still WebP's VP8 or VP8L bitstream) as it is, whatever size that bitstream is.
 */
export function webpAnimationOf(frame: Uint8Array, canvas: number): Uint8Array {
  const id = fourcc(frame, 12)
  if (id !== 'VP8 ' && id !== 'VP8L') throw new Error('needs a simple WebP (VP8 or VP8L)')
  const bitstream = frame.subarray(20, 20 + le32(frame, 16))
  const u24 = (n: number) => [n & 255, (n >> 8) & 255, (n >> 16) & 255]
  const header = Uint8Array.from([...u24(0), ...u24(0), ...u24(canvas - 1), ...u24(canvas - 1), ...u24(100), 0])
  const anmf = riffChunk('ANMF', concat(header, riffChunk(id, bitstream)))
  return riffChunk(
    'RIFF',
    concat(
      ascii('WEBP'),
      riffChunk('VP8X', Uint8Array.from([0x12, 0, 0, 0, ...u24(canvas - 1), ...u24(canvas - 1)])), // alpha + animation
      riffChunk('ANIM', new Uint8Array(6)),
      anmf,
      anmf,
    ),
  )
}

/**
 * A 4x4 GIF whose LZW codes make a table entry that is its own prefix: clear, 0, 7 (not yet
 * defined), 1, then 7 again, read as 3-bit codes and a 4-bit one. omggif 1.0.10, the decoder before
 * giflib, followed the prefix chain of that entry forever. (Found by the seeded corruption test: a
 * 562-byte mutant of alpha.gif.)
 */
export function gifLzwCycle(): Uint8Array {
  return Uint8Array.from([
    ...ascii('GIF89a'),
    4, 0, 4, 0, 0x81, 0, 0, // 4x4 screen, global colour table of 4 entries
    0, 0, 0, 255, 255, 255, 255, 0, 0, 0, 0, 255,
    0x2c, 0, 0, 0, 0, 4, 0, 4, 0, 0, // image descriptor
    2, 3, 0xc4, 0x73, 0x05, 0, // LZW minimum code size 2; codes 4, 0, 7, 1, 7, 5
    0x3b,
  ])
}
