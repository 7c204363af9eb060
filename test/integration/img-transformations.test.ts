/**
 * The transformations through GET /img: the path's options are POST /api/compress's (gravity's focal point, trim's
 * semicolons, rotate, blur), each a variant of its own (ETag), and a bad value is 400 invalid_option.
 */
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { expectProblem, okBytes } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import { decode } from '../helpers/image'
import { callWorker } from '../helpers/worker'

const img = (path: string) => callWorker(path, { method: 'GET', headers: {} }, {})

describe('GET /img with transformations', () => {
  it('takes them in the path, each a variant of its own', async () => {
    await env.IMAGES.put('t/source.png', fixture('transform/source.png'))
    const turned = await img('/img/rotate=90,trim=5;10;15;20,format=png/t/source.png')
    const out = await decode(await okBytes(turned))
    expect([out.image.width, out.image.height]).toEqual([80, 130])
    const focal = await img('/img/width=50,height=50,fit=cover,gravity=0.8x0.3,format=png/t/source.png')
    expect([(await decode(await okBytes(focal))).image.width]).toEqual([50])
    const centre = await img('/img/width=50,height=50,fit=cover,format=png/t/source.png')
    await okBytes(centre)
    expect(focal.headers.get('etag')).not.toBe(centre.headers.get('etag'))
    const blurred = await img('/img/blur=10,format=png/t/source.png')
    await okBytes(blurred)
    expect(blurred.headers.get('etag')).not.toBe(turned.headers.get('etag'))
  })

  it('refuses a bad value with 400 invalid_option', async () => {
    await env.IMAGES.put('t/source.png', fixture('transform/source.png'))
    await expectProblem(await img('/img/rotate=45/t/source.png'), 'invalid_option', 400)
    await expectProblem(await img('/img/gravity=middle/t/source.png'), 'invalid_option', 400)
  })
})
