/**
 * GIF header: the logical screen, whether the first frame is transparent or interlaced, and how many
 * frames follow, from a walk over the blocks that skips their data sub-blocks without decompressing them.
 */
import { baseHeader, corrupt, type HeaderFormat, type ImageHeader } from '../shared/header'
import type { Reader } from '../shared/reader'

const NAME = 'GIF'

/** The file starts with "GIF87a" or "GIF89a". */
export const gifHeader: HeaderFormat = {
  format: 'gif',
  name: NAME,
  matches: (r) => r.matchesAscii(0, 'GIF87a') || r.matchesAscii(0, 'GIF89a'),
  read: readGif,
}

const GIF_EXTENSION = 0x21
const GIF_IMAGE = 0x2c
const GIF_TRAILER = 0x3b
const GIF_GRAPHIC_CONTROL = 0xf9
const GIF_APPLICATION = 0xff

interface GifBlocks {
  frames: number
  firstLeft: number
  firstTop: number
  firstWidth: number
  firstHeight: number
  transparent: boolean
  /** The first frame stores its rows in four passes (the decoder then holds its indices, 1 B per pixel). */
  interlaced: boolean
  /** The NETSCAPE2.0 / ANIMEXTS1.0 loop count, if the file has one. */
  loop: number | undefined
  /** Some frame's rectangle reaches past the logical screen. */
  frameOutside: boolean
}

function readGif(r: Reader): ImageHeader {
  const screenWidth = r.u16(6, true)
  const screenHeight = r.u16(8, true)
  const packed = r.u8(10)
  const globalTable = packed & 0x80 ? 3 * (1 << ((packed & 7) + 1)) : 0
  const blocks = walkGifBlocks(r, 13 + globalTable, screenWidth, screenHeight)
  if (blocks.frames === 0) throw corrupt(NAME, 'no image descriptor before the data ends')
  // The decoder draws on the logical screen; only a 0x0 screen falls back to the first frame.
  const useFrame = screenWidth === 0 || screenHeight === 0
  // The decoder also allocates and walks the first frame's own rectangle, which the limits below do
  // not see: a 1x1 screen with a 65535x65535 frame would take 4 GiB and minutes.
  if (!useFrame && blocks.firstWidth * blocks.firstHeight > screenWidth * screenHeight) {
    throw corrupt(NAME, `the first frame (${blocks.firstWidth}x${blocks.firstHeight}) is larger than the logical screen (${screenWidth}x${screenHeight})`)
  }
  return {
    ...baseHeader('gif', useFrame ? blocks.firstWidth : screenWidth, useFrame ? blocks.firstHeight : screenHeight),
    // Transparent where the first frame says so, or where it leaves the screen uncovered (the decoder draws it on a
    // transparent canvas); a 0x0 screen is the frame itself.
    hasAlpha: blocks.transparent || (!useFrame && !covers(blocks, screenWidth, screenHeight)),
    progressive: blocks.interlaced,
    frames: blocks.frames,
    ...(blocks.loop !== undefined ? { loop: blocks.loop } : {}),
    ...(blocks.frameOutside && !useFrame ? { frameOutside: true } : {}),
  }
}

/** Whether the first frame covers the whole logical screen. */
const covers = (b: GifBlocks, width: number, height: number): boolean =>
  b.firstLeft === 0 && b.firstTop === 0 && b.firstWidth >= width && b.firstHeight >= height

/** Count image descriptors, read the loop count; stops quietly at the trailer, unknown bytes or truncation. */
function walkGifBlocks(r: Reader, start: number, screenWidth: number, screenHeight: number): GifBlocks {
  const blocks: GifBlocks = { frames: 0, firstLeft: 0, firstTop: 0, firstWidth: 0, firstHeight: 0, transparent: false, interlaced: false, loop: undefined, frameOutside: false }
  let pos = start
  while (r.has(pos, 1)) {
    const introducer = r.u8(pos)
    if (introducer === GIF_TRAILER) break
    if (introducer === GIF_EXTENSION) {
      if (!r.has(pos, 4)) break
      const label = r.u8(pos + 1)
      if (label === GIF_GRAPHIC_CONTROL && blocks.frames === 0 && r.u8(pos + 2) >= 4) {
        blocks.transparent = (r.u8(pos + 3) & 1) === 1
      }
      // An application extension of 11 bytes naming the looping extension, then a sub-block [1, count (u16)].
      if (label === GIF_APPLICATION && r.u8(pos + 2) === 11 && r.has(pos + 3, 16) && (r.matchesAscii(pos + 3, 'NETSCAPE2.0') || r.matchesAscii(pos + 3, 'ANIMEXTS1.0'))) {
        if (r.u8(pos + 14) >= 3 && r.u8(pos + 15) === 1) blocks.loop = r.u16(pos + 16, true)
      }
      pos = skipGifSubBlocks(r, pos + 2)
    } else if (introducer === GIF_IMAGE) {
      if (!r.has(pos, 10)) break
      blocks.frames++
      if (blocks.frames === 1) {
        blocks.firstLeft = r.u16(pos + 1, true)
        blocks.firstTop = r.u16(pos + 3, true)
        blocks.firstWidth = r.u16(pos + 5, true)
        blocks.firstHeight = r.u16(pos + 7, true)
      }
      if (r.u16(pos + 1, true) + r.u16(pos + 5, true) > screenWidth || r.u16(pos + 3, true) + r.u16(pos + 7, true) > screenHeight) blocks.frameOutside = true
      const packed = r.u8(pos + 9)
      if (blocks.frames === 1) blocks.interlaced = (packed & 0x40) !== 0
      const localTable = packed & 0x80 ? 3 * (1 << ((packed & 7) + 1)) : 0
      // Skip the LZW minimum code size byte, then the data sub-blocks.
      pos = skipGifSubBlocks(r, pos + 10 + localTable + 1)
    } else {
      // Garbage where a block should start: the decoder stops here too.
      break
    }
  }
  return blocks
}

/** Offset just after a sub-block chain's zero terminator, or the buffer length if it is cut off. */
function skipGifSubBlocks(r: Reader, pos: number): number {
  while (r.has(pos, 1)) {
    const size = r.u8(pos)
    if (size === 0) return pos + 1
    pos += size + 1
  }
  return r.length
}
