/**
 * JPEG EXIF orientation: exif-{3,6,8}.jpg store the same 180x120 picture rotated/stored sideways with
 * an Orientation tag. The API must answer upright (180x120, matching exif-6.upright.png) and must
 * not carry the EXIF block over, or viewers would rotate the upright pixels a second time.
 *
 * PSNR floor: the fixtures' README measures a mean absolute difference of about 3.2 levels between
 * the decoded JPEGs and the upright PNG (the fixtures are quality-90 JPEGs), which is about 35 dB;
 * the API's re-encode at default quality 80 costs a few more dB (measured 30.8-31.6 dB for JPEG and
 * WebP). 27 dB leaves room for codec updates; ignoring the tag of exif-3.jpg leaves a mean difference
 * of 85 levels (README), far under 15 dB, and a 90° error cannot even match the size.
 */
import { describe, expect, it } from 'vitest'
import { compress, okBytes } from '../helpers/api'
import { jpegHasExif } from '../helpers/bytes'
import { fixture } from '../helpers/fixtures'
import { decode, psnr } from '../helpers/image'

const FLOOR = 27
const CASES = { 'exif-3.jpg': 'rotated 180°', 'exif-6.jpg': 'stored 90° anticlockwise', 'exif-8.jpg': 'stored 90° clockwise' }

describe('EXIF orientation', () => {
  it('has fixtures that need the tag to look upright', async () => {
    expect(jpegHasExif(fixture('exif-6.jpg'))).toBe(true)
    const upright = (await decode(fixture('exif-6.upright.png'))).image
    expect([upright.width, upright.height]).toEqual([180, 120])
  })

  for (const [name, how] of Object.entries(CASES)) {
    for (const format of ['jpeg', 'webp'] as const) {
      it(`turns ${name} (${how}) upright as ${format}`, async () => {
        const upright = (await decode(fixture('exif-6.upright.png'))).image
        const res = await compress(fixture(name), { format })
        const body = await okBytes(res)
        const out = await decode(body)
        expect(out.format).toBe(format)
        expect(out.header.orientation).toBe(1)
        expect([out.image.width, out.image.height]).toEqual([180, 120])
        expect(res.headers.get('x-input-width')).toBe('180')
        expect(res.headers.get('x-input-height')).toBe('120')
        const score = psnr(upright, out.image)
        expect(score, `PSNR ${score.toFixed(2)} dB`).toBeGreaterThan(FLOOR)
      })
    }

    it(`drops the EXIF block of ${name} from the jpeg answer`, async () => {
      // Same format, no resize: never-bigger must not hand back the input with its Orientation tag.
      const body = await okBytes(await compress(fixture(name), { quality: 100 }))
      expect(jpegHasExif(body)).toBe(false)
      expect((await decode(body)).image.width).toBe(180)
    })
  }

  it('turns exif-6.jpg upright when resizing', async () => {
    const res = await compress(fixture('exif-6.jpg'), { width: 90, format: 'png' })
    const out = await decode(await okBytes(res))
    expect([out.image.width, out.image.height]).toEqual([90, 60])
  })
})
