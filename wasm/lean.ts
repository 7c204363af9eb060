/**
 * The lean codec (wasm/lean/lean.c and png.c, built by wasm/lean/build.sh): libjpeg-turbo, libwebp and
 * libpng driven row by row, so a large JPEG is decoded at a DCT-scaled size, into the WebP encoder's YUV
 * planes, or straight into a JPEG compressor, and a PNG into one RGBA buffer, instead of through whole
 * RGBA copies.
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
  lean_alloc(size: number): number
  lean_free(ptr: number): void
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
  jpeg_encode(ptr: number, width: number, height: number, channels: number, quality: number, progressive: number, optimize: number): number
  jd_to_jpeg(orientation: number, quality: number, progressive: number, optimize: number): number
  pd_open(ptr: number, len: number, maxWidth: number, maxHeight: number): number
  pd_width(): number
  pd_height(): number
  pd_decode(): number
  wd_open(ptr: number, len: number): void
  wd_width(): number
  wd_height(): number
  wd_decode(width: number, height: number): number
  wd_to_yuv(): void
  wd_to_jpeg(quality: number, progressive: number, optimize: number): number
  resize_rgba(ptr: number, width: number, height: number, outWidth: number, outHeight: number, premultiply: number): number
}

/** A failure inside the lean codec: libjpeg's, libwebp's or libpng's own message. */
export class LeanFailure extends Error {}

/** libjpeg-turbo's JPEG settings, as the lean codec takes them. */
export interface LeanJpegSettings {
  quality: number
  progressive: boolean
  optimize: boolean
}

const PAGE = 65536
/** wasm32 addresses at most 4 GiB. */
const MAX_PAGES = 65536
const EBADF = 8

/** The most 64 KiB pages a lean memory capped at `cap` may have. */
export const pagesFor = (cap: MemoryCap): number => Math.min(MAX_PAGES, Math.max(16, Math.floor(cap.maxBytes / PAGE)))

export class LeanCodec {
  private readonly memory: WebAssembly.Memory
  private readonly exports: LeanExports
  /** The caps to mark as reached when the codec runs out of memory: its own and the current caller's. */
  private readonly caps: Set<MemoryCap>
  /** Pixel views this instance returned, by their address in its memory. */
  private readonly views = new WeakMap<Uint8ClampedArray, number>()

  constructor(module: WebAssembly.Module, cap: MemoryCap, memory = new WebAssembly.Memory({ initial: 16, maximum: pagesFor(cap) })) {
    this.memory = memory
    this.caps = new Set([cap])
    const fail = (ptr: number, len: number) => {
      const message = new TextDecoder().decode(new Uint8Array(this.memory.buffer, ptr, len))
      if (/memory/i.test(message)) for (const c of this.caps) c.reached = true
      throw new LeanFailure(message)
    }
    // wasi-libc links these for stdio and getenv; the codec writes nothing and reads no environment.
    const wasi = {
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
    const instance = new WebAssembly.Instance(module, { env: { memory: this.memory, fail }, wasi_snapshot_preview1: wasi })
    this.exports = instance.exports as unknown as LeanExports
    this.exports._initialize()
  }

  /** Also mark `cap` as reached if the codec runs out of memory (a later step's caller). */
  markOnFailure(cap: MemoryCap): void {
    this.caps.add(cap)
  }

  /** Copy a JPEG into the instance and read its header. */
  openJpeg(bytes: Uint8Array): { components: number } {
    const ptr = this.copyIn(bytes)
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
    const ptr = this.copyIn(bytes)
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

  /** Convert the opened (opaque) WebP to JPEG with libjpeg-turbo: its RGB is held once, in the instance. */
  transcodeWebpToJpeg({ quality, progressive, optimize }: LeanJpegSettings): Uint8Array {
    this.exports.wd_to_jpeg(quality, progressive ? 1 : 0, optimize ? 1 : 0)
    return this.output()
  }

  /** Decode step of JPEG -> WebP: the started (RGB) image into the encoder's YUV 4:2:0 planes, upright. */
  decodeToYuv(orientation: number): void {
    this.exports.jd_to_yuv(orientation)
  }

  /** Encode step of JPEG or WebP -> WebP: lossy WebP from the planes decodeToYuv or decodeWebpToYuv filled. */
  encodeWebp(quality: number, method: number, lowMemory: boolean): Uint8Array {
    this.exports.webp_encode(quality, method, lowMemory ? 1 : 0, 0)
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

  /** Re-encode the started image as JPEG, upright; rows stream through when nothing turns. */
  transcodeJpeg(orientation: number, { quality, progressive, optimize }: LeanJpegSettings): Uint8Array {
    this.exports.jd_to_jpeg(orientation, quality, progressive ? 1 : 0, optimize ? 1 : 0)
    return this.output()
  }

  /** Encode RGBA pixels (alpha ignored) as JPEG with libjpeg-turbo. */
  encodeJpeg(image: ImageData, { quality, progressive, optimize }: LeanJpegSettings): Uint8Array {
    const ptr = this.pixelsIn(image)
    this.exports.jpeg_encode(ptr, image.width, image.height, 4, quality, progressive ? 1 : 0, optimize ? 1 : 0)
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
