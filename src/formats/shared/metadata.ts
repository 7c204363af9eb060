/**
 * What a file says besides its pixels, as the `metadata` option moves it from input to output: EXIF (a TIFF block,
 * without JPEG's "Exif\0\0"), XMP (its XML packet) and the ICC profile. Each format's metadata.ts reads, strips and
 * writes them; this file has what they share.
 */
import { joinParts } from '../../lib/bytes'

export interface Metadata {
  exif?: Uint8Array | undefined
  xmp?: Uint8Array | undefined
  icc?: Uint8Array | undefined
}

export const hasMetadata = (m: Metadata): boolean => Boolean(m.exif || m.xmp || m.icc)

export const ascii = (text: string): Uint8Array => Uint8Array.from(text, (c) => c.charCodeAt(0))

/** An ICC profile larger than this is not kept (real ones are 0.5-600 KB; a zlib bomb would be more). */
export const MAX_PROFILE_BYTES = 4 * 1024 * 1024

/** zlib-wrapped deflate (PNG's iCCP) through the runtime's streams; undefined when broken or over `limit` bytes. */
export async function inflate(bytes: Uint8Array, limit = MAX_PROFILE_BYTES): Promise<Uint8Array | undefined> {
  try {
    const reader = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate')).getReader()
    const parts: Uint8Array[] = []
    let size = 0
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return joinParts(parts)
      size += value.length
      if (size > limit) {
        await reader.cancel()
        return undefined
      }
      parts.push(value)
    }
  } catch {
    return undefined
  }
}

export async function deflate(bytes: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(new CompressionStream('deflate'))).arrayBuffer())
}

/** The colour space an ICC profile describes (header bytes 16-19: 'RGB ', 'GRAY', 'CMYK'...). */
export const profileSpace = (icc: Uint8Array): string => (icc.length >= 20 ? String.fromCharCode(...icc.subarray(16, 20)) : '')
