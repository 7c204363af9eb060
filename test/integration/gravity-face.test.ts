/**
 * gravity=face on real portraits (test/fixtures/subject/, the face's box marked by hand before any detector ran):
 * where the centre crop cuts the face, the window `X-Crop` names keeps all of it, centred on it as far as the image's
 * edges allow; a portrait stored on its side is turned first; a detection that fails leaves the next one working;
 * without a face the window is gravity=auto's.
 */
import { describe, expect, it } from 'vitest'
import { detectFaces } from '../../wasm'
import { compress, okBytes } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import { decode } from '../helpers/image'

type Box = { x: number; y: number; width: number; height: number }

/** Each portrait's face, from the hat's brim or the hair to the chin (scripts/make-subject-fixtures.mjs). */
const FACES: Record<string, Box> = {
  'subject/astronaut.jpg': { x: 87, y: 8, width: 90, height: 97 },
  'subject/hopper.jpg': { x: 77, y: 66, width: 111, height: 100 },
}

const inside = (box: Box, crop: Box) => box.x >= crop.x && box.y >= crop.y && box.x + box.width <= crop.x + crop.width && box.y + box.height <= crop.y + crop.height

const xCrop = (res: Response): Box => {
  const [x, y, width, height] = res.headers.get('x-crop')!.split(',').map(Number) as [number, number, number, number]
  return { x, y, width, height }
}

describe('gravity=face', () => {
  it.each([
    ['subject/astronaut.jpg', 300, 150],
    ['subject/hopper.jpg', 256, 144],
  ])('%s to %ix%i keeps the face the centre crop cuts', async (name, width, height) => {
    const source = await decode(fixture(name))
    const face = FACES[name]!
    const res = await compress(fixture(name), { format: 'png', width, height, fit: 'cover', gravity: 'face' })
    const out = await decode(await okBytes(res))
    expect([out.format, out.image.width, out.image.height]).toEqual(['png', width, height])
    const crop = xCrop(res)
    const centre = { x: Math.floor(source.image.width / 2 - crop.width / 2), y: Math.floor(source.image.height / 2 - crop.height / 2), width: crop.width, height: crop.height }
    expect(inside(face, centre), 'the centre crop should cut this face').toBe(false)
    expect(inside(face, crop), `crop ${Object.values(crop)} cuts the face at ${Object.values(face)}`).toBe(true)
  })

  it('centres the window on the face where the edges allow', async () => {
    const res = await compress(fixture('subject/hopper.jpg'), { format: 'png', width: 256, height: 144, fit: 'cover', gravity: 'face' })
    await okBytes(res)
    const crop = xCrop(res)
    const face = FACES['subject/hopper.jpg']!
    const middle = crop.y + crop.height / 2
    expect(middle).toBeGreaterThan(face.y + face.height * 0.3)
    expect(middle).toBeLessThan(face.y + face.height * 0.7)
  })

  it('finds the face of a portrait stored on its side, turned upright by rotate', async () => {
    // the portrait turned on its side (as a camera stores it), then turned back: the face is found upright, and the
    // window is in pixels of the turned image
    const sideways = await okBytes(await compress(fixture('subject/hopper.jpg'), { format: 'jpeg', quality: 95, rotate: 270 }))
    const res = await compress(sideways, { format: 'png', width: 256, height: 144, fit: 'cover', gravity: 'face', rotate: 90 })
    const out = await decode(await okBytes(res))
    expect([out.image.width, out.image.height]).toEqual([256, 144])
    const crop = xCrop(res)
    expect([crop.width, crop.height]).toEqual([256, 144])
    expect(inside(FACES['subject/hopper.jpg']!, crop), `crop ${Object.values(crop)} cuts the face`).toBe(true)
  })

  it('finds faces again after a detection that ran out of its memory', async () => {
    // a 600x600 picture takes the CNN past FACES_MAX_MIB: it traps, and the isolate's detector is made again
    expect(detectFaces(new ImageData(600, 600))).toEqual([])
    const res = await compress(fixture('subject/hopper.jpg'), { format: 'png', width: 256, height: 144, fit: 'cover', gravity: 'face' })
    await okBytes(res)
    expect(inside(FACES['subject/hopper.jpg']!, xCrop(res))).toBe(true)
  })

  it("takes gravity=auto's window where it finds no face", async () => {
    const query = { format: 'png', width: 135, height: 240, fit: 'cover' }
    const face = await compress(fixture('subject/kite.jpg'), { ...query, gravity: 'face' })
    const auto = await compress(fixture('subject/kite.jpg'), { ...query, gravity: 'auto' })
    expect(await okBytes(face)).toEqual(await okBytes(auto))
    expect(face.headers.get('x-crop')).toBe(auto.headers.get('x-crop'))
  })
})
