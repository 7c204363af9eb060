/**
 * gravity=face: the crop's window centred on the faces in gravity=auto's preview, found by libfacedetection's CNN
 * (wasm/faces.ts). The faces it is sure of (FACE_CONFIDENCE) are framed together where the window holds them all, else
 * the most prominent (its area times its confidence) is; with none, the window is gravity=auto's. Measured on the
 * hand-marked photos: docs/results/gravity-auto.md.
 */
import type { Face } from '../../wasm/faces'

/**
 * The detector's confidence (0-100) from which a box counts as a face. It gave 87-94 to the faces of the marked photos
 * and never 85 to anything else, but up to 79 to an animal's face (which then counts) and 58-80 to human faces of
 * 10-15 preview pixels: lower would take more of what is not a face, higher would lose small faces.
 */
export const FACE_CONFIDENCE = 60

/**
 * The top-left corner of the `width` x `height` window (in the preview's pixels) centred on `faces`, or undefined where
 * none is sure enough.
 *
 * @example
 * faceWindow([{ x: 90, y: 34, width: 44, height: 52, confidence: 94 }], 256, 256, 144, 256) // { x: 40, y: 0 }
 */
export function faceWindow(faces: Face[], previewWidth: number, previewHeight: number, width: number, height: number): { x: number; y: number } | undefined {
  const sure = faces.filter((face) => face.confidence >= FACE_CONFIDENCE)
  if (sure.length === 0) return undefined
  const all = sure.reduce(union)
  const prominence = (face: Face) => face.width * face.height * face.confidence
  const framed = all.width <= width && all.height <= height ? all : sure.reduce((a, b) => (prominence(b) > prominence(a) ? b : a))
  const centre = (at: number, size: number, window: number, side: number) => Math.max(0, Math.min(side - window, Math.round(at + size / 2 - window / 2)))
  return { x: centre(framed.x, framed.width, width, previewWidth), y: centre(framed.y, framed.height, height, previewHeight) }
}

const union = (a: Face, b: Face): Face => {
  const x = Math.min(a.x, b.x)
  const y = Math.min(a.y, b.y)
  const width = Math.max(a.x + a.width, b.x + b.width) - x
  const height = Math.max(a.y + a.height, b.y + b.height) - y
  return { x, y, width, height, confidence: Math.min(a.confidence, b.confidence) }
}
