// SSIMULACRA 2 as the API computes it (wasm/lean/score.c), run in Node on the worker's own lean.wasm, for the scripts
// that score answers (the bench's smarter-compression phase, format-choice-check).
import fs from 'node:fs'
import path from 'node:path'

/**
 * The lean codec's SSIMULACRA 2 in this process (the worker's own lean.wasm).
 *
 * @example
 * const scorer = await createLeanScorer(ROOT, sharp)
 * const score = await scorer.score(await scorer.rgba(original), answer)
 */
export async function createLeanScorer(root, sharp) {
  await import(path.join(root, 'wasm', 'imagedata.ts'))
  const { LeanCodec } = await import(path.join(root, 'wasm', 'lean.ts'))
  const module = new WebAssembly.Module(fs.readFileSync(path.join(root, 'wasm', 'lean', 'lean.wasm')))
  const rgba = async (bytes) => {
    const { data, info } = await sharp(bytes).ensureAlpha().raw().toBuffer({ resolveWithObject: true })
    return new ImageData(new Uint8ClampedArray(data.buffer, data.byteOffset, data.length), info.width, info.height)
  }
  // The cap is a MemoryCap (wasm/cap.ts) by shape: Node cannot strip that file's parameter property.
  const cap = () => ({ maxBytes: 2 ** 31, reached: false })
  // One instance, reset for each score: its memory stays at the largest image's (about 1.1 GB for a 12 MP one).
  const lean = new LeanCodec(module, cap())
  return {
    rgba,
    /** Score of `answer` (encoded bytes) against `reference` (ImageData). */
    async score(reference, answer, alpha = false) {
      const distorted = await rgba(answer)
      lean.reset(cap())
      return lean.score(reference, distorted, alpha)
    },
  }
}
