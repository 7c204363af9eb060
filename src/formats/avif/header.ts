/**
 * AVIF header (ISO-BMFF / HEIF): the primary item's properties (ispe size, pixi or av1C bit depth,
 * irot/imir as an EXIF orientation, an auxC alpha plane), and for an image sequence (brand 'avis') its
 * first track's sample count and size. A box cut short loses only what it held, not the whole header.
 */
import { baseHeader, type Chroma, corrupt, type HeaderFormat, type ImageHeader } from '../shared/header'
import { type Box, childBoxes, descend, ftypBrands, hasFtyp, within } from '../shared/isobmff'
import { type Reader, tolerant } from '../shared/reader'

const NAME = 'AVIF'

/** An ftyp box that lists 'avif' or 'avis' among its brands wins over any HEIF brand beside it. */
export const avifHeader: HeaderFormat = {
  format: 'avif',
  name: NAME,
  matches: (r) => hasFtyp(r) && isAvifBrand(ftypBrands(r)),
  read: readAvif,
}

function isAvifBrand(brands: readonly string[]): boolean {
  return brands.includes('avif') || brands.includes('avis')
}

type ItemProperty =
  | { type: 'ispe'; width: number; height: number }
  | { type: 'pixi'; bits: number }
  | { type: 'av1C'; bits: number; chroma: Chroma }
  | { type: 'irot'; angle: number }
  | { type: 'imir'; axis: number }
  | { type: 'alpha' }
  | { type: 'colour'; profile: boolean }
  | { type: 'other' }

const AUX_ALPHA_URNS = ['urn:mpeg:mpegB:cicp:systems:auxiliary:alpha', 'urn:mpeg:hevc:2015:auxid:1']

interface AvifMeta {
  /** Properties associated with the primary item, in association order; undefined when unknown. */
  primary: ItemProperty[] | undefined
  all: ItemProperty[]
}

interface AvifTrack {
  width: number
  height: number
  samples: number | undefined
}

function readAvif(r: Reader): ImageHeader {
  const top = childBoxes(r, 0, r.length)
  const metaBox = top.find((box) => box.type === 'meta')
  const moovBox = top.find((box) => box.type === 'moov')
  const meta = metaBox ? readAvifMeta(r, metaBox) : undefined
  const track = moovBox ? tolerant(() => readAvifTrack(r, moovBox), undefined) : undefined
  const props = meta?.primary ?? meta?.all ?? []
  const size = findSize(meta?.primary ?? [], meta?.all ?? []) ?? (track?.width ? track : undefined)
  if (!size) throw corrupt(NAME, 'no image size (ispe) found')
  return {
    ...baseHeader('avif', size.width, size.height),
    orientation: meta?.primary ? orientationFromTransforms(meta.primary) : 1,
    hasAlpha: meta ? meta.all.some((p) => p.type === 'alpha') : undefined,
    frames: avifFrames(ftypBrands(r).includes('avis'), track),
    bitDepth: findBitDepth(props),
    chroma: findChroma(props, meta?.all ?? []),
    colour: props.some((p) => p.type === 'colour' && p.profile) ? 'profile' : 'srgb',
  }
}

/** A sequence whose sample count we could not read still reports more than one frame. */
function avifFrames(sequence: boolean, track: AvifTrack | undefined): number {
  if (!sequence) return 1
  if (track?.samples === undefined) return 2
  return Math.max(1, track.samples)
}

function findSize(primary: ItemProperty[], all: ItemProperty[]): { width: number; height: number } | undefined {
  const own = primary.find((p) => p.type === 'ispe')
  if (own?.type === 'ispe') return own
  let largest: { width: number; height: number } | undefined
  for (const p of all) {
    if (p.type === 'ispe' && (!largest || p.width * p.height > largest.width * largest.height)) largest = p
  }
  return largest
}

/** The primary item's av1C, or for a grid (whose cells carry it) the first one in the file. */
function findChroma(props: ItemProperty[], all: ItemProperty[]): Chroma | undefined {
  const av1c = props.find((p) => p.type === 'av1C') ?? all.find((p) => p.type === 'av1C')
  return av1c?.type === 'av1C' ? av1c.chroma : undefined
}

function findBitDepth(props: ItemProperty[]): number {
  for (const p of props) if (p.type === 'pixi') return p.bits
  for (const p of props) if (p.type === 'av1C') return p.bits
  return 8
}

function readAvifMeta(r: Reader, meta: Box): AvifMeta {
  const children = childBoxes(r, meta.start + 4, meta.end)
  const pitm = children.find((box) => box.type === 'pitm')
  const iprp = children.find((box) => box.type === 'iprp')
  const iprpChildren = iprp ? childBoxes(r, iprp.start, iprp.end) : []
  const ipco = iprpChildren.find((box) => box.type === 'ipco')
  const ipma = iprpChildren.find((box) => box.type === 'ipma')
  const all = ipco ? childBoxes(r, ipco.start, ipco.end).map((box) => readProperty(r, box)) : []
  const primaryId = pitm ? tolerant(() => readPrimaryItemId(within(r, pitm), pitm), undefined) : undefined
  const indices =
    ipma && primaryId !== undefined ? tolerant(() => readAssociations(within(r, ipma), ipma, primaryId), undefined) : undefined
  // Property indices are 1-based; 0 means "no property".
  const primary = indices?.map((index) => all[index - 1]).filter((p): p is ItemProperty => p !== undefined)
  return { primary, all }
}

function readProperty(r: Reader, box: Box): ItemProperty {
  return tolerant(() => parseProperty(within(r, box), box), { type: 'other' })
}

function parseProperty(r: Reader, box: Box): ItemProperty {
  const body = box.start + 4 // ispe, pixi and auxC are full boxes; irot, imir and av1C are not
  switch (box.type) {
    case 'ispe':
      return { type: 'ispe', width: r.u32(body), height: r.u32(body + 4) }
    case 'pixi':
      return { type: 'pixi', bits: r.u8(body) > 0 ? r.u8(body + 1) : 8 }
    case 'av1C':
      return { type: 'av1C', bits: av1cBitDepth(r.u8(box.start + 2)), chroma: av1cChroma(r.u8(box.start + 2)) }
    case 'irot':
      return { type: 'irot', angle: r.u8(box.start) & 3 }
    case 'imir':
      return { type: 'imir', axis: r.u8(box.start) & 1 }
    case 'auxC':
      return isAlphaAuxType(r, body, box.end) ? { type: 'alpha' } : { type: 'other' }
    case 'colr':
      return { type: 'colour', profile: colrDescribesOtherThanSrgb(r, box) }
    default:
      return { type: 'other' }
  }
}

/**
 * colr: an ICC profile ('prof', 'rICC'), or nclx with primaries other than BT.709's (1) or unspecified (2), or a
 * transfer that is not an SDR camera or sRGB curve (the lean codec decides what it converts; see wasm/lean/colour.c).
 */
function colrDescribesOtherThanSrgb(r: Reader, box: Box): boolean {
  const kind = r.fourcc(box.start)
  if (kind === 'prof' || kind === 'rICC') return true
  if (kind !== 'nclx') return false
  const primaries = r.u16(box.start + 4)
  const transfer = r.u16(box.start + 6)
  return ![1, 2].includes(primaries) || ![0, 1, 2, 6, 13, 14, 15].includes(transfer)
}

/** av1C byte 2: monochrome (bit 4), chroma_subsampling_x (bit 3) and _y (bit 2). */
function av1cChroma(flags: number): Chroma {
  if (flags & 0x10) return 'mono'
  return flags & 0x08 ? (flags & 0x04 ? '420' : '422') : '444'
}

/** av1C byte 2: high_bitdepth (bit 6) and twelve_bit (bit 5). */
function av1cBitDepth(flags: number): number {
  if (!(flags & 0x40)) return 8
  return flags & 0x20 ? 12 : 10
}

function isAlphaAuxType(r: Reader, start: number, end: number): boolean {
  const limit = Math.min(end, start + 64)
  let urn = ''
  for (let pos = start; pos < limit; pos++) {
    const byte = r.u8(pos)
    if (byte === 0) break
    urn += String.fromCharCode(byte)
  }
  return AUX_ALPHA_URNS.includes(urn)
}

function readPrimaryItemId(r: Reader, pitm: Box): number {
  return r.u8(pitm.start) === 0 ? r.u16(pitm.start + 4) : r.u32(pitm.start + 4)
}

/** Property indices associated with `itemId` in an ipma box, in their stored order. */
function readAssociations(r: Reader, ipma: Box, itemId: number): number[] | undefined {
  const version = r.u8(ipma.start)
  const wideIndices = (r.u8(ipma.start + 3) & 1) === 1
  const entries = r.u32(ipma.start + 4)
  let pos = ipma.start + 8
  // `pos < ipma.end` bounds the loop even when the entry count is a lie.
  for (let i = 0; i < entries && pos < ipma.end; i++) {
    const id = version < 1 ? r.u16(pos) : r.u32(pos)
    pos += version < 1 ? 2 : 4
    const count = r.u8(pos)
    pos += 1
    const indices: number[] = []
    for (let j = 0; j < count; j++) {
      indices.push(wideIndices ? r.u16(pos) & 0x7fff : r.u8(pos) & 0x7f)
      pos += wideIndices ? 2 : 1
    }
    if (id === itemId) return indices
  }
  return undefined
}

/** EXIF orientation per irot quarter turns: [no imir, imir axis 0, imir axis 1]. */
const ORIENTATION_BY_TRANSFORM: readonly (readonly [number, number, number])[] = [
  [1, 4, 2],
  [8, 5, 7],
  [3, 2, 4],
  [6, 7, 5],
]

/**
 * HEIF applies irot (anticlockwise quarter turns) and then imir (axis 0 swaps top and bottom,
 * axis 1 swaps left and right); this finds the EXIF orientation describing the same transform.
 */
function orientationFromTransforms(props: ItemProperty[]): number {
  let angle = 0
  let axis: number | undefined
  for (const p of props) {
    if (p.type === 'irot') angle = p.angle
    if (p.type === 'imir') axis = p.axis
  }
  const row = ORIENTATION_BY_TRANSFORM[angle] ?? ORIENTATION_BY_TRANSFORM[0]!
  return row[axis === undefined ? 0 : axis + 1] ?? 1
}

/** First track of an image sequence: sample count (frames) and coded size from its sample entry. */
function readAvifTrack(r: Reader, moov: Box): AvifTrack | undefined {
  const stbl = descend(r, moov, ['trak', 'mdia', 'minf', 'stbl'])
  if (!stbl) return undefined
  const stblChildren = childBoxes(r, stbl.start, stbl.end)
  const stsz = stblChildren.find((box) => box.type === 'stsz')
  const stsd = stblChildren.find((box) => box.type === 'stsd')
  const entry = stsd && childBoxes(r, stsd.start + 8, stsd.end)[0]
  // VisualSampleEntry: 8 bytes of SampleEntry, 16 reserved/pre-defined, then width and height.
  const size = entry ? tolerant(() => ({ width: r.u16(entry.start + 24), height: r.u16(entry.start + 26) }), undefined) : undefined
  return {
    samples: stsz ? tolerant(() => within(r, stsz).u32(stsz.start + 8), undefined) : undefined,
    width: size?.width ?? 0,
    height: size?.height ?? 0,
  }
}
