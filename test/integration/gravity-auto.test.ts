/**
 * gravity=auto (src/pipeline/smartcrop.ts): the crop keeps what draws the eye, found on a small preview. A textured
 * subject (a piece of a photo) pasted off-centre on a plain, a smooth gradient or a faintly noisy background must be
 * inside the window `X-Crop` names in at least 90 % of the cases, where the centre crop keeps it in none of them.
 */
import { describe, expect, it } from 'vitest'
import { compress, okBytes } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import { decode, pngOf } from '../helpers/image'

type Background = (x: number, y: number) => [number, number, number]

const BACKGROUNDS: Record<string, Background> = {
  plain: () => [90, 110, 130],
  gradient: (x, y) => [60 + x / 4, 90 + y / 2, 140 - x / 5],
  noise: (x, y) => {
    const n = ((x * 7919 + y * 104729) % 9) - 4
    return [120 + n, 120 + n, 110 + n]
  },
}

/** A `width` x `height` canvas of `background` with a 40x40 piece of the test photo at (left, top). */
async function scene(subject: ImageData, width: number, height: number, left: number, top: number, background: Background): Promise<Uint8Array> {
  const data = new Uint8ClampedArray(width * height * 4)
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) data.set([...background(x, y), 255], (y * width + x) * 4)
  for (let y = 0; y < 40; y++) for (let x = 0; x < 40; x++) data.set(subject.data.subarray(((30 + y) * subject.width + 60 + x) * 4, ((30 + y) * subject.width + 61 + x) * 4), ((top + y) * width + left + x) * 4)
  return pngOf(new ImageData(data, width, height))
}

const inside = (crop: number[], left: number, top: number) => left >= crop[0]! && top >= crop[1]! && left + 40 <= crop[0]! + crop[2]! && top + 40 <= crop[1]! + crop[3]!

describe('gravity=auto', () => {
  it('keeps an off-centre subject in the crop in at least 90 % of scenes, where the centre crop keeps none', async () => {
    const subject = (await decode(fixture('transform/source.png'))).image
    // across: a 300x120 scene to a 120x120 cover (the centre window is x 90-210); down: 120x300 to 120x120
    const places: Array<[number, number, number, number]> = []
    for (const left of [5, 30, 45, 215, 240, 255]) places.push([300, 120, left, 40])
    for (const top of [10, 40, 230, 255]) places.push([120, 300, 40, top])
    let kept = 0
    let centreKept = 0
    let total = 0
    const misses: string[] = []
    for (const [name, background] of Object.entries(BACKGROUNDS)) {
      for (const [width, height, left, top] of places) {
        const res = await compress(await scene(subject, width, height, left, top, background), { format: 'png', width: 120, height: 120, fit: 'cover', gravity: 'auto' })
        await okBytes(res)
        const crop = res.headers.get('x-crop')!.split(',').map(Number)
        expect(crop.slice(2)).toEqual([120, 120])
        const centre = [Math.floor((width - 120) / 2), Math.floor((height - 120) / 2), 120, 120]
        total++
        if (inside(crop, left, top)) kept++
        else misses.push(`${name} ${width}x${height} subject at ${left},${top}: crop ${crop.join(',')}`)
        if (inside(centre, left, top)) centreKept++
      }
    }
    expect(kept / total, misses.join('; ')).toBeGreaterThanOrEqual(0.9)
    expect(centreKept).toBe(0)
  })

  it('crops a flat image at its centre, and says so in the JSON answer too', async () => {
    const data = new Uint8ClampedArray(300 * 120 * 4)
    for (let i = 0; i < 300 * 120; i++) data.set([90, 110, 130, 255], i * 4)
    const res = await compress(await pngOf(new ImageData(data, 300, 120)), { format: 'png', width: 120, height: 120, fit: 'cover', gravity: 'auto', response: 'json' })
    const body = (await res.json()) as { crop: { x: number; y: number; width: number; height: number } }
    expect(body.crop).toEqual({ x: 90, y: 0, width: 120, height: 120 })
  })

  it('a JPEG to a small cover is the window X-Crop names, pixel for pixel (the pass keeps its decode)', async () => {
    // photo.jpg (480x300) to 100x100: the conversion decodes at 1/2, which the pass decodes and keeps
    const res = await compress(fixture('photo.jpg'), { format: 'png', width: 100, height: 100, fit: 'cover', gravity: 'auto' })
    const auto = (await decode(await okBytes(res))).image
    const [x, y, width, height] = res.headers.get('x-crop')!.split(',').map(Number) as [number, number, number, number]
    expect([y, width, height]).toEqual([0, 300, 300])
    // the same window cut by trim (top;right;bottom;left), decoded afresh
    const trim = `${y};${480 - x - width};${300 - y - height};${x}`
    const trimmed = (await decode(await okBytes(await compress(fixture('photo.jpg'), { format: 'png', width: 100, height: 100, fit: 'cover', trim })))).image
    expect([auto.width, auto.height]).toEqual([100, 100])
    expect(Buffer.from(auto.data).equals(Buffer.from(trimmed.data))).toBe(true)
  })

  it('places a thumbnail’s window on a preview of 256 px, as a larger cover’s', async () => {
    // large.jpg (1200x750): a 50 px cover decodes at 1/8 (150x94), too small for the preview, which decodes at 1/4 as
    // the 120 px cover's conversion does
    const cropAt = async (side: number) => {
      const res = await compress(fixture('large.jpg'), { format: 'png', width: side, height: side, fit: 'cover', gravity: 'auto' })
      await okBytes(res)
      return res.headers.get('x-crop')!.split(',').map(Number) as [number, number, number, number]
    }
    const [thumb, larger] = [await cropAt(50), await cropAt(120)]
    expect(thumb.slice(1)).toEqual([0, 750, 750])
    // (one preview pixel is about 5 px of the image)
    expect(Math.abs(thumb[0] - larger[0])).toBeLessThanOrEqual(10)
  })

  it('names the window in pixels of the trimmed image', async () => {
    // photo.jpg (480x300) less 100 px on the left is 380x300: a 100 px cover keeps a 300x300 window of it
    const res = await compress(fixture('photo.jpg'), { format: 'png', width: 100, height: 100, fit: 'cover', gravity: 'auto', trim: '0;0;0;100' })
    const auto = (await decode(await okBytes(res))).image
    const [x, y, width, height] = res.headers.get('x-crop')!.split(',').map(Number) as [number, number, number, number]
    expect([y, width, height]).toEqual([0, 300, 300])
    expect(x).toBeLessThanOrEqual(80)
    // the same window trimmed from the whole photo
    const trim = `0;${380 - x - width};0;${100 + x}`
    const trimmed = (await decode(await okBytes(await compress(fixture('photo.jpg'), { format: 'png', width: 100, height: 100, fit: 'cover', trim })))).image
    expect(Buffer.from(auto.data).equals(Buffer.from(trimmed.data))).toBe(true)
  })

  it('leaves X-Crop out when nothing is cropped', async () => {
    const res = await compress(fixture('transform/source.png'), { format: 'png', width: 80, gravity: 'auto' })
    await okBytes(res)
    expect(res.headers.get('x-crop')).toBeNull()
  })
})
