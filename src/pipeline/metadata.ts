/**
 * The `metadata` option: what an answer carries besides its pixels. `none` (default): nothing. `copyright`: EXIF
 * with IFD0's Artist and Copyright only. `keep`: EXIF (orientation set to 1: the pixels are upright), XMP (its
 * tiff:Orientation too) and an RGB ICC profile, in which case the pixels stay in that profile's colours instead of
 * being converted to sRGB. Read from JPEG, PNG and still WebP inputs' headers; written into JPEG, PNG and WebP
 * answers here, into AVIF ones by libavif (wasm/lean/sink_avif.c).
 */
import type { OutputFormat } from '../codecs/registry'
import { readJpegMetadata, stripJpegMetadata, writeJpegMetadata } from '../formats/jpeg/metadata'
import { readPngMetadata, stripPngMetadata, writePngMetadata } from '../formats/png/metadata'
import { exifForOutput } from '../formats/shared/exif'
import { hasMetadata, type Metadata, profileSpace } from '../formats/shared/metadata'
import { readWebpMetadata, stripWebpMetadata, writeWebpMetadata } from '../formats/webp/metadata'
import { joinParts } from '../lib/bytes'
import type { Encoded } from './respond'
import type { ImageHeader } from './sniff'

export type { Metadata } from '../formats/shared/metadata'
export type MetadataMode = 'none' | 'copyright' | 'keep'

/** Where each format keeps its metadata: read from an input, stripped from one, written into an answer. */
interface MetadataFormat {
  read(bytes: Uint8Array): Metadata | Promise<Metadata>
  strip(bytes: Uint8Array): Uint8Array[]
  write(bytes: Uint8Array, metadata: Metadata): Uint8Array | Promise<Uint8Array>
}

const FORMATS: Partial<Record<OutputFormat, MetadataFormat>> = {
  jpeg: { read: readJpegMetadata, strip: stripJpegMetadata, write: writeJpegMetadata },
  png: { read: readPngMetadata, strip: stripPngMetadata, write: writePngMetadata },
  webp: { read: readWebpMetadata, strip: stripWebpMetadata, write: writeWebpMetadata },
}

/** The input's: none for AVIF and GIF (not read) or an animated WebP (its chunks are frames'). */
const inputFormat = ({ format, frames }: ImageHeader): MetadataFormat | undefined =>
  format === 'webp' && frames > 1 ? undefined : FORMATS[format as OutputFormat]

/** XMP's own orientation, set to 1 as EXIF's is (attribute or element form). */
function xmpUpright(xmp: Uint8Array): Uint8Array {
  const text = new TextDecoder().decode(xmp)
  const upright = text.replace(/(tiff:Orientation=["'])\d(["'])/g, '$11$2').replace(/(<tiff:Orientation>)\d(<\/tiff:Orientation>)/g, '$11$2')
  return upright === text ? xmp : new TextEncoder().encode(upright)
}

/**
 * Step 2b: what the answer will carry, from the input's header data (nothing for `none`). A profile is kept only when
 * it is an RGB one (every output is RGB; a CMYK or grey profile's colours are converted instead).
 *
 * @example
 * const metadata = await metadataFor(bytes, header, options.metadata) // { exif } for 'copyright'
 */
export async function metadataFor(bytes: Uint8Array, header: ImageHeader, mode: MetadataMode): Promise<Metadata> {
  if (mode === 'none') return {}
  const found = (await inputFormat(header)?.read(bytes)) ?? {}
  if (mode === 'copyright') return { exif: found.exif && exifForOutput(found.exif, 'copyright') }
  return {
    exif: found.exif && exifForOutput(found.exif, 'keep'),
    xmp: found.xmp && xmpUpright(found.xmp),
    icc: found.icc && profileSpace(found.icc) === 'RGB ' ? found.icc : undefined,
  }
}

/** The encoded answer with `metadata` written in (AVIF's is written by its encoder; see setAvifMetadata). */
export async function withMetadata(output: Encoded, format: OutputFormat, metadata: Metadata): Promise<Encoded> {
  const writer = FORMATS[format]
  if (!hasMetadata(metadata) || !writer) return output
  return writer.write(Array.isArray(output) ? joinParts(output) : output, metadata)
}

/**
 * The input as the never-bigger answer: as sent for `keep`; otherwise without the metadata the mode drops (views of
 * `bytes`, so a large file is not held twice), and with what it keeps (`copyright`'s EXIF). AVIF and GIF inputs are
 * answered as sent.
 */
export async function inputAsAnswer(bytes: Uint8Array, header: ImageHeader, mode: MetadataMode, metadata: Metadata): Promise<Encoded> {
  if (mode === 'keep') return bytes
  const stripped = inputFormat(header)?.strip(bytes) ?? [bytes]
  return hasMetadata(metadata) ? withMetadata(stripped, header.format as OutputFormat, metadata) : stripped.length === 1 ? stripped[0]! : stripped
}
