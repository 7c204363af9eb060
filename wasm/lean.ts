/**
 * The lean codec (wasm/lean/lean.c, built by wasm/lean/build.sh): libjpeg-turbo and libwebp driven row
 * by row, so a large JPEG is decoded at a DCT-scaled size, into the WebP encoder's YUV planes, or
 * straight into a JPEG compressor, instead of through whole RGBA copies.
 *
 * One `LeanCodec` is one fresh instance for one request: its memory is created here with a maximum
 * (the request's MemoryCap), so a file that needs more fails cleanly inside the codec, and it is
 * dropped afterwards, so its linear memory never outlives the request. Errors are thrown from the
 * `fail` import and leave the instance mid-call; it is not used again.
 */
import type { MemoryCap } from './cap'

interface LeanExports {
  _initialize(): void
  lean_alloc(size: number): number
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
  wd_open(ptr: number, len: number): void
  wd_width(): number
  wd_height(): number
  wd_decode(width: number, height: number): number
  wd_to_yuv(): void
  wd_to_jpeg(quality: number, progressive: number, optimize: number): number
  resize_rgba(ptr: number, width: number, height: number, outWidth: number, outHeight: number, premultiply: number): number
}

/** A failure inside the lean codec: libjpeg's or libwebp's own message. */
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

export class LeanCodec {
  private readonly memory: WebAssembly.Memory
  private readonly exports: LeanExports

  constructor(module: WebAssembly.Module, readonly cap: MemoryCap) {
    this.memory = new WebAssembly.Memory({ initial: 16, maximum: Math.min(MAX_PAGES, Math.max(16, Math.floor(cap.maxBytes / PAGE))) })
    const fail = (ptr: number, len: number) => {
      const message = new TextDecoder().decode(new Uint8Array(this.memory.buffer, ptr, len))
      if (/memory/i.test(message)) cap.reached = true
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
    return new ImageData(new Uint8ClampedArray(this.memory.buffer, ptr, width * height * 4), width, height)
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
    const ptr = this.exports.wd_decode(width, height)
    return new ImageData(new Uint8ClampedArray(this.memory.buffer, ptr, width * height * 4), width, height)
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
    const ptr = this.copyIn(image.data)
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
    const ptr = this.copyIn(image.data)
    this.exports.jpeg_encode(ptr, image.width, image.height, 4, quality, progressive ? 1 : 0, optimize ? 1 : 0)
    return this.output()
  }

  /**
   * Resample RGBA pixels to `width` x `height` with Lanczos3 (resample.c), row by row: beyond the
   * copy in and the output, the codec holds a few rows. `premultiply` weights colour by alpha, for
   * images with transparency. Like decodeRgba, the result is a view of the instance's memory.
   */
  resizeRgba(image: ImageData, width: number, height: number, premultiply: boolean): ImageData {
    const ptr = this.copyIn(image.data)
    const size = this.exports.resize_rgba(ptr, image.width, image.height, width, height, premultiply ? 1 : 0)
    return new ImageData(new Uint8ClampedArray(this.memory.buffer, this.exports.lean_output(), size), width, height)
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
