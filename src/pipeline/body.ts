import { LeanFailure, type StreamedFile } from '../../wasm'
import { ApiError } from '../errors'
import { adoptBodyBuffer, bodyBuffer } from '../lib/body-buffer'
import { withinMs } from '../lib/deadline'

/** A chunk reader that fills the caller's room (see readerInto in parse.ts). */
export interface RoomReader {
  read(room: Uint8Array): Promise<ReadableStreamReadResult<Uint8Array>>
  cancel(): Promise<void>
}

/** How a body is read: its caps, its time, and whose it is (the request's, or a /img source's) for its errors. */
export interface BodyLimits {
  maxHeldBytes: number
  maxStreamedBytes: number
  timeoutMs: number
  /** The body's name in a 413 (default: the request body). */
  what?: string
  /**
   * The error for a body that stopped arriving (`body_timeout`) or could not be read to its end (`invalid_request`): an
   * origin's or a bucket's is theirs, not the client's.
   */
  failure?: (error: ApiError) => ApiError
}

/** What a streamed file keeps in the body buffer at least: libpng asks for 8 KiB at a time, the network brings 4-64 KiB. */
const WINDOW_BYTES = 256 * 1024

/**
 * A body being read into the isolate's body buffer (src/lib/body-buffer.ts): its start (`head`), then either all of it
 * held (`all`, at most `maxHeldBytes`: a 413 past it) or the rest read as a decoder asks for it (`stream`, at most
 * `maxStreamedBytes`), through a window of the buffer, so a streamed file of any size holds WINDOW_BYTES.
 *
 * @example
 * const body = new PendingBody(reader, { declared, maxHeldBytes, maxStreamedBytes, timeoutMs })
 * const head = await body.head(64 * 1024)
 * const bytes = await body.all()
 */
export class PendingBody {
  /** The buffer's bytes [0, filled) are the file's from offset `start`. */
  private buffer: Uint8Array
  private filled = 0
  private start = 0
  private done = false
  private readonly deadline: number
  private streaming = false

  constructor(
    private readonly reader: RoomReader,
    private readonly limits: BodyLimits & { declared: number },
  ) {
    // A window to begin with (a file that may stream is never given room for all of it); `all` grows it to the whole.
    this.buffer = bodyBuffer(Math.min(WINDOW_BYTES, this.room()))
    this.deadline = Date.now() + limits.timeoutMs
  }

  /** Bytes of the file read so far, or all of it once it has ended. */
  get bytesRead(): number {
    return this.start + this.filled
  }

  /** The first bytes of the file: at least `size` of them (fewer only if the file is shorter). */
  async head(size: number): Promise<Uint8Array> {
    while (this.filled < size && !this.done) await this.more(Math.max(size, WINDOW_BYTES), this.limits.maxHeldBytes)
    return this.buffer.subarray(0, this.filled)
  }

  /** The whole file, held in the body buffer: a 413 past `maxHeldBytes`, declared or counted. */
  async all(): Promise<Uint8Array> {
    const { maxHeldBytes, declared } = this.limits
    if (declared > maxHeldBytes || this.filled > maxHeldBytes) throw await this.refuse(maxHeldBytes)
    while (!this.done) await this.more(Math.max(this.room(), Math.min(maxHeldBytes + 1, this.buffer.length * 2)), maxHeldBytes)
    return this.buffer.subarray(0, this.filled)
  }

  /** Room for the whole file held: one byte more than declared (the read that says "done" needs room to be asked for). */
  private room(): number {
    const { declared, maxHeldBytes } = this.limits
    return Math.min(maxHeldBytes, Number.isFinite(declared) && declared > 0 ? declared : 64 * 1024) + 1
  }

  /** The file read as it is asked for, from offset 0 (what `head` read is read again from the buffer). */
  stream(): StreamedFile {
    this.streaming = true
    return { read: (length, at, into) => this.read(length, at, into) }
  }

  /** Read to the end what the decoder left (chunks after the image data), counting it: the file's size. */
  async finish(): Promise<number> {
    while (!this.done) {
      this.start += this.filled
      this.filled = 0
      await this.more(WINDOW_BYTES, this.limits.maxStreamedBytes)
    }
    return this.bytesRead
  }

  private read(length: number, at: number, into: (bytes: Uint8Array) => void): void | Promise<void> {
    const from = at - this.start
    if (from >= 0 && from + length <= this.filled) return into(this.buffer.subarray(from, from + length))
    return this.arrive(length, at).then(() => into(this.buffer.subarray(at - this.start, at - this.start + length)))
  }

  /** Keep from `at` on, then read until `length` bytes from `at` are in the buffer. */
  private async arrive(length: number, at: number): Promise<void> {
    const from = at - this.start
    if (from < 0 || from > this.filled) throw new LeanFailure('the file was read out of order')
    this.buffer.copyWithin(0, from, this.filled)
    this.filled -= from
    this.start = at
    while (this.filled < length) {
      if (this.done) throw new LeanFailure('the file ends early')
      await this.more(Math.max(WINDOW_BYTES, length + 1), this.limits.maxStreamedBytes)
    }
  }

  /** One chunk more into the buffer, grown to `size` if it is full; a 413 once the file is over `max`. */
  private async more(size: number, max: number): Promise<void> {
    if (this.filled === this.buffer.length) this.buffer = bodyBuffer(Math.max(size, this.filled + 1), this.filled)
    let chunk: ReadableStreamReadResult<Uint8Array>
    try {
      const tooSlow = () => new ApiError('body_timeout', `The request body did not finish arriving within ${this.limits.timeoutMs} ms (BODY_TIMEOUT_MS).`, { limit: this.limits.timeoutMs })
      chunk = await withinMs(this.reader.read(this.buffer.subarray(this.filled)), this.deadline - Date.now(), tooSlow)
    } catch (error) {
      const failure = this.limits.failure ?? ((e: ApiError) => e)
      if (error instanceof ApiError) {
        await this.reader.cancel().catch(() => {})
        throw failure(error)
      }
      // The client went away mid-upload (workerd: "Network connection lost"): its fault, not ours.
      throw failure(new ApiError('invalid_request', 'The request body could not be read to its end: the connection was lost during the upload.'))
    }
    const { done, value } = chunk
    if (value) this.buffer = adoptBodyBuffer(value.buffer as ArrayBuffer)
    if (done) {
      this.done = true
      return
    }
    this.filled += value.length
    if (this.bytesRead > max) throw await this.refuse(max)
  }

  private async refuse(max: number): Promise<ApiError> {
    await this.reader.cancel().catch(() => {})
    this.done = true
    return tooLarge(max, this.limits.what)
  }
}

/** 413 for `what` (the request body, or a /img source) over its byte limit. */
export const tooLarge = (maxBytes: number, what = 'The request body') =>
  new ApiError('payload_too_large', `${what} is larger than the limit of ${maxBytes} bytes.`, {
    limit: maxBytes,
  })
