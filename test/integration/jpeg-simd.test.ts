/**
 * The lean codec's MozJPEG runs its colour conversions, IDCTs, quantisation and fancy upsampling as WebAssembly SIMD (wasm/lean/jsimd_wasm.c),
 * bit-exact with MozJPEG's C code. The digests below are of what the C build (jsimd_none.c throughout) wrote for these
 * requests (extreme-444.jpg's: its pixels checked equal to jSquash's C-only MozJPEG decoder's, and a build without the
 * 16-bit IDCT's range check gives other pixels); `scripts/lib/lean-compare.mjs verify` checks many more images against
 * such a build. A new MozJPEG or a change to the JPEG settings changes them too: take them again from a C build then.
 */
import { describe, expect, it } from 'vitest'
import { okBytes } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import { callWorker } from '../helpers/worker'

const sha256 = async (bytes: Uint8Array) => Buffer.from(await crypto.subtle.digest('SHA-256', bytes)).toString('hex')

/** [input fixture, query] -> SHA-256 of the answer as the C build wrote it. */
const C_BUILD: Array<[string, string, string]> = [
  // PNG to JPEG at effort 0-2: RGB -> YCbCr and quantisation by reciprocal (quality 5 and 100: the extreme divisors)
  ['photo.png', 'format=jpeg&effort=2&quality=80', '1155c4d933e2c7789b2eb128ee4e07443341f546eaf66087c9e34aceb9642082'],
  ['photo.png', 'format=jpeg&effort=0&quality=5', '61dde80c7878b31217aba6c53e0ec7cd9fe31a65dcdfbaf18ade4a586f76e436'],
  ['photo.png', 'format=jpeg&effort=2&quality=100', 'd2ff3548f439508255efe6a7389eb363c0c8993aa48d0aa7284fedbd993dca83'],
  // JPEG to JPEG in one pass (the IDCT, both conversions, quantisation); JPEG to PNG (the IDCT, YCbCr -> RGBA), resized
  ['large.jpg', 'format=jpeg&effort=2&quality=70', '117629ba8658ee9f8fc1f2ae94a9e55e7652521452faf9fb0f69038fbb2fa182'],
  ['large.jpg', 'format=png&effort=0', '6cd80b18e6d35e6848d6fb2c518e2828430545d76c8dc4a6751a0cfbeb320ff9'],
  ['photo.jpg', 'format=png&effort=0&width=200', 'd6e7eaf9a0e4fa977e6ca60cda6be90dd29e39ccad9c2c04d79d98a96dcb8479'],
  // 4:2:2 at an odd size (fancy upsampling across, each kernel's scalar tail); flat 4:2:0 (blocks with no AC coefficient)
  ['photo-422.jpg', 'format=png&effort=0', '71c4c1341b700053d8f46c4d99d8c7bc01b89fed7a7d57d630a04f7de67f7c5d'],
  ['photo-422.jpg', 'format=jpeg&effort=2&quality=80', '7e8416f305bacd44e70513197d0bf58f0e6e97ae8790e1646b66850b15712681'],
  ['flat-420.jpg', 'format=png&effort=0', 'b6a406b14d58b9dfbfa1a1c04df93106f44ea108204ed598c0b785f362a043a2'],
  // decoded at 1/2 scale (the reduced 4x4 IDCT), resized: a photo to a smaller web size
  ['large.jpg', 'format=png&effort=0&width=480', 'bbf602a1e8ac945ffea65df6f82ba2a7f84d789d886d35f6fe5052727e0208e6'],
  ['photo-422.jpg', 'format=png&effort=0&width=90', 'ba276042229a7ae880cd3f656ed8baf44c0b4b5c9577b686e536ca8768f04fdd'],
  // decoded at 1/4 scale (the reduced 2x2 IDCT, and 4x4 for 4:2:0 chroma), resized
  ['large.jpg', 'format=png&effort=0&width=240', '043b161433d9eab2e0b77c01ffffd2465a0cd23bd8fa2df6a12ee2ae5e1b09ce'],
  // the 16-bit IDCT and its 32-bit fallback: blocks within 16 bits beside blocks dequantised past them (a hostile table)
  ['extreme-444.jpg', 'format=png&effort=0', '1c05b0c3cff5ce5df96194ef97291f4e27e36f66b27819704e2ac4a01920936d'],
]

describe("JPEG through WebAssembly SIMD: MozJPEG's C code's bytes", () => {
  for (const [name, query, digest] of C_BUILD) {
    it(`${name} ?${query}`, async () => {
      const type = name.endsWith('.png') ? 'image/png' : 'image/jpeg'
      const res = await callWorker(`/api/compress?${query}`, { method: 'POST', headers: { 'Content-Type': type }, body: fixture(name) })
      const out = await okBytes(res)
      expect(await sha256(out)).toBe(digest)
    })
  }
})
