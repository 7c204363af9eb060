/**
 * ISO-BMFF (the box container of AVIF, HEIF and MP4): the ftyp brands that tell them apart, and a
 * bounded walk over boxes. Every walk clamps to its parent and to the buffer, so lying sizes end it.
 */
import { Reader } from './reader'

/** True when the file starts with an ftyp box: AVIF, HEIC, or a video container. */
export function hasFtyp(r: Reader): boolean {
  return r.matchesAscii(4, 'ftyp')
}

/** The ftyp box's major brand, then its compatible brands; none when the file is under 12 bytes. */
export function ftypBrands(r: Reader): string[] {
  if (!r.has(0, 12)) return []
  const declared = r.u32(0)
  // A sane ftyp is small; clamp so a lying size cannot make us read far.
  const end = Math.min(declared >= 16 ? declared : 16, r.length, 4096)
  const brands = [r.fourcc(8)]
  for (let offset = 16; offset + 4 <= end; offset += 4) brands.push(r.fourcc(offset))
  return brands
}

export interface Box {
  type: string
  /** Offset of the payload (after size, type and any 64-bit size). */
  start: number
  end: number
}

/** Bounds memory and time on files made of millions of empty boxes; real containers hold far fewer. */
const MAX_CHILD_BOXES = 4096

/**
 * Child boxes of [start, end). A box that runs past `end` is clamped and ends the walk, so a
 * truncated file still yields what is readable; malformed sizes end the walk too.
 */
export function childBoxes(r: Reader, start: number, end: number): Box[] {
  const boxes: Box[] = []
  let pos = start
  while (pos + 8 <= end && boxes.length < MAX_CHILD_BOXES) {
    let size = r.u32(pos)
    const type = r.fourcc(pos + 4)
    let header = 8
    if (size === 1) {
      if (pos + 16 > end) break
      size = r.u32(pos + 8) * 2 ** 32 + r.u32(pos + 12)
      header = 16
    } else if (size === 0) {
      size = end - pos
    }
    if (size < header) break
    const boxEnd = pos + size
    boxes.push({ type, start: pos + header, end: Math.min(boxEnd, end) })
    if (boxEnd > end) break
    pos = boxEnd
  }
  return boxes
}

/** A reader that cannot see past the end of `box`, so a short box never reads its neighbour. */
export function within(r: Reader, box: Box): Reader {
  return new Reader(r.bytes.subarray(0, box.end))
}

/** Follow a fixed path of first-matching child boxes (no recursion). */
export function descend(r: Reader, from: Box, path: readonly string[]): Box | undefined {
  let box: Box | undefined = from
  for (const type of path) {
    if (!box) return undefined
    const parent: Box = box
    box = childBoxes(r, parent.start, parent.end).find((child) => child.type === type)
  }
  return box
}
