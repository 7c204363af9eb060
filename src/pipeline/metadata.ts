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
import { concat, hasMetadata, type Metadata, profileSpace } from '../formats/shared/metadata'
import { readWebpMetadata, stripWebpMetadata, writeWebpMetadata } from '../formats/webp/metadata'
import type { Encoded } from './respond'
import type { ImageHeader } from './sniff'

export type { Metadata } from '../formats/shared/metadata'
export type MetadataMode = 'none' | 'copyright' | 'keep'

async function readMetadata(bytes: Uint8Array, header: ImageHeader): Promise<Metadata> {
  if (header.format === 'jpeg') return readJpegMetadata(bytes)
  if (header.format === 'png') return readPngMetadata(bytes)
  if (header.format === 'webp' && header.frames === 1) return readWebpMetadata(bytes)
  return {}
}

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
  const found = await readMetadata(bytes, header)
  if (mode === 'copyright') return { exif: found.exif && exifForOutput(found.exif, 'copyright') }
  return {
    exif: found.exif && exifForOutput(found.exif, 'keep'),
    xmp: found.xmp && xmpUpright(found.xmp),
    icc: found.icc && profileSpace(found.icc) === 'RGB ' ? found.icc : undefined,
  }
}

/** The encoded answer with `metadata` written in (AVIF's is written by its encoder; see setAvifMetadata). */
export async function withMetadata(output: Encoded, format: OutputFormat, metadata: Metadata): Promise<Encoded> {
  if (!hasMetadata(metadata) || format === 'avif') return output
  const bytes = Array.isArray(output) ? concat(output) : output
  if (format === 'jpeg') return writeJpegMetadata(bytes, metadata)
  if (format === 'png') return writePngMetadata(bytes, metadata)
  return writeWebpMetadata(bytes, metadata)
}

/**
 * The input as the never-bigger answer: as sent for `keep`; otherwise without the metadata the mode drops (views of
 * `bytes`, so a large file is not held twice), and with what it keeps (`copyright`'s EXIF). AVIF and GIF inputs are
 * answered as sent.
 */
export async function inputAsAnswer(bytes: Uint8Array, header: ImageHeader, mode: MetadataMode, metadata: Metadata): Promise<Encoded> {
  if (mode === 'keep') return bytes
  const stripped =
    header.format === 'jpeg' ? stripJpegMetadata(bytes)
    : header.format === 'png' ? stripPngMetadata(bytes)
    : header.format === 'webp' && header.frames === 1 ? stripWebpMetadata(bytes)
    : [bytes]
  return hasMetadata(metadata) ? withMetadata(stripped, header.format as OutputFormat, metadata) : stripped.length === 1 ? stripped[0]! : stripped
}
