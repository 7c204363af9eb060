/**
 * The lean codec (wasm/lean/*.c, built by wasm/lean/build.sh): MozJPEG, libwebp, libpng, giflib,
 * libavif with dav1d and libaom, driven row by row. Its row pipeline (pipeline.c) pulls rows from a source (a
 * JPEG at a DCT-scaled size, a PNG or GIF read from the request body in place, a still WebP's planes, an AVIF's)
 * through the turn, crop, Lanczos3, padding and flattening into a sink (libjpeg-turbo, libwebp, libpng,
 * libavif + libaom, or one RGBA image for the encoders outside it), so what a conversion holds is what its
 * stages hold, not whole RGBA copies.
 *
 * One `LeanCodec` is one instance for one conversion (wasm/session.ts): over the isolate's shared
 * lean memory inside a conversion, or over a memory of its own created here; either way with a maximum
 * (a MemoryCap), so a file that needs more fails cleanly inside the codec. Errors are thrown from the
 * `fail` import and leave the instance mid-call; it is not used again.
 *
 * Pixels a method returns are a view of the instance's memory. Handed back to a method of the same
 * instance they are passed by address, not copied (the callee takes them over), which also works after
 * the memory has grown and the view's buffer has been detached.
 */
import type { MemoryCap } from './cap'

interface LeanExports {
  _initialize(): void
  __stack_pointer: WebAssembly.Global
  __heap_base: WebAssembly.Global
  lean_alloc(size: number): number
  lean_free(ptr: number): void
  saliency_map(rgba: number, width: number, height: number, map: number): number
  lean_output(): number
  lean_output_size(): number
  jd_open(ptr: number, len: number): number
  jd_start(scaleEighths: number, channels: number): void
  jd_width(): number
  jd_height(): number
  jd_decode(orientation: number): number
  jd_to_yuv(orientation: number): void
  webp_encode(quality: number, method: number, lowMemory: number, lossless: number): number
  webp_encode_rgba(ptr: number, width: number, height: number, quality: number, method: number, lossless: number, lowMemory: number): number
  jpeg_encode(ptr: number, width: number, height: number, channels: number, quality: number, progressive: number, optimize: number, mozjpeg: number): number
  jd_to_jpeg(orientation: number, quality: number, progressive: number, optimize: number, mozjpeg: number): number
  pd_open(ptr: number, len: number, maxWidth: number, maxHeight: number): number
  pd_width(): number
  pd_height(): number
  pd_decode(): number
  wd_open(ptr: number, len: number): void
  wd_width(): number
  wd_height(): number
  wd_decode(width: number, height: number): number
  wd_to_yuv(): void
  resize_rgba(ptr: number, width: number, height: number, outWidth: number, outHeight: number, premultiply: number): number
  px_jpeg(): void
  px_png(): void
  px_webp(width: number, height: number): void
  gd_open(size: number, width: number, height: number): void
  px_gif(): void
  ad_open(ptr: number, len: number, width: number, height: number): void
  px_avif(): void
  px_colour(): number
  px_orient(orientation: number): void
  px_crop(x: number, y: number, width: number, height: number): void
  px_resize(width: number, height: number): void
  px_pad(width: number, height: number, r: number, g: number, b: number, a: number): void
  px_flatten(r: number, g: number, b: number): void
  px_blur(sigma: number): void
  px_sharpen(sigma: number, amount: number): void
  px_adjust(brightness: number, contrast: number, gamma: number, saturation: number): void
  px_border_box(tolerance: number): number
  px_width(): number
  px_height(): number
  px_alpha(): number
  px_grey(): number
  px_to_rgba(): number
  px_to_jpeg(quality: number, progressive: number, optimize: number, mozjpeg: number): number
  px_to_webp(lossless: number): number
  px_pixels(ptr: number, width: number, height: number, alpha: number): void
  px_kept(ptr: number, width: number, height: number, grey: number, alpha: number): void
  px_shrink(factor: number): void
  px_png_analyse(): void
  px_png_analyse_palette(): void
  px_quant_sample(): void
  px_quant_build(maxColours: number, target: number): number
  px_quant_quality(): number
  px_remap(): void
  px_to_png(level: number, strategies: number): number
  px_avif_rows(quality: number, speed: number, flags: number): void
  px_webpll_analyse(): void
  px_webpll_count(effort: number): void
  px_to_webpll(effort: number): number
  px_mosaic(spans: number, nx: number, ny: number): number
  px_score(distorted: number, alpha: number): number
  px_aside(): void
  px_score_aside(alpha: number): number
  sc_score(reference: number, distorted: number, width: number, height: number, alpha: number): number
  ae_whole(maxPixels: number): void
  ae_start(width: number, height: number, quality: number, speed: number, flags: number): void
  ae_metadata(kind: number, ptr: number, len: number): void
  ae_rows(ptr: number, count: number): void
  ae_finish(): number
  fr_gif(size: number, width: number, height: number): void
  fr_webp(ptr: number, len: number): void
  fr_width(): number
  fr_height(): number
  fr_loop(): number
  fr_next(): number
  px_frame(): void
  fr_start(width: number, height: number, loop: number, quality: number, method: number, lossless: number): void
  px_to_frame(timestampMs: number): void
  fr_finish(endMs: number): number
}

/**
 * Rows collected and kept in the instance (LeanCodec.rowsToKept) for later passes of the same conversion: RGBA.
 * Good for the instance that made it until its next reset (`holds`).
 */
export interface KeptRows {
  width: number
  height: number
  /** Every pixel grey (R = G = B), as the source said. */
  grey: boolean
  /** Whether the rows carry alpha. */
  alpha: boolean
  /** The pixels' address in the instance, and which instance and reset made them. */
  readonly ptr: number
  readonly codec: LeanCodec
  readonly generation: number
}

/** Where quality=auto's tiles lie (src/pipeline/auto-quality.ts, sampleSpans): (start, length) across and down. */
export interface SampleSpans {
  columns: readonly (readonly [start: number, length: number])[]
  rows: readonly (readonly [start: number, length: number])[]
}

/** A failure inside the lean codec: libjpeg's, libwebp's, libpng's or giflib's own message. */
export class LeanFailure extends Error {}

/**
 * A file that arrives while the decoder reads it (a PNG body being read, src/pipeline/body.ts): `read`
 * hands `length` bytes from offset `at` to `into` at once when they are buffered, or returns a promise that does once
 * they have arrived. Reads are in order, each from where the last ended.
 */
export interface StreamedFile {
  read(length: number, at: number, into: (bytes: Uint8Array) => void): void | Promise<void>
}

/** JavaScript Promise Integration (JSPI), where the engine has it: a wasm import that may wait, an export that can. */
interface Jspi {
  Suspending: new (f: (...args: never[]) => unknown) => WebAssembly.ImportValue
  promising: <F extends (...args: never[]) => unknown>(f: F) => (...args: Parameters<F>) => Promise<ReturnType<F>>
}
const jspi = (): Jspi | undefined => {
  const w = WebAssembly as unknown as Partial<Jspi>
  return typeof w.Suspending === 'function' && typeof w.promising === 'function' ? (w as Jspi) : undefined
}

/** Whether a file can be read as it arrives (`LeanCodec.rowsFromPngStream`): the engine has JSPI. */
export const canStreamInput = (): boolean => jspi() !== undefined

/** The exports that may read a streamed file: opening it, and the sinks that pull its rows. */
type PullingExport = 'pd_open' | 'px_to_jpeg' | 'px_to_webp' | 'px_avif_rows'

/** Settings of the AVIF sink (sink_avif.c: libavif and libaom). */
export interface LeanAvifSettings {
  /** libavif's quality, 0-100 (ignored when lossless). */
  quality: number
  /** libaom's speed, 0-10. */
  speed: number
  /** 4:4:4 with the identity matrix: RGB kept exactly. */
  lossless: boolean
  /** Encode the alpha channel (an auxiliary AV1 image); without it alpha is ignored. */
  alpha: boolean
}

/**
 * Lossy AVIFs of up to this many pixels are encoded whole: a 1600x1200 photo as one frame was 3-11 % smaller
 * than as a grid of 768x768 cells (wasm/lean/README.md), and an odd size stays 4:2:0. libaom's state follows
 * the frame, about 20 MiB per MP, within MEMORY_MODEL.encode.avif at this size (docs/results/memory.md). Larger ones
 * are grids whose cells libaom encodes one after another, so it holds one cell's state.
 */
export const AVIF_WHOLE_PIXELS = 2_100_000
const AVIF_ALPHA = 1
const AVIF_LOSSLESS = 2
const AVIF_SHARP_YUV = 4

/** Settings of the PNG sink (sink_png.c): libdeflate's level 1-12 and the filter strategies to try. */
export interface LeanPngSettings {
  level: number
  strategies: number
}

/** Lossy PNG (quant.c): at most `colours` palette entries, the fewest that reach `quality` (0-100). */
export interface PaletteSettings {
  colours: number
  quality: number
}

/** The palette made: its size and the quality it reached on the sample. */
export interface PaletteResult {
  colours: number
  quality: number
}

/** Filter strategies of the PNG sink, as bits: one PNG filter on every row, or a choice per row by a heuristic. */
export const PNG_STRATEGY = { none: 1, sub: 2, up: 4, average: 8, paeth: 16, minsum: 32, entropy: 64 } as const

/**
 * The first `length` bytes of `part` as an array that is its whole buffer (ArrayBuffer.transfer moves the memory, and
 * the answer's arrays are then all whole, which respond.ts frees once sent); a view where transfer is missing.
 */
export function shrink(part: Uint8Array, length: number): Uint8Array {
  const buffer = part.buffer as ArrayBuffer & { transfer?: (length: number) => ArrayBuffer }
  return buffer.transfer && part.byteOffset === 0 ? new Uint8Array(buffer.transfer(length)) : part.subarray(0, length)
}

/** Thrown from `write_output` to stop a sink whose file has reached the size it was to stay under. */
class OutputReachedLimit extends Error {}

/** The JPEG encoder's settings, as the lean codec takes them. */
export interface LeanJpegSettings {
  quality: number
  /** Progressive scans and optimised Huffman tables, for libjpeg-turbo's behaviour (MozJPEG's implies both). */
  progressive: boolean
  optimize: boolean
  /**
   * MozJPEG's own encoder (its JCP_MAX_COMPRESSION profile: trellis quantisation, ImageMagick's tables, progressive
   * scans chosen by trial, deringing): `trellis` quantises each row by trellis as it is transformed (lean.c's mode 3:
   * the bytes of MozJPEG's own passes, lean.c's mode 1, within 1.5 %, without their unquantised copy of every
   * coefficient, 3 MiB per MP: docs/notes/benchmarks.md item 31); `trellis-fixed-scans` is that with MozJPEG's fixed
   * progressive script instead of the scan search (the same coefficients, 0.4-0.7x the time, 0.2-6 % more bytes: item
   * 37); `multipass` trellis-quantises per scan, in passes over that copy. False: libjpeg-turbo's behaviour.
   */
  mozjpeg: false | 'trellis' | 'trellis-fixed-scans' | 'multipass'
}

const MOZJPEG_MODE = { false: 0, multipass: 2, trellis: 3, 'trellis-fixed-scans': 4 } as const
const jpegArgs = ({ quality, progressive, optimize, mozjpeg }: LeanJpegSettings): [number, number, number, number] =>
  [quality, progressive ? 1 : 0, optimize ? 1 : 0, MOZJPEG_MODE[`${mozjpeg}`]]

const PAGE = 65536
/**
 * The parts a sink's output is gathered in, in JS: the first is small and each next one twice the last, up to the
 * largest. (Parts of 1 MiB each from the first made every 192 px tile of a palette search allocate 1 MiB: six tries of
 * nine tiles, 54 MiB of garbage for files of about 20 KiB each, held workerd about 40 MiB higher.)
 */
const OUTPUT_PART = { first: 16 * 1024, largest: 1024 * 1024 }
/** wasm32 addresses at most 4 GiB. */
const MAX_PAGES = 65536
const EBADF = 8

/** The pages a lean memory starts with: the module's own initial memory (build.sh: --initial-memory, 2 MiB). */
export const INITIAL_PAGES = 32

/** The most 64 KiB pages a lean memory capped at `cap` may have. */
export const pagesFor = (cap: MemoryCap): number => Math.min(MAX_PAGES, Math.max(INITIAL_PAGES, Math.floor(cap.maxBytes / PAGE)))

interface InitialState {
  stack: number
  data: Uint8Array
}

const initialStates = new WeakMap<WebAssembly.Module, InitialState>()

/**
 * The stack pointer and the static data (data segments, zeroed bss) that instantiating `module` leaves, before its
 * constructors run: the same for every instance of a module, so read once (1.3 MiB for lean.wasm). The stack comes
 * first (build.sh: --stack-first), so static data runs from the stack's top to the heap's start.
 */
function initialStateOf(module: WebAssembly.Module, exports: LeanExports, memory: WebAssembly.Memory): InitialState {
  let state = initialStates.get(module)
  if (!state) {
    const stack = exports.__stack_pointer.value as number
    state = { stack, data: new Uint8Array(memory.buffer, stack, (exports.__heap_base.value as number) - stack).slice() }
    initialStates.set(module, state)
  }
  return state
}

/**
 * The lean instances not yet collected, for the isolate's own view of its memory (/api/health?memory=1): a weak
 * reference each, dropped when V8 collects the instance, so the count is what is still resident.
 */
const liveCodecs = new Set<WeakRef<LeanCodec>>()
const collected = new FinalizationRegistry<WeakRef<LeanCodec>>((ref) => liveCodecs.delete(ref))

export class LeanCodec {
  /**
   * The lean instances V8 has not collected yet and the bytes of their memories (a memory shared by several counted once).
   *
   * @example
   * LeanCodec.live() // { count: 1, memoryBytes: 14680064 }
   */
  static live(): { count: number; memoryBytes: number } {
    const memories = new Set<WebAssembly.Memory>()
    let count = 0
    for (const ref of liveCodecs) {
      const codec = ref.deref()
      if (!codec) continue
      count++
      memories.add(codec.memory)
    }
    return { count, memoryBytes: [...memories].reduce((sum, memory) => sum + memory.buffer.byteLength, 0) }
  }

  private readonly memory: WebAssembly.Memory
  private readonly exports: LeanExports
  /** The caps to mark as reached when the codec runs out of memory: its own and the current caller's. */
  private caps: Set<MemoryCap>
  /** Pixel views this instance returned, by their address in its memory. */
  private views = new WeakMap<Uint8ClampedArray, number>()
  /** The stack pointer and static data as instantiation leaves them (see `initialStateOf`), for `reset`. */
  private readonly initial: InitialState
  /** A file a decoder reads from JS as it goes (`read_input`), instead of from a copy in the instance. */
  private input: Uint8Array | undefined
  /** A file read as it arrives (rowsFromPngStream): `read_input` waits for it, through JSPI. */
  private streamed: StreamedFile | undefined
  /** The pulling exports through WebAssembly.promising, made on the first streamed file. */
  private promising: Record<PullingExport, (...args: number[]) => Promise<number>> | undefined
  /**
   * Counts resets: a streamed read that resumes after its conversion was abandoned and the instance reset for another
   * (its stack still suspended) must not write into the memory the next conversion uses.
   */
  private generation = 0
  /** The file last copied into the instance (fileIn), which a source opened again reads from the same copy. */
  private file: { bytes: Uint8Array; ptr: number } | undefined
  /** A second file held beside `file` (quality=auto's check: the answer, while the input stays cached), until dropHeld. */
  private held: { bytes: Uint8Array; ptr: number } | undefined
  /** What a sink wrote out to JS as it went (`write_output`), in parts of growing size (OUTPUT_PART). */
  private written: Uint8Array[] = []
  private writtenAt = 0
  /** The parts of a file the PNG sink gave up on (rowsToPng): room for the answer that replaces it (takeSpareParts). */
  private spare: Uint8Array[] = []
  /** A sink gives up once it has written this many bytes (see rowsToPng). */
  private writeLimit = Number.POSITIVE_INFINITY
  private writtenBytes = 0
  /**
   * Whether `read_input` is a JSPI import that may wait for a streamed file (rowsFromPngStream). V8 refuses any call of
   * such an import outside a promising export, even one that would not wait, so an instance is one or the other: the
   * session keeps one of each over the same memory (wasm/session.ts).
   */
  readonly streaming: boolean

  // (no parameter properties: scripts import this file in Node, whose type stripping refuses them)
  constructor(module: WebAssembly.Module, cap: MemoryCap, memory = new WebAssembly.Memory({ initial: INITIAL_PAGES, maximum: pagesFor(cap) }), streaming = false) {
    this.streaming = streaming
    this.memory = memory
    this.caps = new Set([cap])
    const fail = (ptr: number, len: number) => {
      const message = new TextDecoder().decode(new Uint8Array(this.memory.buffer, ptr, len))
      if (/memory/i.test(message)) for (const c of this.caps) c.reached = true
      throw new LeanFailure(message)
    }
    // wasi-libc links these for stdio, getenv, clocks and preopened directories; the codec writes nothing, reads
    // no environment or file, and libaom's timers may read a clock that stands still.
    const wasi = {
      fd_prestat_get: () => EBADF,
      fd_prestat_dir_name: () => EBADF,
      fd_fdstat_get: () => EBADF,
      fd_fdstat_set_flags: () => EBADF,
      fd_read: () => EBADF,
      path_open: () => EBADF,
      // Little CMS can save a profile to a file and remove it on failure (never called: profiles are read from memory).
      path_unlink_file: () => EBADF,
      path_remove_directory: () => EBADF,
      clock_time_get: (_id: number, _precision: bigint, out: number) => {
        new BigUint64Array(this.memory.buffer, out, 1)[0] = 0n
        return 0
      },
      environ_sizes_get: (count: number, size: number) => {
        new Uint32Array(this.memory.buffer, count, 1)[0] = 0
        new Uint32Array(this.memory.buffer, size, 1)[0] = 0
        return 0
      },
      environ_get: () => 0,
      fd_write: () => EBADF,
      fd_seek: () => EBADF,
      fd_close: () => EBADF,
      proc_exit: (code: number) => {
        throw new LeanFailure(`the codec exited with ${code}`)
      },
    }
    const readInput = (ptr: number, length: number, at: number): void | Promise<void> => {
      if (this.streamed) {
        const generation = this.generation
        return this.streamed.read(length, at, (bytes) => {
          if (generation !== this.generation) throw new LeanFailure('the conversion was abandoned')
          new Uint8Array(this.memory.buffer, ptr, length).set(bytes)
        })
      }
      if (!this.input || at + length > this.input.length) throw new LeanFailure('read past the input')
      new Uint8Array(this.memory.buffer, ptr, length).set(this.input.subarray(at, at + length))
    }
    const writeOutput = (ptr: number, length: number) => {
      this.writtenBytes += length
      if (this.writtenBytes >= this.writeLimit) throw new OutputReachedLimit()
      let from = new Uint8Array(this.memory.buffer, ptr, length)
      while (from.length) {
        let part = this.written.at(-1)
        if (!part || this.writtenAt === part.length) {
          part = new Uint8Array(part ? Math.min(OUTPUT_PART.largest, part.length * 2) : OUTPUT_PART.first)
          this.written.push(part)
          this.writtenAt = 0
        }
        const n = Math.min(from.length, part.length - this.writtenAt)
        part.set(from.subarray(0, n), this.writtenAt)
        this.writtenAt += n
        from = from.subarray(n)
      }
    }
    // Through JSPI, a read that has to wait for the body suspends the wasm stack, up to the promising export call.
    const suspending = streaming ? jspi() : undefined
    if (streaming && !suspending) throw new Error('this engine has no JSPI (WebAssembly.Suspending)')
    const env = { memory: this.memory, fail, read_input: suspending ? new suspending.Suspending(readInput) : readInput, write_output: writeOutput }
    const instance = new WebAssembly.Instance(module, { env, wasi_snapshot_preview1: wasi })
    this.exports = instance.exports as unknown as LeanExports
    this.initial = initialStateOf(module, this.exports, this.memory)
    this.exports._initialize()
    const ref = new WeakRef(this)
    liveCodecs.add(ref)
    collected.register(this, ref)
  }

  /**
   * Make this instance as a new one over the same memory would be, for the next conversion (wasm/session.ts):
   * the static data as instantiation wrote it (libc's and the libraries' state, the allocator's included, which
   * then hands out the pages the memory has from the heap's start), the stack pointer, which a failure thrown
   * out of a call leaves where it was, and the constructors run again; `cap` is the one to mark. A new instance
   * per conversion took 1 ms and about 0.1 MiB that stayed after V8's collections (node: 300 instances over one
   * memory, +34 MiB of RSS after gc(); 300 resets: none, 0.04 ms each).
   */
  reset(cap: MemoryCap): void {
    const { stack, data } = this.initial
    new Uint8Array(this.memory.buffer, stack, data.length).set(data)
    this.exports.__stack_pointer.value = stack
    this.caps = new Set([cap])
    this.views = new WeakMap()
    this.input = undefined
    this.streamed = undefined
    this.generation++
    this.file = undefined
    this.held = undefined
    this.written = []
    this.writtenAt = 0
    this.spare = []
    this.writeLimit = Number.POSITIVE_INFINITY
    this.writtenBytes = 0
    this.exports._initialize()
  }

  /** Also mark `cap` as reached if the codec runs out of memory (a later step's caller). */
  markOnFailure(cap: MemoryCap): void {
    this.caps.add(cap)
  }

  /** Copy a JPEG into the instance and read its header. */
  openJpeg(bytes: Uint8Array): { components: number } {
    const ptr = this.fileIn(bytes)
    return { components: this.exports.jd_open(ptr, bytes.length) }
  }

  /**
   * Start decoding at scaleEighths/8 of the stored size into `channels` per pixel (1 gray, 3 RGB,
   * 4 RGBA); returns the decoded (not yet oriented) size.
   */
  start(scaleEighths: number, channels: 1 | 3 | 4): { width: number; height: number } {
    this.exports.jd_start(scaleEighths, channels)
    return { width: this.exports.jd_width(), height: this.exports.jd_height() }
  }

  /**
   * Decode the started image, upright, to RGBA. The ImageData is a view of the instance's memory, not
   * a copy: it lives as long as the caller holds it.
   */
  decodeRgba(orientation: number): ImageData {
    const turned = orientation >= 5 && orientation <= 8
    const w = this.exports.jd_width()
    const h = this.exports.jd_height()
    const ptr = this.exports.jd_decode(orientation)
    const [width, height] = turned ? [h, w] : [w, h]
    return this.view(ptr, width, height)
  }

  /**
   * Decode a PNG to RGBA (every colour type and depth; 16-bit keeps the high byte). `width` x
   * `height` is the size the caller checked: libpng refuses a larger IHDR. Like decodeRgba, the
   * result is a view of the instance's memory.
   */
  decodePng(bytes: Uint8Array, width: number, height: number): ImageData {
    const ptr = this.copyIn(bytes)
    this.exports.pd_open(ptr, bytes.length, width, height)
    const [w, h] = [this.exports.pd_width(), this.exports.pd_height()]
    return this.view(this.exports.pd_decode(), w, h)
  }

  /**
   * Copy a still WebP (an animation's first frame comes cut out by src/codecs/webp-frame.ts) into the
   * instance and read its headers: the size its bitstream decodes to, before anything is allocated for it.
   */
  openWebp(bytes: Uint8Array): { width: number; height: number } {
    const ptr = this.fileIn(bytes)
    this.exports.wd_open(ptr, bytes.length)
    return { width: this.exports.wd_width(), height: this.exports.wd_height() }
  }

  /**
   * Decode the opened WebP to RGBA with libwebp, at its size or smaller (libwebp's rescaler, while
   * decoding). Like decodeRgba, a view of the instance's memory.
   */
  decodeWebp(width: number, height: number): ImageData {
    return this.view(this.exports.wd_decode(width, height), width, height)
  }

  /** Decode step of WebP -> lossy WebP: the opened (opaque) WebP's YUV 4:2:0 straight into the encoder's planes. */
  decodeWebpToYuv(): void {
    this.exports.wd_to_yuv()
  }

  /** Decode step of JPEG -> WebP: the started (RGB) image into the encoder's YUV 4:2:0 planes, upright. */
  decodeToYuv(orientation: number): void {
    this.exports.jd_to_yuv(orientation)
  }

  /**
   * Encode step of a conversion to WebP: the picture decodeToYuv, decodeWebpToYuv or rowsToWebpPicture
   * filled (lossless: only rowsToWebpPicture's; `quality` is then libwebp's effort 0-100).
   */
  encodeWebp(quality: number, method: number, lowMemory: boolean, lossless = false): Uint8Array {
    this.exports.webp_encode(quality, method, lowMemory ? 1 : 0, lossless ? 1 : 0)
    return this.output()
  }

  /**
   * Encode RGBA pixels as WebP (lossy: quality 0-100; lossless: quality is libwebp's effort 0-100).
   * The pixels are copied in and freed once the encoder has its own planes.
   */
  encodeWebpRgba(image: ImageData, { quality, method, lossless, lowMemory }: { quality: number; method: number; lossless: boolean; lowMemory: boolean }): Uint8Array {
    const ptr = this.pixelsIn(image)
    this.exports.webp_encode_rgba(ptr, image.width, image.height, quality, method, lossless ? 1 : 0, lowMemory ? 1 : 0)
    return this.output()
  }

  /**
   * Re-encode the opened JPEG (not started) as JPEG at its size, upright. Nothing turned, its rows stream through: a
   * YCbCr 4:2:0 JPEG's planes as they are (no colour conversion or chroma resampling), another's rows as RGB, a grey
   * one's as grey; a turned one is decoded whole first.
   */
  transcodeJpeg(orientation: number, settings: LeanJpegSettings): Uint8Array {
    this.exports.jd_to_jpeg(orientation, ...jpegArgs(settings))
    return this.output()
  }

  /** Encode RGBA pixels (alpha ignored) as JPEG with MozJPEG. */
  encodeJpeg(image: ImageData, settings: LeanJpegSettings): Uint8Array {
    const ptr = this.pixelsIn(image)
    this.exports.jpeg_encode(ptr, image.width, image.height, 4, ...jpegArgs(settings))
    this.exports.lean_free(ptr)
    return this.output()
  }

  /**
   * Resample RGBA pixels to `width` x `height` with Lanczos3 (resample.c), row by row: beyond the
   * copy in and the output, the codec holds a few rows. `premultiply` weights colour by alpha, for
   * images with transparency. Like decodeRgba, the result is a view of the instance's memory.
   */
  resizeRgba(image: ImageData, width: number, height: number, premultiply: boolean): ImageData {
    const ptr = this.pixelsIn(image)
    this.exports.resize_rgba(ptr, image.width, image.height, width, height, premultiply ? 1 : 0)
    return this.view(this.exports.lean_output(), width, height)
  }

  // ------------------------------------------------------------ the row pipeline (wasm/lean/pipeline.c)

  /**
   * Source: a JPEG's rows as stored (orientRows turns them), decoded at scaleEighths/8 of its size
   * (libjpeg's scaled inverse DCT). Returns the decoded size.
   */
  rowsFromJpeg(bytes: Uint8Array, scaleEighths: number): { width: number; height: number } {
    this.openJpeg(bytes)
    this.exports.jd_start(scaleEighths, 4)
    this.exports.px_jpeg()
    return this.rowsSize()
  }

  /**
   * Every row of the pipeline built so far, collected and kept in the instance for other passes of the conversion
   * (rowsFromKept), with no copy out to JS; the reset before the next conversion frees them.
   */
  rowsToKept(): KeptRows {
    const { width, height, alpha } = this.rowsSize()
    const grey = this.exports.px_grey() !== 0
    const ptr = this.exports.px_to_rgba()
    return { width, height, grey, alpha, ptr, codec: this, generation: this.generation }
  }

  /** Whether `kept` is still in this instance's memory: made by it, and not reset since. */
  holds(kept: KeptRows): boolean {
    return kept.codec === this && kept.generation === this.generation
  }

  /** Source: rows rowsToKept kept. They stay kept: every pass may read them. */
  rowsFromKept(kept: KeptRows): { width: number; height: number } {
    if (!this.holds(kept)) throw new Error('rows kept by another instance, or before a reset')
    this.exports.px_kept(kept.ptr, kept.width, kept.height, kept.grey ? 1 : 0, kept.alpha ? 1 : 0)
    return this.rowsSize()
  }

  /**
   * Source: a PNG's rows, every colour type and depth as 8-bit RGBA. The file is read from `bytes` as
   * libpng asks for it, not copied into the instance; `width` x `height` is the size the caller checked.
   */
  rowsFromPng(bytes: Uint8Array, width: number, height: number): { width: number; height: number } {
    this.input = bytes
    this.exports.pd_open(0, bytes.length, width, height)
    this.exports.px_png()
    return this.rowsSize()
  }

  /**
   * Source: a PNG's rows as rowsFromPng, its file read as it arrives: `read_input` waits (JSPI) for the bytes libpng
   * asks for, so only what `file` buffers is ever held. `maxBytes` is the most the file may have. The sinks that
   * pull these rows run through WebAssembly.promising (`pull`) and return promises.
   */
  async rowsFromPngStream(file: StreamedFile, maxBytes: number, width: number, height: number): Promise<{ width: number; height: number }> {
    if (!this.streaming) throw new Error('a streamed file needs a streaming instance')
    this.streamed = file
    await this.pull('pd_open', 0, maxBytes, width, height)
    this.exports.px_png()
    return this.rowsSize()
  }

  /** An export that pulls the input's bytes: through WebAssembly.promising while the file is streamed, else as it is. */
  private pull(name: PullingExport, ...args: number[]): number | Promise<number> {
    if (!this.streamed) return (this.exports[name] as (...a: number[]) => number)(...args)
    const { promising } = jspi()!
    this.promising ??= {
      pd_open: promising(this.exports.pd_open),
      px_to_jpeg: promising(this.exports.px_to_jpeg),
      px_to_webp: promising(this.exports.px_to_webp),
      px_avif_rows: promising(this.exports.px_avif_rows),
    } as unknown as Record<PullingExport, (...args: number[]) => Promise<number>>
    return this.promising[name](...args)
  }

  /**
   * Source: a GIF's first frame on its logical screen (transparent where the frame is not, or where it
   * uses its transparent index), as RGBA rows. The file is read from `bytes` as giflib asks for it; `width`
   * x `height` is the canvas the caller checked, and giflib's must be the same.
   */
  rowsFromGif(bytes: Uint8Array, width: number, height: number): { width: number; height: number } {
    this.input = bytes
    this.exports.gd_open(bytes.length, width, height)
    this.exports.px_gif()
    return this.rowsSize()
  }

  /**
   * Source: an AVIF's rows, made from its decoded YUV planes (dav1d, through libavif) a band at a time.
   * The file is copied into the instance (libavif reads items out of it); `width` x `height` is the size
   * the caller checked, which the AV1 image must have.
   */
  rowsFromAvif(bytes: Uint8Array, width: number, height: number): { width: number; height: number } {
    this.exports.ad_open(this.fileIn(bytes), bytes.length, width, height)
    this.exports.px_avif()
    return this.rowsSize()
  }

  /**
   * An animation's frames (wasm/lean/frames.c), each the whole canvas as a viewer shows it: a GIF's composited by
   * anim_gif.c (read from `bytes` as giflib asks for it; `width` x `height` is the screen the caller checked), an
   * animated WebP's by libwebp's WebPAnimDecoder (from a copy in the instance). Returns the canvas size and the
   * WebP's loop count (a GIF's comes from its header). Then nextFrame() until it returns -1.
   */
  openFrames(bytes: Uint8Array, format: 'gif' | 'webp', width: number, height: number): { width: number; height: number; loop: number } {
    if (format === 'gif') {
      this.input = bytes
      this.exports.fr_gif(bytes.length, width, height)
    } else {
      this.exports.fr_webp(this.fileIn(bytes), bytes.length)
    }
    return { width: this.exports.fr_width(), height: this.exports.fr_height(), loop: this.exports.fr_loop() }
  }

  /** The next frame onto the canvas: how long it shows (ms), or -1 after the last. */
  nextFrame(): number {
    return this.exports.fr_next()
  }

  /** Source: the frame nextFrame composited, as rows (the canvas stays the frame source's). */
  rowsFromFrame(): { width: number; height: number } {
    this.exports.px_frame()
    return this.rowsSize()
  }

  /** The canvas nextFrame composited, copied out (for tests and benchmarks that compare frames). */
  frameRgba(): ImageData {
    this.exports.px_frame()
    const { width, height } = this.rowsSize()
    const ptr = this.exports.px_to_rgba()
    const data = new Uint8ClampedArray(this.memory.buffer, ptr, width * height * 4).slice()
    this.exports.lean_free(ptr)
    return new ImageData(data, width, height)
  }

  /**
   * Start an animated WebP of `width` x `height` (libwebp's WebPAnimEncoder): loop 0 plays forever; settings as
   * libwebpSettings makes them (lossless: quality is the compression effort).
   */
  startAnimation(width: number, height: number, loop: number, { quality, method, lossless }: { quality: number; method: number; lossless: boolean }): void {
    this.exports.fr_start(width, height, loop, quality, method, lossless ? 1 : 0)
  }

  /** Sink: the rows as the animation's frame shown from `timestampMs`. */
  rowsToFrame(timestampMs: number): void {
    this.exports.px_to_frame(timestampMs)
  }

  /** The animated WebP, its last frame ending at `endMs`. */
  finishAnimation(endMs: number): Uint8Array {
    this.exports.fr_finish(endMs)
    return this.output()
  }

  /** Source: the opened still WebP's rows (openWebp), at its size or shrunk to `width` x `height` by libwebp. */
  rowsFromWebp(width: number, height: number): { width: number; height: number } {
    this.exports.px_webp(width, height)
    return this.rowsSize()
  }

  /**
   * The source's colours to sRGB (Little CMS, wasm/lean/colour.c), straight after the source. True if that added a stage;
   * false when they are sRGB already (an sRGB profile included) or the profile cannot be used (a broken one is ignored).
   */
  colourRows(): boolean {
    return this.exports.px_colour() === 1
  }

  /** Transforms, in the order they are added: EXIF orientation, crop, Lanczos3 resample, centred padding, flattening over a colour. */
  orientRows(orientation: number): void {
    this.exports.px_orient(orientation)
  }

  cropRows({ x, y, width, height }: { x: number; y: number; width: number; height: number }): void {
    this.exports.px_crop(x, y, width, height)
  }

  resizeRows(width: number, height: number): void {
    this.exports.px_resize(width, height)
  }

  padRows(width: number, height: number, [r, g, b, a]: readonly [number, number, number, number]): void {
    this.exports.px_pad(width, height, r, g, b, a)
  }

  flattenRows([r, g, b]: readonly [number, number, number]): void {
    this.exports.px_flatten(r, g, b)
  }

  /** The mean of each `factor` x `factor` block (op_shrink.c): gravity=auto's preview from the large rows its pass keeps. */
  shrinkRows(factor: number): void {
    this.exports.px_shrink(factor)
  }

  /** Filters after the resample: a Gaussian blur (op_blur.c), an unsharp mask (op_sharpen.c), colour adjustments (op_adjust.c). */
  blurRows(sigma: number): void {
    this.exports.px_blur(sigma)
  }

  sharpenRows(sigma: number, amount: number): void {
    this.exports.px_sharpen(sigma, amount)
  }

  adjustRows({ brightness, contrast, gamma, saturation }: { brightness: number; contrast: number; gamma: number; saturation: number }): void {
    this.exports.px_adjust(brightness, contrast, gamma, saturation)
  }

  /** Sink for trim=border (op_trim.c): the box inside the rows' uniform border, within `tolerance` (0-255) of the top left pixel. */
  rowsBorderBox(tolerance: number): { x: number; y: number; width: number; height: number } {
    const ptr = this.exports.px_border_box(tolerance)
    const [x, y, width, height] = new Int32Array(this.memory.buffer, ptr, 4)
    return { x: x!, y: y!, width: width!, height: height! }
  }

  /**
   * gravity=auto's saliency map of RGBA pixels (op_saliency.c, for src/pipeline/smartcrop.ts), a float a pixel.
   * Leaves the rows and the memory as they were.
   */
  saliency(image: ImageData): Float32Array {
    const ptr = this.copyIn(image.data)
    const map = this.exports.lean_alloc(image.width * image.height * 4)
    try {
      if (this.exports.saliency_map(ptr, image.width, image.height, map) !== 0) throw new LeanFailure('out of memory')
      return new Float32Array(this.memory.buffer, map, image.width * image.height).slice()
    } finally {
      this.exports.lean_free(map)
      this.exports.lean_free(ptr)
    }
  }

  /** The size the rows have now, and whether they may have alpha. */
  rowsSize(): { width: number; height: number; alpha: boolean } {
    return { width: this.exports.px_width(), height: this.exports.px_height(), alpha: this.exports.px_alpha() !== 0 }
  }

  /** Sink: every row into MozJPEG's compressor (grey rows as a greyscale JPEG). */
  async rowsToJpeg(settings: LeanJpegSettings): Promise<Uint8Array> {
    await this.pull('px_to_jpeg', ...jpegArgs(settings))
    return this.output()
  }

  /**
   * Sink, first half: every row into the WebP encoder's picture (YUV 4:2:0 for lossy, ARGB for lossless).
   * Returns whether a pixel is transparent; encodeWebp then encodes the picture.
   */
  async rowsToWebpPicture(lossless: boolean): Promise<{ transparent: boolean }> {
    return { transparent: (await this.pull('px_to_webp', lossless ? 1 : 0)) !== 0 }
  }

  /**
   * Lossless WebP by our own VP8L encoder (sink_webpll.c), holding a few rows and a window of recent ones, never the
   * image: three passes over a pipeline that `build` makes afresh (it is built once already): the colours (whether 256
   * or fewer make a palette), the symbols counted, then the file, written out to JS in parts as it is made.
   *
   * @example
   * const parts = lean.rowsToWebpLossless(() => buildRows(lean, input), 4)
   */
  rowsToWebpLossless(build: () => void, effort: number): Uint8Array[] {
    this.exports.px_webpll_analyse()
    build()
    this.exports.px_webpll_count(effort)
    build()
    this.startWriting()
    this.exports.px_to_webpll(effort)
    return this.takeWritten()
  }

  /**
   * PNG sink, first pass: reads the rows to learn what the smallest lossless layout is (a palette of up to 256
   * colours, grey, no alpha; sink_png.c), then closes them. The caller builds the same pipeline again for rowsToPng.
   */
  private analysePngRows(): void {
    this.exports.px_png_analyse()
  }

  /**
   * PNG sink, second pass: the rows analysePngRows read, again, in the layout it chose, filtered and deflated
   * by libdeflate a chunk at a time at `level` (1-12), each chunk by the smallest of `strategies` (a mask of
   * PNG_STRATEGY bits; 0: the layout's usual one). The file comes out in parts, written to JS as it is made,
   * never whole in the instance. Undefined when the file reached `giveUpAt` bytes: the sink stops there (the
   * instance is then spent, as after a failure).
   */
  rowsToPng({ level, strategies }: LeanPngSettings, giveUpAt = Number.POSITIVE_INFINITY): Uint8Array[] | undefined {
    this.startWriting()
    this.writeLimit = giveUpAt
    try {
      this.exports.px_to_png(level, strategies)
    } catch (error) {
      if (!(error instanceof OutputReachedLimit)) throw error
      this.spare = this.written
      this.written = []
      return undefined
    } finally {
      this.writeLimit = Number.POSITIVE_INFINITY
    }
    return this.takeWritten()
  }

  /** A sink that writes its file out to JS as it goes (`write_output`) starts with nothing written. */
  private startWriting(): void {
    this.written = []
    this.writtenBytes = 0
  }

  /** What the sink wrote, in parts, the last cut to what was written of it; nothing is kept. */
  private takeWritten(): Uint8Array[] {
    const parts = this.written
    this.written = []
    const last = parts.pop()
    if (last) parts.push(shrink(last, this.writtenAt))
    return parts
  }

  /** The parts of the file a PNG sink gave up on, once: their memory can hold the answer that replaces it (copyParts). */
  takeSpareParts(): Uint8Array[] {
    const spare = this.spare
    this.spare = []
    return spare
  }

  /**
   * Lossy PNG, first pass (wasm/lean/quant.c): the rows read for a sample of at most 65536 pixels, then closed; then
   * the palette: the fewest median-cut colours (up to `maxColours`) whose quality reaches `target` (0-100), refined by
   * k-means. Returns its size and the quality reached. Build the pipeline again and remapRows() before each PNG pass.
   */
  private buildPalette(maxColours: number, target: number): PaletteResult {
    this.exports.px_quant_sample()
    return { colours: this.exports.px_quant_build(maxColours, target), quality: this.exports.px_quant_quality() }
  }

  /** Transform: the rows mapped to the palette buildPalette made, with softened Floyd-Steinberg dithering. */
  private remapRows(): void {
    this.exports.px_remap()
  }

  /**
   * The PNG sink's passes before rowsToPng, over a pipeline that `build` makes afresh (it is built once already): for
   * `palette`, the palette from a first read (buildPalette) and the layout from the palette, the rows mapped to it;
   * otherwise the layout from a first read (analysePngRows). Leaves the pipeline built for rowsToPng; returns the
   * palette made.
   */
  preparePng(build: () => void, palette?: PaletteSettings): PaletteResult | undefined {
    if (!palette) {
      this.analysePngRows()
      build()
      return undefined
    }
    const made = this.buildPalette(palette.colours, palette.quality)
    // The mapped rows hold the palette's colours only: the layout comes from the palette, without a second read.
    this.exports.px_png_analyse_palette()
    build()
    this.remapRows()
    return made
  }

  /** Encode RGBA pixels as PNG, as rowsToPng does rows (every pass reads the pixels in place); a palette as rows do. */
  encodePng(image: ImageData, settings: LeanPngSettings, palette?: PaletteSettings): { parts: Uint8Array[]; palette?: PaletteResult } {
    const ptr = this.pixelsIn(image)
    const source = () => this.exports.px_pixels(ptr, image.width, image.height, 1)
    source()
    const made = this.preparePng(source, palette)
    const parts = this.rowsToPng(settings)!
    this.exports.lean_free(ptr)
    return { parts, ...(made ? { palette: made } : {}) }
  }

  /**
   * Sink: every row into the AVIF encoder's planes (sink_avif.c), 64 at a time, then libaom. Lossy output is
   * 4:2:0 (4:4:4 for an odd-sized grid, above AVIF_WHOLE_PIXELS), converted by libsharpyuv; lossless is 4:4:4
   * with the identity matrix. The source and transforms free their memory before libaom allocates its own.
   */
  /** What the next AVIF carries besides pixels (the `metadata` option): libavif writes it with the image. */
  setAvifMetadata({ icc, exif, xmp }: { icc?: Uint8Array | undefined; exif?: Uint8Array | undefined; xmp?: Uint8Array | undefined }): void {
    for (const [kind, bytes] of [icc, exif, xmp].entries()) {
      if (!bytes) continue
      const ptr = this.exports.lean_alloc(bytes.length)
      new Uint8Array(this.memory.buffer, ptr, bytes.length).set(bytes)
      this.exports.ae_metadata(kind, ptr, bytes.length)
      this.exports.lean_free(ptr)
    }
  }

  /**
   * `sourceClosed` runs once every row is in the encoder's planes and the pipeline is closed (its source's memory given
   * back), before libaom allocates its state: where nothing reads the input again, it lets go of the file.
   */
  async rowsToAvif(settings: LeanAvifSettings, sourceClosed?: () => void): Promise<Uint8Array> {
    const { quality, speed, flags } = this.avifStart(settings)
    await this.pull('px_avif_rows', quality, speed, flags)
    if (sourceClosed) {
      this.input = undefined
      sourceClosed()
    }
    this.exports.ae_finish()
    return this.output()
  }

  /** Encode RGBA pixels as AVIF, as rowsToAvif does rows. */
  encodeAvif(image: ImageData, settings: LeanAvifSettings): Uint8Array {
    const { quality, speed, flags } = this.avifStart(settings)
    const ptr = this.pixelsIn(image)
    this.exports.ae_start(image.width, image.height, quality, speed, flags)
    this.exports.ae_rows(ptr, image.height)
    this.exports.lean_free(ptr)
    this.exports.ae_finish()
    return this.output()
  }

  private avifStart({ quality, speed, lossless, alpha }: LeanAvifSettings): { quality: number; speed: number; flags: number } {
    // Lossy images up to AVIF_WHOLE_PIXELS are one AV1 frame, not a grid (no seams to pay for, 4:2:0 at any size).
    this.exports.ae_whole(lossless ? 0 : AVIF_WHOLE_PIXELS)
    return { quality: lossless ? 100 : quality, speed, flags: (alpha ? AVIF_ALPHA : 0) | (lossless ? AVIF_LOSSLESS : AVIF_SHARP_YUV) }
  }

  /**
   * Sink for quality=auto (score.c): the tiles the spans (start, length) of `columns` and `rows` mark, side by side in one
   * RGBA image outside the instance.
   */
  rowsToSample({ columns, rows }: SampleSpans): ImageData {
    const spans = this.copyIn(new Uint8Array(Int32Array.from([...columns, ...rows].flat()).buffer))
    const ptr = this.exports.px_mosaic(spans, columns.length, rows.length)
    this.exports.lean_free(spans)
    const total = (list: SampleSpans['columns']) => list.reduce((sum, [, length]) => sum + length, 0)
    const [width, height] = [total(columns), total(rows)]
    const data = new Uint8ClampedArray(this.memory.buffer, ptr, width * height * 4).slice()
    this.exports.lean_free(ptr)
    return new ImageData(data, width, height)
  }

  /** RGBA pixels through the row stages `stages` adds (the filters), as a new view of the instance; the pixels are taken over. */
  throughRows(image: ImageData, stages: () => void): ImageData {
    const ptr = this.pixelsIn(image)
    this.exports.px_pixels(ptr, image.width, image.height, 1)
    stages()
    const out = this.rowsToRgba()
    this.exports.lean_free(ptr)
    return out
  }

  /** quality=auto's sample of whole RGBA pixels, as rowsToSample makes it of rows; the pixels are left as they are. */
  sampleOf(image: ImageData, spans: SampleSpans): ImageData {
    const own = this.views.get(image.data)
    const ptr = own ?? this.copyIn(image.data)
    this.exports.px_pixels(ptr, image.width, image.height, 1)
    const sample = this.rowsToSample(spans)
    if (own === undefined) this.exports.lean_free(ptr)
    return sample
  }

  /**
   * SSIMULACRA 2 of `distorted` against `reference` (the same size; score.c), 0-100: 90 is visually lossless, 70 high
   * quality, 50 medium. `distorted` is taken over when it is a view of this instance. With `alpha`, the lower of the
   * scores over a dark and a light background.
   */
  score(reference: ImageData, distorted: ImageData, alpha: boolean): number {
    if (reference.width !== distorted.width || reference.height !== distorted.height) throw new LeanFailure('images of different sizes')
    const b = this.pixelsIn(distorted)
    const a = this.copyIn(reference.data)
    const score = this.exports.sc_score(a, b, reference.width, reference.height, alpha ? 1 : 0)
    this.exports.lean_free(a)
    this.exports.lean_free(b)
    return score
  }

  /**
   * Sink for quality=auto's check of the whole answer (score.c): SSIMULACRA 2 of `distorted` (the answer decoded, the
   * rows' size; taken over when it is a view of this instance) against the rows, read a row of each at a time.
   */
  rowsScore(distorted: ImageData, alpha: boolean): number {
    const { width, height } = this.rowsSize()
    if (distorted.width !== width || distorted.height !== height) throw new LeanFailure('images of different sizes')
    const ptr = this.pixelsIn(distorted)
    const score = this.exports.px_score(ptr, alpha ? 1 : 0)
    this.exports.lean_free(ptr)
    return score
  }

  /**
   * Copy `bytes` in as a file held beside the cached one (quality=auto's check: the answer's, so that the input's copy,
   * made once per conversion, is not made again for each check); dropHeld frees it once its decoder is closed.
   */
  holdFile(bytes: Uint8Array): void {
    this.dropHeld()
    this.held = { bytes, ptr: this.copyIn(bytes) }
  }

  dropHeld(): void {
    if (this.held) this.exports.lean_free(this.held.ptr)
    this.held = undefined
  }

  /** Sets the pipeline built so far (quality=auto: the answer's source) aside, for rowsScoreAside. */
  rowsAside(): void {
    this.exports.px_aside()
  }

  /**
   * Sink for quality=auto's check, as rowsScore, against the pipeline set aside (rowsAside) in place of a decoded
   * image: the two are read a row of each at a time, and both closed.
   */
  rowsScoreAside(alpha: boolean): number {
    return this.exports.px_score_aside(alpha ? 1 : 0)
  }

  /** Sink: the whole image as RGBA, a view of the instance's memory (for the encoders outside the lean codec). */
  rowsToRgba(): ImageData {
    const { width, height } = this.rowsSize()
    return this.view(this.exports.px_to_rgba(), width, height)
  }

  /** RGBA pixels at `ptr`, as an ImageData over the instance's memory (remembered for pixelsIn). */
  private view(ptr: number, width: number, height: number): ImageData {
    const data = new Uint8ClampedArray(this.memory.buffer, ptr, width * height * 4)
    this.views.set(data, ptr)
    return new ImageData(data, width, height)
  }

  /**
   * The address of `image`'s pixels in this instance, for a method that takes them over (and frees
   * them): its own view is passed as it is, anything else is copied in.
   */
  private pixelsIn(image: ImageData): number {
    const own = this.views.get(image.data)
    if (own !== undefined) {
      this.views.delete(image.data)
      return own
    }
    // A view of a lean memory that has since grown reads as empty: copying it would encode nothing.
    if (image.data.length !== image.width * image.height * 4) throw new LeanFailure('pixels read after their memory grew')
    return this.copyIn(image.data)
  }

  /** A file's copy in the instance: made once per conversion, however often a source is opened on it (PNG's two passes). */
  private fileIn(bytes: Uint8Array): number {
    if (this.held?.bytes === bytes) return this.held.ptr
    if (this.file?.bytes !== bytes) this.file = { bytes, ptr: this.copyIn(bytes) }
    return this.file.ptr
  }

  private copyIn(bytes: Uint8Array | Uint8ClampedArray): number {
    const ptr = this.exports.lean_alloc(bytes.length)
    new Uint8Array(this.memory.buffer, ptr, bytes.length).set(bytes)
    return ptr
  }

  private output(): Uint8Array {
    const ptr = this.exports.lean_output()
    return new Uint8Array(this.memory.buffer, ptr, this.exports.lean_output_size()).slice()
  }
}
