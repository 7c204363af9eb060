/**
 * The byte reader every header parser uses. Every read is bounds-checked: one past the end throws
 * `OutOfBounds`, which the dispatcher (src/pipeline/sniff.ts) turns into `corrupt_image`.
 */

/** Thrown by the reader on any out-of-bounds access; converted to `corrupt_image` at the top. */
export class OutOfBounds extends Error {}

/** Bounds-checked big/little-endian reads over a byte array. */
export class Reader {
  readonly bytes: Uint8Array
  readonly length: number
  private readonly view: DataView

  constructor(bytes: Uint8Array) {
    this.bytes = bytes
    this.length = bytes.length
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  }

  has(offset: number, count: number): boolean {
    return offset >= 0 && count >= 0 && offset + count <= this.length
  }

  private need(offset: number, count: number): void {
    if (!this.has(offset, count)) throw new OutOfBounds()
  }

  u8(offset: number): number {
    this.need(offset, 1)
    return this.view.getUint8(offset)
  }

  u16(offset: number, littleEndian = false): number {
    this.need(offset, 2)
    return this.view.getUint16(offset, littleEndian)
  }

  u24le(offset: number): number {
    this.need(offset, 3)
    return this.view.getUint16(offset, true) | (this.view.getUint8(offset + 2) << 16)
  }

  u32(offset: number, littleEndian = false): number {
    this.need(offset, 4)
    return this.view.getUint32(offset, littleEndian)
  }

  /** Four bytes as a Latin-1 string (box types, chunk types, brands). */
  fourcc(offset: number): string {
    this.need(offset, 4)
    return String.fromCharCode(this.u8(offset), this.u8(offset + 1), this.u8(offset + 2), this.u8(offset + 3))
  }

  /** True when the bytes at `offset` are exactly `expected` (no throw on short input). */
  matches(offset: number, expected: ArrayLike<number>): boolean {
    if (!this.has(offset, expected.length)) return false
    for (let i = 0; i < expected.length; i++) {
      if (this.view.getUint8(offset + i) !== expected[i]) return false
    }
    return true
  }

  matchesAscii(offset: number, text: string): boolean {
    if (!this.has(offset, text.length)) return false
    for (let i = 0; i < text.length; i++) {
      if (this.view.getUint8(offset + i) !== text.charCodeAt(i)) return false
    }
    return true
  }
}

/** Run a best-effort read; a box cut short gives the fallback instead of failing the whole header. */
export function tolerant<T>(read: () => T, fallback: T): T {
  try {
    return read()
  } catch (error) {
    if (error instanceof OutOfBounds) return fallback
    throw error
  }
}
