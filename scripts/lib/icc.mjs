// ICC v2 profiles written from numbers, for scripts/make-colour-fixtures.mjs and scripts/make-cmyk-profile.mjs: the
// header, a tag table, and the few tag types they use (desc, text, XYZ, curv, para, lut8).

export const D50_XYZ = [0.9642, 1, 0.8249]

/** An s15Fixed16Number. */
export const s15 = (v) => { const b = Buffer.alloc(4); b.writeInt32BE(Math.round(v * 65536)); return b }
export const xyzTag = (xyz) => Buffer.concat([Buffer.from('XYZ \0\0\0\0'), ...xyz.map(s15)])
/** A curve of one gamma. */
export const curvGamma = (gamma) => { const b = Buffer.alloc(14); b.write('curv'); b.writeUInt32BE(1, 8); b.writeUInt16BE(Math.round(gamma * 256), 12); return b }
/** sRGB's curve as a parametric one (type 3). */
export const paraSrgb = () => Buffer.concat([Buffer.from('para\0\0\0\0\0\x03\0\0'), ...[2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045].map(s15)])
export function descTag(text) {
  const ascii = Buffer.from(`${text}\0`, 'latin1')
  const head = Buffer.alloc(12)
  head.write('desc')
  head.writeUInt32BE(ascii.length, 8)
  return Buffer.concat([head, ascii, Buffer.alloc(4 + 4 + 2 + 1 + 67)])
}
export const textTag = (text) => Buffer.concat([Buffer.from('text\0\0\0\0'), Buffer.from(`${text}\0`, 'latin1')])

/** A lut8 (mft1) of `inputs` -> `outputs` channels with `grid` points, identity matrix and tables, and `clut` bytes. */
export function lut8(inputs, outputs, grid, clut) {
  const head = Buffer.alloc(48)
  head.write('mft1')
  head.writeUInt8(inputs, 8)
  head.writeUInt8(outputs, 9)
  head.writeUInt8(grid, 10)
  for (const i of [0, 4, 8]) head.writeInt32BE(65536, 12 + i * 4)
  const identity = Buffer.from(Array.from({ length: 256 }, (_, i) => i))
  return Buffer.concat([head, ...Array(inputs).fill(identity), Buffer.from(clut), ...Array(outputs).fill(identity)])
}

/** A whole profile: `deviceClass` ('mntr', 'prtr'), colour space ('RGB ', 'GRAY', 'CMYK'), PCS ('XYZ ', 'Lab ') and tags. */
export function profile(deviceClass, space, pcs, tags) {
  const entries = Object.entries(tags)
  let offset = 128 + 4 + 12 * entries.length
  const table = [Buffer.alloc(4)]
  table[0].writeUInt32BE(entries.length)
  const data = []
  for (const [sig, body] of entries) {
    const padded = Buffer.concat([body, Buffer.alloc((4 - (body.length % 4)) % 4)])
    const entry = Buffer.alloc(12)
    entry.write(sig)
    entry.writeUInt32BE(offset, 4)
    entry.writeUInt32BE(body.length, 8)
    table.push(entry)
    data.push(padded)
    offset += padded.length
  }
  const header = Buffer.alloc(128)
  header.writeUInt32BE(offset, 0)
  header.writeUInt32BE(0x02100000, 8)
  header.write(deviceClass, 12)
  header.write(space, 16)
  header.write(pcs, 20)
  header.write('acsp', 36)
  s15(D50_XYZ[0]).copy(header, 68)
  s15(D50_XYZ[1]).copy(header, 72)
  s15(D50_XYZ[2]).copy(header, 76)
  return Buffer.concat([header, ...table, ...data])
}
