/**
 * rotate and flip as EXIF orientations (src/pipeline/orientation.ts): composing two orientations must turn pixels as
 * applying the two one after the other does (transform.ts's orient(), the reference for EXIF), for all 64 pairs; a
 * rectangle must land where its pixels do.
 */
import { describe, expect, it } from 'vitest'
import { composeOrientation, orientRect, userOrientation } from '../../src/pipeline/orientation'
import { orient } from '../../src/pipeline/transform'

/** A 3x2 image whose every pixel is its own index. */
function numbered(width: number, height: number): ImageData {
  const data = new Uint8ClampedArray(width * height * 4)
  for (let i = 0; i < width * height; i++) data[i * 4] = i
  return new ImageData(data, width, height)
}

const red = (image: ImageData) => Array.from({ length: image.width * image.height }, (_, i) => image.data[i * 4])

describe('orientation', () => {
  it('composes every pair of orientations as applying one after the other', () => {
    for (let a = 1; a <= 8; a++) {
      for (let b = 1; b <= 8; b++) {
        const twice = orient(orient(numbered(3, 2), a), b)
        const once = orient(numbered(3, 2), composeOrientation(a, b))
        expect([once.width, once.height, red(once)], `${a} then ${b}`).toEqual([twice.width, twice.height, red(twice)])
      }
    }
  })

  it('reads rotate (clockwise) and flip (first) as orientations', () => {
    expect(userOrientation({ rotate: undefined, flip: undefined })).toBe(1)
    expect(userOrientation({ rotate: 90, flip: undefined })).toBe(6)
    expect(userOrientation({ rotate: 270, flip: undefined })).toBe(8)
    expect(userOrientation({ rotate: 0, flip: 'hv' })).toBe(3)
    // flip=h then a quarter turn clockwise: the transverse (sharp's flop then rotate(90), test/integration/rotate-flip.test.ts)
    expect(userOrientation({ rotate: 90, flip: 'h' })).toBe(7)
  })

  it('moves a rectangle where its pixels go', () => {
    for (let o = 1; o <= 8; o++) {
      const image = numbered(7, 5)
      const rect = { x: 1, y: 2, width: 3, height: 2 }
      const inside = new Set<number>()
      for (let y = rect.y; y < rect.y + rect.height; y++) for (let x = rect.x; x < rect.x + rect.width; x++) inside.add(y * 7 + x)
      const turned = orient(image, o)
      const r = orientRect(rect, 7, 5, o)
      const found = new Set<number>()
      for (let y = r.y; y < r.y + r.height; y++) for (let x = r.x; x < r.x + r.width; x++) found.add(turned.data[(y * turned.width + x) * 4]!)
      expect(found, `orientation ${o}`).toEqual(inside)
    }
  })
})
