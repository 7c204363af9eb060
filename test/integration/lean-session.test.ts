/**
 * One lean codec instance per conversion over the isolate's one lean memory (wasm/session.ts): later
 * conversions reuse that memory instead of leaving a dropped one behind for the garbage collector, so
 * what the isolate holds does not depend on when V8 collects. These check what a client would see if
 * the reuse leaked state (the same request answered differently, a broken answer after a failure) and
 * that the memory stops growing and is charged by the plan; and the same for the AVIF encoder's memory.
 */
import { describe, expect, it } from 'vitest'
import { avifResidentMiB, leanResidentMiB, releaseAvifMemory, releaseLeanMemory } from '../../wasm'
import { expectProblem, okBytes } from '../helpers/api'
import { jpegWithBogusHuffmanTable } from '../helpers/bytes'
import { fixture } from '../helpers/fixtures'
import { decode } from '../helpers/image'
import { callWorker } from '../helpers/worker'

const post = (body: Uint8Array, query: string, vars: Record<string, string> = {}) =>
  callWorker(`/api/compress?${query}`, { method: 'POST', body, headers: { 'Content-Type': 'application/octet-stream' } }, vars)

/** A 2400x1500 JPEG (3.6 MP), made by the API from photo.jpg: its conversions fill the lean memory. */
let big: Uint8Array | undefined
async function bigJpeg(): Promise<Uint8Array> {
  big ??= await okBytes(await post(fixture('photo.jpg'), 'width=2400&enlarge=true&format=jpeg&quality=60'))
  return big
}

const estimateOf = (res: Response) => Number.parseInt(res.headers.get('x-memory-estimate') ?? '', 10)

describe('the lean memory, reused from one conversion to the next', () => {
  it('answers the same request with the same bytes after other conversions used the memory', async () => {
    const request = () => post(fixture('large.jpg'), 'format=webp&width=600')
    const first = await okBytes(await request())
    await okBytes(await post(await bigJpeg(), 'format=webp'))
    await okBytes(await post(fixture('photo.png'), 'format=jpeg&effort=2&width=300'))
    await okBytes(await post(await bigJpeg(), 'format=jpeg&width=1000'))
    expect(await okBytes(await request())).toEqual(first)
  })

  it('serves the next request intact after the lean codec failed mid-conversion', async () => {
    const request = () => post(fixture('photo.jpg'), 'format=jpeg&effort=2&width=320')
    const before = await okBytes(await request())
    await expectProblem(await post(jpegWithBogusHuffmanTable(fixture('photo.jpg')), 'format=webp'), 'corrupt_image', 422)
    const after = await okBytes(await request())
    expect(after).toEqual(before)
    const { image } = await decode(after)
    expect([image.width, image.height]).toEqual([320, 200])
  })

  it('does not grow over back-to-back conversions of the same size', async () => {
    const input = await bigJpeg()
    await okBytes(await post(input, 'format=webp&width=2000'))
    const held = leanResidentMiB()
    expect(held).toBeGreaterThan(0)
    for (let i = 0; i < 3; i++) await okBytes(await post(input, 'format=webp&width=2000'))
    expect(leanResidentMiB()).toBe(held)
  })

  it('charges a conversion for the lean memory the isolate holds', async () => {
    await okBytes(await post(await bigJpeg(), 'format=webp&width=2000'))
    const held = leanResidentMiB()
    // A 1200x750 JPEG to WebP in one pass needs a few MiB of lean memory; the held memory is charged instead.
    const res = await post(fixture('large.jpg'), 'format=webp')
    await okBytes(res)
    expect(estimateOf(res)).toBeGreaterThanOrEqual(Math.floor(12 + held))
  })

  it('gives the held memory up for a conversion that fits only without it', async () => {
    // AVIF's encoder is not in the lean codec: its memory comes on top of what the lean memory holds.
    releaseLeanMemory()
    const fresh = estimateOf(await post(fixture('photo.jpg'), 'format=avif&effort=0'))
    await okBytes(await post(await bigJpeg(), 'format=webp&width=2000'))
    const held = leanResidentMiB()
    const budget = { MEMORY_BUDGET_MIB: String(Math.ceil(fresh + held / 2)) }
    await okBytes(await post(await bigJpeg(), 'format=webp&width=2000'))
    const res = await post(fixture('photo.jpg'), 'format=avif&effort=0', budget)
    expect((await decode(await okBytes(res))).format).toBe('avif')
    expect(estimateOf(res)).toBeLessThanOrEqual(Number(budget.MEMORY_BUDGET_MIB))
    expect(leanResidentMiB()).toBeLessThan(held)
  })
})

describe("the AVIF encoder's memory, reused from one AVIF conversion to the next", () => {
  // Before, each AVIF encoder had a memory of its own, resident until V8 collected it: back-to-back 12 MP
  // AVIFs peaked at 73, 103, 79 and 108 MiB, and 12 clients at 137 MiB over idle (docs/memory.md).
  it('answers the same AVIF request with the same bytes after other AVIF conversions used the memory, without growing it', async () => {
    releaseAvifMemory()
    const request = async () => okBytes(await post(await bigJpeg(), 'format=avif&effort=0'))
    const first = await request()
    const held = avifResidentMiB()
    expect(held).toBeGreaterThan(0)
    await okBytes(await post(fixture('photo.png'), 'format=avif&lossless=true&width=200'))
    await okBytes(await post(fixture('basn6a08.png'), 'format=avif'))
    expect(await request()).toEqual(first)
    expect(avifResidentMiB()).toBe(held)
    expect((await decode(first)).image.width).toBe(2400)
  })

  it('charges any other conversion for the AVIF memory the isolate holds', async () => {
    await okBytes(await post(await bigJpeg(), 'format=avif&effort=0'))
    const held = avifResidentMiB()
    const res = await post(fixture('large.jpg'), 'format=webp')
    await okBytes(res)
    expect(estimateOf(res)).toBeGreaterThanOrEqual(Math.floor(12 + held))
  })
})
