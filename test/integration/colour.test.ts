/**
 * Colour management (wasm/lean/colour.c, Little CMS): an image's colours described by an ICC profile (JPEG APP2,
 * PNG iCCP, WebP ICCP), PNG gAMA or a CMYK JPEG's profile come out as sRGB, as a colour-managed viewer shows them.
 * The fixtures (test/fixtures/colour, scripts/make-colour-fixtures.mjs) are patches of known colours whose sRGB
 * values were computed with plain colour maths, not with Little CMS.
 */
import { describe, expect, it } from 'vitest'
import expected from '../fixtures/colour/expected.json'
import { compress, okBytes } from '../helpers/api'
import { jpegSegment, withJpegSegments } from '../helpers/bytes'
import { fixture } from '../helpers/fixtures'
import { decode, pixel, psnr } from '../helpers/image'
import GENERIC_CMYK from '../../wasm/lean/cmyk_profile.h?raw'

const PATCHES = expected as Record<string, number[][]>
const contentType = (name: string) => (name.endsWith('.png') ? 'image/png' : name.endsWith('.webp') ? 'image/webp' : 'image/jpeg')

/** The centre of each 16-px patch of the answer. */
async function patchesOf(name: string, query: Record<string, string | number>) {
  const res = await compress(fixture(`colour/${name}`), query, { contentType: contentType(name) })
  const out = await decode(await okBytes(res))
  return { out, res, colours: PATCHES[name]!.map((_, i) => pixel(out.image, i * 16 + 8, 8).slice(0, 3)) }
}

const off = (got: number[][], want: number[][]) => Math.max(...got.flatMap((c, i) => c.map((v, k) => Math.abs(v - want[i]![k]!))))

describe('colours described by a profile come out as sRGB', () => {
  // [fixture, output format, options, largest channel error allowed]
  const cases: Array<[string, string, Record<string, string | number>, number]> = [
    ['p3.png', 'png', {}, 1],
    ['p3.png', 'webp', { lossless: 1 }, 1],
    ['p3.jpg', 'png', {}, 3],
    ['p3.jpg', 'jpeg', { quality: 95 }, 6],
    ['p3.webp', 'png', {}, 1],
    ['p3.png', 'avif', { lossless: 1 }, 2],
    ['adobe-rgb.jpg', 'png', {}, 3],
    ['grey-linear.png', 'png', {}, 1],
    ['gama-linear.png', 'png', {}, 1],
  ]
  for (const [name, format, options, tolerance] of cases) {
    it(`${name} to ${format}: every patch within ${tolerance} of its sRGB value`, async () => {
      const { colours, out } = await patchesOf(name, { format, effort: 0, ...options })
      expect(out.format).toBe(format)
      expect(off(colours, PATCHES[name]!), `${JSON.stringify(colours)} against ${JSON.stringify(PATCHES[name])}`).toBeLessThanOrEqual(tolerance)
    })
  }

  it('converts a Display P3 JPEG kept at its size and format too (no same-size shortcut skips the profile)', async () => {
    const { colours, res } = await patchesOf('p3.jpg', { format: 'jpeg', quality: 95 })
    expect(res.headers.get('x-original-returned')).not.toBe('true')
    expect(off(colours, PATCHES['p3.jpg']!)).toBeLessThanOrEqual(6)
  })

  it('converts before resizing: a P3 PNG halved keeps its sRGB colours', async () => {
    const res = await compress(fixture('colour/p3.png'), { format: 'png', width: 32 }, { contentType: 'image/png' })
    const out = await decode(await okBytes(res))
    expect(out.image.width).toBe(32)
    const colours = [0, 1, 2, 3].map((i) => pixel(out.image, i * 8 + 4, 4).slice(0, 3))
    expect(off(colours, PATCHES['p3.png']!)).toBeLessThanOrEqual(2)
  })

  it('never answers with the input when its colours were converted', async () => {
    // A PNG of four flat patches cannot be made much smaller: without the profile rule the input would be the answer.
    const res = await compress(fixture('colour/p3.png'), { format: 'png' }, { contentType: 'image/png' })
    const body = await okBytes(res)
    expect(res.headers.get('x-original-returned')).not.toBe('true')
    expect(body).not.toEqual(fixture('colour/p3.png'))
  })
})

describe('a profile that cannot be used is ignored: the pixels are taken as sRGB', () => {
  for (const name of ['broken-icc.png', 'broken-icc.jpg']) {
    it(`${name}: 200, the patches as stored, and the next request served`, async () => {
      const { colours } = await patchesOf(name, { format: 'png' })
      expect(off(colours, PATCHES[name]!)).toBeLessThanOrEqual(name.endsWith('.jpg') ? 3 : 0)
      const next = await compress(fixture('colour/p3.png'), { format: 'png' }, { contentType: 'image/png' })
      expect(next.status).toBe(200)
    })
  }
})

describe('CMYK JPEGs convert instead of being refused', () => {
  it('through their embedded profile: a profile that prints every ink mix as one colour gives that colour everywhere', async () => {
    const res = await compress(fixture('colour/cmyk-constant.jpg'), { format: 'png' }, { contentType: 'image/jpeg' })
    const out = await decode(await okBytes(res))
    const want = PATCHES['cmyk-constant.jpg']![0]!
    // The bottom row has no ink: paper, which Little CMS keeps white (its white-point fix-up), so it is left out.
    for (const [x, y] of [[0, 0], [50, 50], [99, 0], [10, 80]] as const) {
      expect(off([pixel(out.image, x, y).slice(0, 3)], [want]), `${pixel(out.image, x, y)} at ${x},${y}`).toBeLessThanOrEqual(2)
    }
  })

  it('without a profile, through the generic coated-paper one (wasm/lean/cmyk_profile.h): as if the file carried it', async () => {
    const bytes = Uint8Array.from(GENERIC_CMYK.match(/0x[0-9a-f]{2}/g)!.map((hex) => Number.parseInt(hex, 16)))
    const plain = fixture('cmyk.jpg')
    const tagged = withJpegSegments(plain, jpegSegment(0xe2, new TextEncoder().encode('ICC_PROFILE\0'), Uint8Array.of(1, 1), bytes))
    const png = async (input: Uint8Array) => decode(await okBytes(await compress(input, { format: 'png' }, { contentType: 'image/jpeg' })))
    const a = await png(plain)
    const b = await png(tagged)
    expect([a.image.width, a.image.height]).toEqual([100, 100])
    expect(psnr(a.image, b.image)).toBe(Number.POSITIVE_INFINITY)
    const webp = await compress(plain, { format: 'webp', quality: 90 }, { contentType: 'image/jpeg' })
    expect((await decode(await okBytes(webp))).format).toBe('webp')
  })
})
