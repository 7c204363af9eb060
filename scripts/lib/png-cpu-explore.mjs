#!/usr/bin/env node
// CPU time of the worker's PNG encoder (oxipng, the same wasm the worker runs) per level and size, in
// Node's V8, single-threaded, as workerd runs it. For the PNG effort caps (src/codecs/png.ts).
//
//   node_modules/.bin/node scripts/lib/png-cpu-explore.mjs [--mp 1,2] [--levels 0,1,2,3,4,5,6] FILE...
//
// Each FILE (any format sharp reads) is resized to each size in megapixels (aspect kept) and encoded
// once per level; prints CPU seconds per megapixel.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import sharp from 'sharp'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const module = new WebAssembly.Module(fs.readFileSync(path.join(ROOT, 'node_modules/@jsquash/oxipng/codec/pkg/squoosh_oxipng_bg.wasm')))

function oxipng(rgba, width, height, level) {
  let memory
  const instance = new WebAssembly.Instance(module, {
    wbg: { __wbindgen_throw: (p, l) => { throw new Error(new TextDecoder().decode(new Uint8Array(memory.buffer, p, l))) } },
  })
  const e = instance.exports
  memory = e.memory
  const retptr = e.__wbindgen_add_to_stack_pointer(-16)
  const ptr = e.__wbindgen_malloc(rgba.length, 1) >>> 0
  new Uint8Array(memory.buffer, ptr, rgba.length).set(rgba)
  e.optimise_raw(retptr, ptr, rgba.length, width, height, level, 0, 1)
  const [, len] = new Int32Array(memory.buffer, retptr, 2)
  e.__wbindgen_add_to_stack_pointer(16)
  return len
}

const args = process.argv.slice(2)
let mps = [1, 2]
let levels = [0, 1, 2, 3, 4, 5, 6]
const files = []
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--mp') mps = args[++i].split(',').map(Number)
  else if (args[i] === '--levels') levels = args[++i].split(',').map(Number)
  else files.push(args[i])
}
console.log(`| image | MP | ${levels.map((l) => `level ${l}`).join(' | ')} |`)
console.log(`|---|---|${levels.map(() => '---').join('|')}|`)
for (const file of files) {
  const meta = await sharp(file).metadata()
  for (const mp of mps) {
    const scale = Math.sqrt((mp * 1e6) / (meta.width * meta.height))
    const width = Math.round(meta.width * scale)
    const height = Math.round(meta.height * scale)
    const { data } = await sharp(file).resize(width, height, { fit: 'fill' }).ensureAlpha().raw().toBuffer({ resolveWithObject: true })
    const cells = []
    for (const level of levels) {
      const t0 = process.cpuUsage()
      const bytes = oxipng(data, width, height, level)
      const t = process.cpuUsage(t0)
      const seconds = (t.user + t.system) / 1e6
      cells.push(`${(seconds / ((width * height) / 1e6)).toFixed(2)} s/MP (${Math.round(bytes / 1024)} KiB)`)
    }
    console.log(`| ${path.basename(file)} | ${((width * height) / 1e6).toFixed(2)} | ${cells.join(' | ')} |`)
  }
}
