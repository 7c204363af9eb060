/**
 * PNG image data that does not match its IHDR, with every chunk CRC correct (so the sniffer's CRC
 * check passes and the decoder, libpng in the lean codec, is what refuses it): a zlib stream that
 * inflates to more rows than the IHDR has, and one cut short. Each is a 422 corrupt_image, never a
 * picture with rows missing or dropped, and the next request is served.
 */
import { describe, expect, it } from 'vitest'
import { compress, expectProblem, okBytes } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import { writePng } from '../helpers/png'

const WIDTH = 64
const HEIGHT = 48
const grey = { width: WIDTH, height: HEIGHT, channels: 1 as const, depth: 8 as const, samples: Array.from({ length: WIDTH * HEIGHT }, (_, i) => (i * 7) & 255) }

async function expectRefusedThenServing(png: Uint8Array, detail: RegExp): Promise<void> {
  const problem = await expectProblem(await compress(png, { format: 'webp' }, { contentType: 'image/png' }), 'corrupt_image', 422)
  expect(problem.detail).toMatch(detail)
  const next = await compress(fixture('basn3p08.png'), { format: 'webp' }, { contentType: 'image/png' })
  expect(next.status).toBe(200)
  await next.arrayBuffer()
}

describe('PNG image data that does not match its IHDR', () => {
  it('converts the well-formed file the damaged ones are made from', async () => {
    const res = await compress(await writePng(grey), { format: 'webp' }, { contentType: 'image/png' })
    await okBytes(res)
    expect([res.headers.get('x-output-width'), res.headers.get('x-output-height')]).toEqual([String(WIDTH), String(HEIGHT)])
  })

  it('refuses data that inflates past the IHDR size (422 corrupt_image), then serves the next request', async () => {
    const png = await writePng(grey, { header: { width: WIDTH, height: HEIGHT / 2 } })
    await expectRefusedThenServing(png, /too much image data/i)
  })

  it('refuses data cut short inside the zlib stream (422 corrupt_image), then serves the next request', async () => {
    const png = await writePng(grey, { idat: (data) => data.subarray(0, data.length >> 1) })
    await expectRefusedThenServing(png, /not enough image data/i)
  })
})
