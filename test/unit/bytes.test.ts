/**
 * copyParts: the input as the answer, copied out of the body buffer in parts, into the room of a file a sink gave up on first.
 */
import { describe, expect, it } from 'vitest'
import { copyParts, joinParts, PART_BYTES } from '../../src/lib/bytes'
import { firstDifference } from '../helpers/bytes'

const counting = (length: number, from = 0) => Uint8Array.from({ length }, (_, i) => (from + i) % 251)

describe('copyParts', () => {
  it('copies parts of any size into new arrays of at most PART_BYTES, in order', () => {
    const source = counting(2 * PART_BYTES + 12345)
    const parts = copyParts([source.subarray(0, 10), source.subarray(10, PART_BYTES + 7), source.subarray(PART_BYTES + 7)])
    expect(parts.map((part) => part.length)).toEqual([PART_BYTES, PART_BYTES, 12345])
    expect(parts.every((part) => part.buffer !== source.buffer)).toBe(true)
    // (not toEqual: it walks megabytes element by element, 12 s here)
    expect(firstDifference(joinParts(parts), source)).toBe(-1)
  })

  it('fills the room given first, in order, then takes new arrays for the rest', () => {
    const room = [new Uint8Array(16), new Uint8Array(32), new Uint8Array(64)]
    const source = counting(200, 3)
    const parts = copyParts(source, room)
    expect(parts.slice(0, 3).map((part) => part.buffer)).toEqual(room.map((part) => part.buffer))
    expect(parts.map((part) => part.length)).toEqual([16, 32, 64, 88])
    expect(joinParts(parts)).toEqual(source)
  })

  it('leaves room it does not need, and the last part no longer than what is left', () => {
    const parts = copyParts(counting(20), [new Uint8Array(16), new Uint8Array(16), new Uint8Array(16)])
    expect(parts.map((part) => part.length)).toEqual([16, 4])
    expect(joinParts(parts)).toEqual(counting(20))
  })
})
