/**
 * Encoding and geometry options of POST /api/compress: what each does to the answer, and which
 * combinations are refused with 400 invalid_option.
 */
import { describe, expect, it } from 'vitest'
import { type Query, base64ToBytes, compress, expectProblem, okBytes } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import { colourDistance, decode, flattenOver, greyPng, pixel, psnr } from '../helpers/image'
import { firstDifference } from '../helpers/bytes'
import { withoutGamma } from '../helpers/png'

/** photo.jpg is 480x300 (test/fixtures/README.md). */
const PHOTO = 'photo.jpg'

async function dims(name: string, query: Query): Promise<[number, number]> {
  const res = await compress(fixture(name), query)
  const { image } = await decode(await okBytes(res))
  expect([Number(res.headers.get('x-output-width')), Number(res.headers.get('x-output-height'))]).toEqual([image.width, image.height])
  return [image.width, image.height]
}

describe('options', () => {
  for (const format of ['jpeg', 'webp'] as const) {
    it(`makes ${format} output smaller at quality 30 than at quality 90`, async () => {
      const low = await okBytes(await compress(fixture('photo.png'), { format, quality: 30 }))
      const high = await okBytes(await compress(fixture('photo.png'), { format, quality: 90 }))
      expect(low.length).toBeLessThan(high.length)
    })
  }

  it('keeps every pixel with lossless webp', async () => {
    const src = await decode(fixture('photo.png'))
    const out = await decode(await okBytes(await compress(fixture('photo.png'), { format: 'webp', lossless: true })))
    expect(out.format).toBe('webp')
    expect(psnr(src.image, out.image)).toBe(Number.POSITIVE_INFINITY)
  })

  it('keeps every visible pixel and the alpha with lossless webp of a transparent image', async () => {
    const png = withoutGamma(fixture('basn6a08.png'))
    const src = await decode(png)
    const out = await decode(await okBytes(await compress(png, { format: 'webp', lossless: 1 })))
    expect(psnr(src.image, out.image, { alpha: true })).toBe(Number.POSITIVE_INFINITY)
  })

  it('encodes lossless avif nearly identical to the input', async () => {
    const src = await decode(fixture('photo.png'))
    const res = await compress(fixture('photo.png'), { format: 'avif', lossless: true, effort: 0 })
    const out = await decode(await okBytes(res))
    expect(out.format).toBe('avif')
    // 8-bit lossless AVIF goes through 4:4:4 YUV; anything above 50 dB is visually exact (the default
    // lossy quality scores about 29 dB on this image).
    expect(psnr(src.image, out.image)).toBeGreaterThan(50)
  })

  it('refuses lossless=true for jpeg with 400 invalid_option', async () => {
    const body = await expectProblem(await compress(fixture(PHOTO), { format: 'jpeg', lossless: true }), 'invalid_option', 400)
    expect(body.option).toBe('lossless')
  })

  it('takes quality for png output as a palette (lossy PNG: test/integration/palette-png.test.ts), not a 400', async () => {
    const res = await compress(fixture(PHOTO), { format: 'png', quality: 80, effort: 0 })
    expect(res.status).toBe(200)
    expect(res.headers.get('x-palette-colors')).not.toBeNull()
  })

  it('refuses quality together with lossless with 400 invalid_option', async () => {
    const body = await expectProblem(
      await compress(fixture(PHOTO), { format: 'webp', lossless: true, quality: 80 }),
      'invalid_option',
      400,
    )
    expect(body.option).toBe('quality')
  })

  for (const effort of ['10', '-1', '2.5', 'max']) {
    it(`refuses effort=${effort} with 400 invalid_option`, async () => {
      const body = await expectProblem(await compress(fixture(PHOTO), { effort }), 'invalid_option', 400)
      expect(body.option).toBe('effort')
    })
  }

  for (const quality of ['0', '101']) {
    it(`refuses quality=${quality} with 400 invalid_option`, async () => {
      const body = await expectProblem(await compress(fixture(PHOTO), { quality }), 'invalid_option', 400)
      expect(body.option).toBe('quality')
    })
  }

  it.each([
    [{ quality: '101' }, 'quality: must be at most 100'],
    [{ saturation: 'high' }, 'saturation: must be a number'],
    [{ rotate: '45' }, 'rotate: must be one of 0, 90, 180, 270'],
  ])('says in plain words what %o must be', async (query, detail) => {
    const body = await expectProblem(await compress(fixture(PHOTO), query), 'invalid_option', 400)
    expect(body.detail).toBe(detail)
  })

  it('refuses an unknown option with 400 naming it', async () => {
    const body = await expectProblem(await compress(fixture(PHOTO), { qualty: 80 }), 'invalid_option', 400)
    expect(body.option).toBe('qualty')
    expect(body.detail).toContain('qualty')
  })

  it('refuses an option given twice with 400 naming it', async () => {
    const body = await expectProblem(await compress(fixture(PHOTO), 'quality=50&quality=60'), 'invalid_option', 400)
    expect(body.option).toBe('quality')
  })

  it.each(['brightness', 'saturation', 'width', 'gravity', 'format'])('refuses an empty %s with 400 naming it, rather than reading it as 0', async (option) => {
    const body = await expectProblem(await compress(fixture(PHOTO), `${option}=`), 'invalid_option', 400)
    expect(body.option).toBe(option)
    expect(body.detail).toContain('empty value')
  })

  it('refuses an unknown format with 400 invalid_option', async () => {
    const body = await expectProblem(await compress(fixture(PHOTO), { format: 'bmp' }), 'invalid_option', 400)
    expect(body.option).toBe('format')
  })

  it('accepts format=jpg as jpeg', async () => {
    const res = await compress(fixture('photo.png'), { format: 'jpg' })
    expect((await decode(await okBytes(res))).format).toBe('jpeg')
    expect(res.headers.get('content-type')).toBe('image/jpeg')
  })

  it('keeps the aspect ratio with width alone', async () => {
    expect(await dims(PHOTO, { width: 240 })).toEqual([240, 150])
  })

  it('keeps the aspect ratio with height alone', async () => {
    expect(await dims(PHOTO, { height: 100 })).toEqual([160, 100])
  })

  const FITS: Record<string, [number, number]> = {
    inside: [200, 125],
    cover: [200, 200],
    contain: [200, 200],
    fill: [200, 200],
  }
  for (const [fit, expected] of Object.entries(FITS)) {
    it(`gives ${expected.join('x')} for fit=${fit} into 200x200`, async () => {
      expect(await dims(PHOTO, { width: 200, height: 200, fit })).toEqual(expected)
    })
  }

  it('defaults to fit=inside', async () => {
    expect(await dims(PHOTO, { width: 200, height: 200 })).toEqual([200, 125])
  })

  it('refuses an unknown fit with 400 invalid_option', async () => {
    await expectProblem(await compress(fixture(PHOTO), { width: 200, height: 200, fit: 'stretch' }), 'invalid_option', 400)
  })

  it('does not upscale without enlarge', async () => {
    expect(await dims(PHOTO, { width: 1000 })).toEqual([480, 300])
  })

  it('covers the box exactly when enlarging a small image with fit=cover', async () => {
    const res = await compress(await greyPng(64, 16), { width: 400, height: 300, fit: 'cover', enlarge: true, format: 'png' })
    const { image } = await decode(await okBytes(res))
    expect([image.width, image.height]).toEqual([400, 300])
  })

  it('upscales with enlarge=true', async () => {
    expect(await dims(PHOTO, { width: 960, enlarge: true })).toEqual([960, 600])
  })

  it('crops the centre for fit=cover', async () => {
    // Cover into 300x300 keeps the centre 300x300 of the 480x300 source at scale 1 (no resampling),
    // so the PNG answer is exactly the source's columns 90..389.
    const src = await decode(fixture('photo.png'))
    const res = await compress(fixture('photo.png'), { width: 300, height: 300, fit: 'cover' })
    const out = (await decode(await okBytes(res))).image
    expect([out.width, out.height]).toEqual([300, 300])
    for (const [x, y] of [[0, 0], [150, 150], [299, 299], [17, 250]] as const) {
      expect(pixel(out, x, y)).toEqual(pixel(src.image, x + 90, y))
    }
  })

  it('pads contain with the background colour for jpeg', async () => {
    const res = await compress(fixture(PHOTO), { width: 200, height: 200, fit: 'contain', background: 'ff0000' })
    const out = (await decode(await okBytes(res))).image
    expect([out.width, out.height]).toEqual([200, 200])
    // The picture is 200x125, centred: bands of 37-38 rows above and below. JPEG keeps flat colour
    // within a few levels.
    for (const [x, y] of [[0, 0], [199, 0], [0, 199], [199, 199], [100, 10]] as const) {
      expect(colourDistance(pixel(out, x, y).slice(0, 3), [255, 0, 0]), `pixel ${x},${y}`).toBeLessThanOrEqual(8)
    }
    expect(colourDistance(pixel(out, 100, 100).slice(0, 3), [255, 0, 0])).toBeGreaterThan(40)
  })

  it('accepts a 3-digit background with #', async () => {
    const res = await compress(fixture(PHOTO), { width: 200, height: 200, fit: 'contain', background: '#00f' })
    const out = (await decode(await okBytes(res))).image
    expect(colourDistance(pixel(out, 0, 0).slice(0, 3), [0, 0, 255])).toBeLessThanOrEqual(8)
  })

  it('pads contain with transparency for png', async () => {
    const res = await compress(fixture('photo.png'), { width: 200, height: 200, fit: 'contain', background: 'ff0000' })
    const out = (await decode(await okBytes(res))).image
    expect([out.width, out.height]).toEqual([200, 200])
    for (const [x, y] of [[0, 0], [199, 0], [0, 199], [199, 199]] as const) expect(pixel(out, x, y)[3]).toBe(0)
    expect(pixel(out, 100, 100)[3]).toBe(255)
  })

  it('composites alpha.png over the background when flattening to jpeg', async () => {
    // alpha.png is mostly low alpha (75% of pixels under 32), so the background dominates the answer:
    // it must match the input composited over the requested colour, and not the input over white.
    const src = (await decode(fixture('alpha.png'))).image
    const res = await compress(fixture('alpha.png'), { format: 'jpeg', background: '0000ff' })
    const out = (await decode(await okBytes(res))).image
    expect(psnr(flattenOver(src, [0, 0, 255]), out)).toBeGreaterThan(35)
    expect(psnr(flattenOver(src, [255, 255, 255]), out)).toBeLessThan(15)
  })

  it('turns a fully transparent region into the background colour for jpeg', async () => {
    // alpha.gif: the bottom half (rows 128-255) is the transparent palette index.
    const src = (await decode(fixture('alpha.gif'))).image
    expect(pixel(src, 128, 192)[3]).toBe(0)
    for (const [background, rgb] of [['0000ff', [0, 0, 255]], ['ffff00', [255, 255, 0]]] as const) {
      const res = await compress(fixture('alpha.gif'), { format: 'jpeg', background }, { contentType: 'image/gif' })
      const out = (await decode(await okBytes(res))).image
      for (const [x, y] of [[128, 192], [5, 250], [250, 140]] as const) {
        expect(colourDistance(pixel(out, x, y).slice(0, 3), rgb), `background ${background} at ${x},${y}`).toBeLessThanOrEqual(8)
      }
    }
  })

  for (const background of ['red', '12345', 'gggggg', '#ff00000']) {
    it(`refuses background=${background} with 400 invalid_option`, async () => {
      const body = await expectProblem(
        await compress(fixture(PHOTO), { width: 200, height: 200, fit: 'contain', background }),
        'invalid_option',
        400,
      )
      expect(body.option).toBe('background')
    })
  }

  for (const [name, value] of [['width', '0'], ['width', '16385'], ['height', 'abc'], ['enlarge', 'yes'], ['lossless', 'maybe']]) {
    it(`refuses ${name}=${value} with 400 invalid_option`, async () => {
      const body = await expectProblem(await compress(fixture(PHOTO), { [name!]: value! }), 'invalid_option', 400)
      expect(body.option).toBe(name)
    })
  }
})

describe('AVIF effort caps', () => {
  // Effort 9 was allowed up to 1 MP, and a 0.9 MP photo at effort 9 took 92 s of CPU against
  // wrangler.toml's 30 s. It is now allowed up to 0.1 MP; the next tier, up to 0.25 MP, allows 7.
  it('encodes a 317x316 AVIF (just over 0.1 MP) at effort 7 when asked for effort 9, and says so', async () => {
    const res = await compress(await greyPng(317, 316), { format: 'avif', effort: 9, response: 'json' }, { contentType: 'image/png' })
    expect(res.status).toBe(200)
    expect(res.headers.get('x-effort')).toBe('7')
    const body = (await res.json()) as { effort: number; image: string }
    expect(body.effort).toBe(7)
    expect((await decode(base64ToBytes(body.image))).format).toBe('avif')
  })
})

describe('PNG effort caps', () => {
  // oxipng had no cap by size: a 1.9 MP graphic took 60 s of CPU at effort 9 against cpu_ms's 30 s.
  it('encodes a 1800x1800 PNG at effort 5 when asked for effort 9, losslessly, and says so', async () => {
    const input = await greyPng(1800, 1800)
    const res = await compress(input, { format: 'png', effort: 9 }, { contentType: 'image/png' })
    expect(res.headers.get('x-effort')).toBe('5')
    const out = await decode(await okBytes(res))
    expect([out.format, out.image.width, out.image.height]).toEqual(['png', 1800, 1800])
    // Compared byte by byte: toEqual's diff of two 13 MB arrays runs the test worker out of heap.
    expect(firstDifference(new Uint8Array(out.image.data.buffer, out.image.data.byteOffset, out.image.data.length), new Uint8Array((await decode(input)).image.data))).toBe(-1)
  })

  it('keeps the requested effort for an output inside its tier', async () => {
    const res = await compress(await greyPng(600, 600), { format: 'png', effort: 9 }, { contentType: 'image/png' })
    await okBytes(res)
    expect(res.headers.get('x-effort')).toBe('9')
  })
})

describe('WebP effort caps', () => {
  // libwebp's method 6 took 17-22 s per MP on a noisy graphic: effort 6-9 is kept for outputs up to 0.45 MP.
  it('encodes a 700x700 WebP (0.49 MP) at effort 5 when asked for effort 9, and says so', async () => {
    const res = await compress(await greyPng(700, 700), { format: 'webp', effort: 9 }, { contentType: 'image/png' })
    expect(res.headers.get('x-effort')).toBe('5')
    const out = await decode(await okBytes(res))
    expect([out.format, out.image.width, out.image.height]).toEqual(['webp', 700, 700])
  })
})
