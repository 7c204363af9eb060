import { describe, expect, it } from 'vitest'
import { FACE_CONFIDENCE, faceWindow } from '../../src/pipeline/faces'

const face = (x: number, y: number, width: number, height: number, confidence = 90) => ({ x, y, width, height, confidence })

/** faceWindow on a 256x192 preview: where gravity=face puts a window of the crop's size. */
describe('faceWindow', () => {
  it("centres the window on one face, as far as the preview's edges allow", () => {
    expect(faceWindow([face(100, 60, 40, 50)], 256, 192, 100, 100)).toEqual({ x: 70, y: 35 })
    expect(faceWindow([face(10, 5, 40, 50)], 256, 192, 100, 100)).toEqual({ x: 0, y: 0 })
    expect(faceWindow([face(220, 150, 30, 40)], 256, 192, 100, 100)).toEqual({ x: 156, y: 92 })
  })

  it('frames every face together where the window holds them', () => {
    // two faces from x 40 to 180 and y 60 to 100: their box's middle is 110, 80
    expect(faceWindow([face(40, 60, 30, 30), face(150, 70, 30, 30)], 256, 192, 160, 120)).toEqual({ x: 30, y: 20 })
  })

  it('takes the most prominent face, by area times confidence, where the window cannot hold them all', () => {
    // 40x40 at 61 (97,600) against 36x36 at 90 (116,640): the smaller, surer face
    const faces = [face(10, 70, 40, 40, 61), face(200, 70, 36, 36, 90)]
    expect(faceWindow(faces, 256, 192, 80, 80)).toEqual({ x: 176, y: 48 })
    expect(faceWindow([face(10, 70, 40, 40, 95), face(200, 70, 36, 36, 90)], 256, 192, 80, 80)).toEqual({ x: 0, y: 50 })
  })

  it('counts a box as a face from FACE_CONFIDENCE, and finds nothing below it', () => {
    expect(faceWindow([face(100, 60, 40, 50, FACE_CONFIDENCE - 1)], 256, 192, 100, 100)).toBeUndefined()
    expect(faceWindow([face(100, 60, 40, 50, FACE_CONFIDENCE)], 256, 192, 100, 100)).toEqual({ x: 70, y: 35 })
    expect(faceWindow([], 256, 192, 100, 100)).toBeUndefined()
  })
})
