/**
 * Our AVIF encoder (wasm/avif/avif_sink.c, built by wasm/avif/build.sh): libavif and libaom, fed RGBA
 * a band of rows at a time. An image of more pixels than one 768x768 cell becomes an AVIF grid whose cells
 * libaom encodes one after another, so its memory is one cell's: a 12 MP photo's encoder holds its
 * YUV planes (1.5 bytes a pixel) and one cell's state, not libaom's state for the whole image.
 *
 * One instance per image, over the isolate's AVIF memory inside a conversion (wasm/session.ts) or a memory
 * of its own, whose maximum is `cap`; errors (libaom's, libavif's, running out of memory) are thrown from
 * the `fail` import and leave the instance mid-call: it is dropped, never used again, and the next
 * instance over the same memory starts clean.
 */
import type { MemoryCap } from '../cap'

interface AvifExports {
  _initialize(): void
  ae_alloc(size: number): number
  ae_free(ptr: number): void
  ae_cell(size: number): void
  ae_whole(maxPixels: number): void
  ae_start(width: number, height: number, quality: number, speed: number, flags: number): void
  ae_rows(ptr: number, count: number): void
  ae_finish(): number
  ae_output(): number
}

/** A failure inside the AVIF encoder: libaom's or libavif's own message, or the memory cap. */
export class AvifFailure extends Error {}

export interface AvifSettings {
  /** libavif's quality, 0-100 (ignored when lossless). */
  quality: number
  /** libaom's speed, 0-10. */
  speed: number
  lossless: boolean
  /** Encode the alpha channel (an auxiliary AV1 image); without it alpha is ignored. */
  alpha: boolean
}

const PAGE = 65536
const ALPHA = 1
const LOSSLESS = 2
const SHARP_YUV = 4
/**
 * Lossy images of up to this many pixels are encoded whole: a 1600x1200 photo as one frame was 3-11 % smaller
 * than as a grid of 768x768 cells (wasm/avif/README.md), and an odd size stays 4:2:0. libaom's state follows
 * the frame, about 20 MiB per MP, within MEMORY_MODEL.encode.avif at this size (docs/memory.md).
 */
export const AVIF_WHOLE_PIXELS = 2_100_000

/** Rows converted per call: an even number, so 4:2:0 chroma rows are never split between bands. */
export const AVIF_BAND_ROWS = 64
const EBADF = 8

/** The most 64 KiB pages an encoder memory capped at `cap` may have. */
export const avifPages = (cap: MemoryCap): number => Math.min(65536, Math.max(32, Math.floor(cap.maxBytes / PAGE)))

export class AvifEncoder {
  private readonly memory: WebAssembly.Memory
  private readonly exports: AvifExports

  /**
   * A fresh instance over `memory` (one the isolate keeps, whose maximum is `cap`; see wasm/session.ts) or
   * over a new memory capped at `cap`.
   */
  constructor(module: WebAssembly.Module, private readonly cap: MemoryCap, memory?: WebAssembly.Memory) {
    this.memory = memory ?? new WebAssembly.Memory({ initial: 32, maximum: avifPages(cap) })
    const fail = (ptr: number, len: number) => {
      const message = new TextDecoder().decode(new Uint8Array(this.memory.buffer, ptr, len))
      if (/memory/i.test(message)) this.cap.reached = true
      throw new AvifFailure(message)
    }
    // wasi-libc links these for stdio, clocks and preopened directories; the encoder uses none.
    const wasi = {
      fd_prestat_get: () => EBADF,
      fd_prestat_dir_name: () => EBADF,
      fd_fdstat_get: () => EBADF,
      fd_fdstat_set_flags: () => EBADF,
      fd_read: () => EBADF,
      fd_write: () => EBADF,
      fd_seek: () => EBADF,
      fd_close: () => EBADF,
      path_open: () => EBADF,
      clock_time_get: (_id: number, _precision: bigint, out: number) => {
        new BigUint64Array(this.memory.buffer, out, 1)[0] = 0n
        return 0
      },
      proc_exit: (code: number) => {
        throw new AvifFailure(`the encoder exited with ${code}`)
      },
    }
    const instance = new WebAssembly.Instance(module, { env: { memory: this.memory, fail }, wasi_snapshot_preview1: wasi })
    this.exports = instance.exports as unknown as AvifExports
    this.exports._initialize()
  }

  /**
   * Encode `width` x `height` RGBA pixels (4 bytes each, rows packed) into an AVIF file. Lossy output is
   * 4:2:0 (4:4:4 for an odd-sized grid, above AVIF_WHOLE_PIXELS), converted by libsharpyuv; lossless is 4:4:4 with the identity
   * matrix. The pixels are copied in a band at a time, never whole.
   */
  encode(rgba: Uint8Array | Uint8ClampedArray, width: number, height: number, settings: AvifSettings): Uint8Array {
    let y = 0
    return this.encodeRows(width, height, settings, (count) => {
      const rows = rgba.subarray(y * width * 4, (y + count) * width * 4)
      y += count
      return rows
    })
  }

  /**
   * As encode, from `pull`, which gives the next `count` rows of RGBA (at most AVIF_BAND_ROWS) each time it is
   * called, top to bottom: the row pipeline's sink (wasm/lean.ts pullRows), so that no whole RGBA image exists.
   */
  encodeRows(width: number, height: number, settings: AvifSettings, pull: (count: number) => Uint8Array | Uint8ClampedArray): Uint8Array {
    const e = this.exports
    const flags = (settings.alpha ? ALPHA : 0) | (settings.lossless ? LOSSLESS : SHARP_YUV)
    // Lossy images up to AVIF_WHOLE_PIXELS are one AV1 frame, not a grid (no seams to pay for, 4:2:0 at any size).
    if (!settings.lossless) e.ae_whole(AVIF_WHOLE_PIXELS)
    e.ae_start(width, height, settings.lossless ? 100 : settings.quality, settings.speed, flags)
    const rowBytes = width * 4
    const rows = Math.min(AVIF_BAND_ROWS, height)
    const band = e.ae_alloc(rowBytes * rows)
    for (let y = 0; y < height; y += rows) {
      const count = Math.min(rows, height - y)
      // A fresh view each time: the memory may have grown (and its old buffer been detached).
      new Uint8Array(this.memory.buffer, band, rowBytes * count).set(pull(count))
      e.ae_rows(band, count)
    }
    e.ae_free(band)
    const size = e.ae_finish()
    // A copy: the memory may be the isolate's, which the next AVIF conversion writes over.
    return new Uint8Array(this.memory.buffer, e.ae_output(), size).slice()
  }
}
