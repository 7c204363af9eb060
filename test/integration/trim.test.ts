/**
 * trim (src/pipeline/stages.ts): pixels cut from each edge before the turn and the resize, as one window with the
 * crop, exactly as sharp's extract (test/fixtures/transform/); and trim=border, the box inside a uniform border found
 * by a row pass over the pixels (wasm/lean/op_trim.c), within a pixel of where the picture was pasted.
 */
import { describe, expect, it } from 'vitest'
import { compress, expectProblem, okBytes } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import { decode, pngOf, psnr } from '../helpers/image'

const source = () => fixture('transform/source.png')

async function answer(bytes: Uint8Array, query: Record<string, string | number>): Promise<ImageData> {
  return (await decode(await okBytes(await compress(bytes, { format: 'png', ...query })))).image
}

/** `picture` pasted at (left, top) on a `width` x `height` canvas of `colour`, each border pixel off by up to `noise` levels. */
function pasted(picture: ImageData, width: number, height: number, left: number, top: number, colour: readonly number[], noise = 0): ImageData {
  const data = new Uint8ClampedArray(width * height * 4)
  for (let i = 0; i < width * height; i++) {
    const jitter = noise ? ((i * 7919) % (2 * noise + 1)) - noise : 0
    data.set([colour[0]! + jitter, colour[1]! - jitter, colour[2]! + jitter, 255], i * 4)
  }
  for (let y = 0; y < picture.height; y++) data.set(picture.data.subarray(y * picture.width * 4, (y + 1) * picture.width * 4), ((top + y) * width + left) * 4)
  return new ImageData(data, width, height)
}

describe('trim', () => {
  it("cuts top;right;bottom;left exactly as sharp's extract", async () => {
    const out = await answer(source(), { trim: '5;10;15;20' })
    expect(psnr((await decode(fixture('transform/trim-5-10-15-20.png'))).image, out)).toBe(Number.POSITIVE_INFINITY)
  })

  it('cuts before rotating: the edges are those of the upright image', async () => {
    const out = await answer(source(), { trim: '5;10;15;20', rotate: 90 })
    expect(psnr((await decode(fixture('transform/trim-5-10-15-20-rotate-90.png'))).image, out)).toBe(Number.POSITIVE_INFINITY)
  })

  it('cuts before resizing and cropping: width, height and gravity apply to what is left', async () => {
    const out = await answer(source(), { trim: '5;10;15;20', width: 65 })
    expect([out.width, out.height]).toEqual([65, 40])
    const cover = await answer(source(), { trim: '0;0;0;60', width: 50, height: 50, fit: 'cover', gravity: 'left' })
    // the 100x100 window starts where the trim left the image: at x 60 of the source, the right-hand side
    const right = (await decode(fixture('transform/cover-50x50-0.8x0.3.png'))).image
    expect(psnr(right, cover)).toBeGreaterThan(45)
  })

  it('refuses a trim that leaves nothing, and a malformed one, with 400 invalid_option', async () => {
    const problem = await expectProblem(await compress(source(), { trim: '50;0;50;0' }), 'invalid_option', 400)
    expect(problem.detail).toContain('leaves nothing')
    expect(problem.errors).toEqual([{ option: 'trim', message: problem.detail }])
    for (const trim of ['1;2;3', 'a;b;c;d', '-1;0;0;0', 'borders', 'border:256', 'border:300', 'border:-1', 'border:01x']) await expectProblem(await compress(source(), { trim }), 'invalid_option', 400)
  })

  it('finds the box inside a uniform border within a pixel, and cuts it', async () => {
    const picture = (await decode(source())).image
    const framed = await pngOf(pasted(picture, 211, 147, 17, 23, [32, 48, 64]))
    const out = await answer(framed, { trim: 'border' })
    expect(Math.abs(out.width - 160)).toBeLessThanOrEqual(1)
    expect(Math.abs(out.height - 100)).toBeLessThanOrEqual(1)
    expect(psnr(picture, out)).toBe(Number.POSITIVE_INFINITY)
  })

  it('takes a noisy border as border within its tolerance, and not beyond it', async () => {
    // (each border pixel within 8 levels of the top left one)
    const picture = (await decode(source())).image
    const framed = await pngOf(pasted(picture, 200, 140, 20, 20, [200, 200, 200], 4))
    const within = await answer(framed, { trim: 'border:10' })
    expect([within.width, within.height]).toEqual([160, 100])
    const beyond = await answer(framed, { trim: 'border:2' })
    expect([beyond.width, beyond.height]).toEqual([200, 140])
  })

  it('takes a lossy margin’s ringing along the picture as border, as sharp’s trim does', async () => {
    // photo.jpg (480x300) in a 40 px white margin, as a JPEG: its 8x8 blocks ring a few pixels into the margin, past
    // the default tolerance; a pixel counts where most of its 3x3 neighbours differ, as in sharp's trim (each pixel on
    // its own: 483x307)
    const padded = await okBytes(await compress(fixture('photo.jpg'), { width: 560, height: 380, fit: 'contain', background: 'ffffff', format: 'jpeg', quality: 80 }))
    const loose = await answer(padded, { trim: 'border' })
    expect(loose.width).toBeGreaterThanOrEqual(480)
    expect(loose.height).toBeGreaterThanOrEqual(300)
    expect(loose.width).toBeLessThanOrEqual(483)
    expect(loose.height).toBeLessThanOrEqual(303)
    const tight = await answer(padded, { trim: 'border:30' })
    expect(Math.abs(tight.width - 480)).toBeLessThanOrEqual(2)
    expect(Math.abs(tight.height - 300)).toBeLessThanOrEqual(2)
  })

  it('keeps an image of one colour whole', async () => {
    const flat = await pngOf(pasted(new ImageData(1, 1), 30, 20, 0, 0, [9, 9, 9]))
    const out = await answer(flat, { trim: 'border' })
    expect([out.width, out.height]).toEqual([30, 20])
  })
})
