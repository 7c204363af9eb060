/**
 * The only place that imports `.wasm` files and instantiates them.
 *
 * Workers cannot compile WebAssembly from bytes at run time, so every module is imported as an
 * already-compiled `WebAssembly.Module` (wrangler's CompiledWasm rule) and instantiated here.
 *
 * Memory is the binding limit of a Worker (128 MB per isolate) and WebAssembly memory never shrinks.
 * The lean codec (our own module, every codec the service has) has one instance over one memory per
 * isolate, reset for every conversion (wasm/session.ts), so what it holds does not depend on the garbage
 * collector. The face detector (libfacedetection's CNN, gravity=face) is kept the same way: one instance per isolate.
 */
import facedetModule from './facedet/facedet.wasm'
import leanModule from './lean/lean.wasm'

import { MemoryCap } from './cap'
import { facesIn } from './faces'
import { LeanCodec } from './lean'
import { sessionCodec } from './session'
import './imagedata'

export { MemoryCap }
export type { Face } from './faces'
export { AVIF_WHOLE_PIXELS, canStreamInput, type KeptRows, LeanFailure, type StreamedFile, type LeanCodec, PNG_STRATEGY, type LeanAvifSettings, type LeanJpegSettings, type LeanPngSettings, type PaletteResult, type PaletteSettings, type SampleSpans } from './lean'

/**
 * The lean codec (MozJPEG, libwebp, libpng and libdeflate, giflib, libavif with dav1d and libaom, row by row;
 * wasm/lean.ts): inside a conversion
 * (withLeanSession), the conversion's one instance over the isolate's lean memory; elsewhere a fresh
 * instance whose memory stops at `cap`.
 */
export const leanCodec = (cap: MemoryCap, streaming = false) => sessionCodec(leanModule, cap, streaming)
/** The faces in a small RGBA picture (libfacedetection's CNN, wasm/faces.ts), by the isolate's one detector. */
export const detectFaces = (image: ImageData) => facesIn(facedetModule, image)
/** The lean instances V8 has not collected yet, and their memories' bytes (the isolate's view of its memory). */
export const leanInstances = () => LeanCodec.live()
export { abandonLeanSession, leanResidentMiB, releaseLeanMemory, withLeanSession } from './session'
