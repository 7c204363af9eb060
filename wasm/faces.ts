/**
 * Faces in a small picture (gravity=face's preview): libfacedetection's CNN (wasm/facedet/, built by
 * wasm/facedet/build.sh). One instance per isolate, over a memory of its own of at most FACES_MAX_MIB, kept from one
 * request to the next: a fresh memory for each would stay resident until V8 collects it (twelve clients asking for
 * gravity=face grew workerd by 74 MiB more than twelve asking for gravity=center). A detection is synchronous, so two
 * requests never share it at once; an instance that failed is dropped, and the next detection makes another.
 */

/** A face's box in the picture's pixels, and how sure the detector is of it (0-100). */
export interface Face {
  x: number
  y: number
  width: number
  height: number
  confidence: number
}

/** The most the detector's memory grows to: its CNN's blobs for a 256 x 256 picture take 4.9 MiB (256 x 192: 3.9). */
export const FACES_MAX_MIB = 8

const PAGE = 65536
/** wasm/facedet/build.sh's --initial-memory (2 MiB): the module asks for at least that much. */
const INITIAL_PAGES = 32
const MOST_FACES = 64

interface FaceExports {
  _initialize(): void
  faces_alloc(size: number): number
  faces_free(ptr: number): void
  faces_detect(bgr: number, width: number, height: number, out: number, room: number): number
}

class DetectorFailure extends Error {}

let detector: { exports: FaceExports; memory: WebAssembly.Memory } | undefined

function instance(module: WebAssembly.Module): { exports: FaceExports; memory: WebAssembly.Memory } {
  if (detector) return detector
  const memory = new WebAssembly.Memory({ initial: INITIAL_PAGES, maximum: (FACES_MAX_MIB * 1048576) / PAGE })
  const refuse = () => {
    throw new DetectorFailure('the face detector stopped')
  }
  const wasi = { fd_close: refuse, fd_seek: refuse, fd_write: () => 8, proc_exit: refuse }
  const exports = new WebAssembly.Instance(module, { env: { memory }, wasi_snapshot_preview1: wasi }).exports as unknown as FaceExports
  exports._initialize()
  detector = { exports, memory }
  return detector
}

/**
 * The faces in `image` (RGBA), the most confident first; none where the detector fails (out of its memory, say).
 *
 * @example
 * facesIn(facedetModule, preview).filter((face) => face.confidence >= 60)
 */
export function facesIn(module: WebAssembly.Module, image: ImageData): Face[] {
  try {
    const { exports, memory } = instance(module)
    const { width, height, data } = image
    const bgr = exports.faces_alloc(width * height * 3)
    const out = exports.faces_alloc(MOST_FACES * 5 * 4)
    try {
      if (!bgr || !out) return []
      const pixels = new Uint8Array(memory.buffer, bgr, width * height * 3)
      for (let i = 0, o = 0; i < data.length; i += 4, o += 3) {
        pixels[o] = data[i + 2]!
        pixels[o + 1] = data[i + 1]!
        pixels[o + 2] = data[i]!
      }
      const n = exports.faces_detect(bgr, width, height, out, MOST_FACES)
      const found = new Int32Array(memory.buffer, out, Math.max(0, n) * 5)
      const faces: Face[] = []
      for (let i = 0; i < n; i++) {
        const [x, y, w, h, confidence] = found.subarray(i * 5, i * 5 + 5)
        faces.push({ x: x!, y: y!, width: w!, height: h!, confidence: confidence! })
      }
      return faces.sort((a, b) => b.confidence - a.confidence)
    } finally {
      exports.faces_free(out)
      exports.faces_free(bgr)
    }
  } catch (error) {
    detector = undefined
    if (error instanceof DetectorFailure || error instanceof WebAssembly.RuntimeError || error instanceof RangeError) return []
    throw error
  }
}
