/**
 * gravity=auto on real photos (test/fixtures/subject/, their subject's box marked by hand before the algorithm ran on
 * them): where the centre crop cuts the subject, the window `X-Crop` names keeps all of it. Replacing gravity=auto by
 * the centre fails every case. The wider measurement (42 photos, four ratios, three splits) is docs/results/gravity-auto.md.
 */
import { describe, expect, it } from 'vitest'
import { compress, okBytes } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import { decode } from '../helpers/image'

type Box = { x: number; y: number; width: number; height: number }

/** Each fixture's hand-marked subject (scripts/make-subject-fixtures.mjs prints them from scripts/data/subject-photos.json). */
const PHOTOS: Record<string, Box> = {
  'subject/aqua.jpg': { x: 260, y: 118, width: 148, height: 133 },
  'subject/ladybird.jpg': { x: 313, y: 132, width: 47, height: 51 },
  'subject/ladybird-crop.jpg': { x: 21, y: 31, width: 75, height: 81 },
  'subject/bird-toy-tall.jpg': { x: 30, y: 175, width: 159, height: 80 },
  'subject/kite.jpg': { x: 308, y: 90, width: 35, height: 32 },
}

/** The cover boxes asked for, and the photos and ratios where the centre crop cuts the subject. */
const CASES: Array<[string, number, number]> = [
  ['subject/aqua.jpg', 200, 200],
  ['subject/aqua.jpg', 160, 200],
  ['subject/ladybird.jpg', 135, 240],
  ['subject/ladybird-crop.jpg', 135, 240],
  // lamps above a toy bird: their warm glow is skin-coloured, but fills too much of the picture to be skin
  ['subject/bird-toy-tall.jpg', 192, 108],
  // a small kite in a sky with clouds: its colour stands out from the blue around it, where the clouds have more edges
  ['subject/kite.jpg', 135, 240],
]

const inside = (box: Box, crop: Box) => box.x >= crop.x && box.y >= crop.y && box.x + box.width <= crop.x + crop.width && box.y + box.height <= crop.y + crop.height

/** Pixels a ladybird's red shell would give (the photos' greens, blues and whites have none). */
function redPixels({ data }: ImageData): number {
  let count = 0
  for (let i = 0; i < data.length; i += 4) if (data[i]! > 150 && data[i + 1]! < 90 && data[i + 2]! < 90) count++
  return count
}

describe('gravity=auto on real photos', () => {
  it.each(CASES)('%s to %ix%i keeps the subject the centre crop cuts', async (name, width, height) => {
    const source = await decode(fixture(name))
    const box = PHOTOS[name]!
    const res = await compress(fixture(name), { format: 'png', width, height, fit: 'cover', gravity: 'auto' })
    const out = await decode(await okBytes(res))
    expect([out.image.width, out.image.height]).toEqual([width, height])
    const [x, y, w, h] = res.headers.get('x-crop')!.split(',').map(Number) as [number, number, number, number]
    const crop = { x, y, width: w, height: h }
    // the centre window of the same size, as gravity=center places it
    const centre = { x: Math.floor(source.image.width / 2 - w / 2), y: Math.floor(source.image.height / 2 - h / 2), width: w, height: h }
    expect(inside(box, centre), 'the centre crop should cut this subject').toBe(false)
    expect(inside(box, crop), `crop ${crop.x},${crop.y},${w},${h} cuts the subject at ${box.x},${box.y},${box.width},${box.height}`).toBe(true)
  })

  it('shows the ladybird (its red shell, three times as many pixels), of which the centre crop keeps an edge', async () => {
    const query = { format: 'png', width: 135, height: 240, fit: 'cover' }
    const auto = await decode(await okBytes(await compress(fixture('subject/ladybird.jpg'), { ...query, gravity: 'auto' })))
    const centre = await decode(await okBytes(await compress(fixture('subject/ladybird.jpg'), query)))
    expect(redPixels(auto.image)).toBeGreaterThan(2 * redPixels(centre.image))
  })
})
