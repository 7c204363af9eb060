/**
 * Presets (PRESETS, `/img/preset=<name>/...`) and UNSIGNED_URLS=presets, with miniflare's real R2: a public site's
 * unsigned URLs may name a preset, a format, a listed width and a listed quality, and nothing else (403
 * unsigned_not_allowed), while signed URLs keep every option.
 */
import { env } from 'cloudflare:test'
import { beforeAll, describe, expect, it } from 'vitest'
import { signPath } from '../../src/delivery/sign'
import { expectProblem, MIME, okBytes } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import { decode } from '../helpers/image'
import { callWorker } from '../helpers/worker'

const PRESETS = 'thumb=width:200,height:200,fit:cover; hero=width:400,format:webp'
const KEY = 'presets-test-signing-key'
const img = (path: string, vars: Record<string, string> = {}, headers: Record<string, string> = {}) =>
  callWorker(path, { headers }, { PRESETS, ...vars })
const size = async (res: Response) => {
  const { format, image } = await decode(await okBytes(res))
  return [format, image.width, image.height]
}

beforeAll(async () => {
  await env.IMAGES.put('presets/photo.jpg', fixture('photo.jpg')) // 480x300
})

describe('presets', () => {
  it('stand for their options, alone or with options of the URL laid over them', async () => {
    expect(await size(await img('/img/preset=thumb/presets/photo.jpg'))).toEqual(['jpeg', 200, 200])
    expect(await size(await img('/img/preset=thumb,format=png/presets/photo.jpg'))).toEqual(['png', 200, 200])
    expect(await size(await img('/img/preset=hero,width=200/presets/photo.jpg'))).toEqual(['webp', 200, 125])
  })

  it('are the same variant as their options spelled out', async () => {
    const named = await img('/img/preset=thumb,format=webp/presets/photo.jpg')
    await okBytes(named)
    const spelled = await img('/img/fit=cover,width=200,height=200,format=webp/presets/photo.jpg')
    expect([spelled.headers.get('cache-status'), spelled.headers.get('etag')]).toEqual(['imgedge; hit', named.headers.get('etag')])
  })

  it('are published by /api/formats with what unsigned URLs may name', async () => {
    const { delivery } = (await (await callWorker('/api/formats', {}, { PRESETS, UNSIGNED_URLS: 'presets', UNSIGNED_WIDTHS: '640,320' })).json()) as { delivery: unknown }
    expect(delivery).toEqual({
      presets: { thumb: { width: '200', height: '200', fit: 'cover' }, hero: { width: '400', format: 'webp' } },
      unsignedUrls: 'presets',
      unsignedWidths: [320, 640],
      unsignedQualities: [75],
    })
  })

  it('refuses an unknown preset and a PRESETS that does not parse', async () => {
    const problem = await expectProblem(await img('/img/preset=huge/presets/photo.jpg'), 'invalid_option', 400)
    expect([problem.option, problem.detail]).toEqual(['preset', 'preset: no preset "huge" (PRESETS has thumb, hero).'])
    await expectProblem(await img('/img/preset=thumb/presets/photo.jpg', { PRESETS: 'thumb=width:0' }), 'internal_error', 500)
    await expectProblem(await img('/img/_/presets/photo.jpg', { PRESETS: 'thumb=width' }), 'internal_error', 500)
  })
})

describe('UNSIGNED_URLS=presets', () => {
  const presetsOnly = { UNSIGNED_URLS: 'presets', SIGNING_KEY: KEY }
  const BROWSER = 'image/avif,image/webp,*/*'

  it('serves unsigned presets, formats, listed widths and qualities (Next.js loader URLs as they are)', async () => {
    expect(await size(await img('/img/preset=thumb/presets/photo.jpg', presetsOnly))).toEqual(['jpeg', 200, 200])
    expect(await size(await img('/img/preset=thumb,format=auto/presets/photo.jpg', presetsOnly, { Accept: BROWSER }))).toEqual(['avif', 200, 200])
    expect(await size(await img('/img/width=256,format=auto,quality=75/presets/photo.jpg', presetsOnly, { Accept: BROWSER }))).toEqual(['avif', 256, 160])
    expect(await size(await img('/img/preset=hero,width=384/presets/photo.jpg', presetsOnly))).toEqual(['webp', 384, 240])
    expect(await size(await img('/img/_/presets/photo.jpg', presetsOnly))).toEqual(['jpeg', 480, 300])
  })

  it('refuses any other unsigned option with 403 unsigned_not_allowed, naming it and what is allowed', async () => {
    const problem = await expectProblem(await img('/img/width=333/presets/photo.jpg', presetsOnly), 'unsigned_not_allowed', 403)
    expect(problem).toMatchObject({ option: 'width', presets: ['thumb', 'hero'], qualities: [75] })
    expect(problem.widths).toContain(640)
    expect(problem.detail).toContain('width=333 is none of them')
    for (const [options, option] of [['quality=80', 'quality'], ['height=100', 'height'], ['preset=thumb,fit=contain', 'fit'], ['width=640,quality=auto', 'quality'], ['preset=thumb,effort=9', 'effort']]) {
      expect((await expectProblem(await img(`/img/${options}/presets/photo.jpg`, presetsOnly), 'unsigned_not_allowed', 403)).option).toBe(option)
    }
    const lists = { ...presetsOnly, UNSIGNED_WIDTHS: '100, 333', UNSIGNED_QUALITIES: '50,60' }
    expect(await size(await img('/img/width=333,quality=60/presets/photo.jpg', lists))).toEqual(['jpeg', 333, 208])
    await expectProblem(await img('/img/width=640/presets/photo.jpg', lists), 'unsigned_not_allowed', 403)
  })

  it('lets signed URLs ask for anything, and treats a signature without SIGNING_KEY as none', async () => {
    expect(await size(await img(await signPath('/img/width=333,height=100,fit=fill/presets/photo.jpg', KEY), presetsOnly))).toEqual(['jpeg', 333, 100])
    const forged = `/img/width=333/presets/photo.jpg?sig=${'A'.repeat(43)}`
    await expectProblem(await img(forged, presetsOnly), 'invalid_signature', 403)
    await expectProblem(await img(forged, { UNSIGNED_URLS: 'presets' }), 'unsigned_not_allowed', 403)
    expect(await size(await img('/img/preset=thumb/presets/photo.jpg', { UNSIGNED_URLS: 'presets' }))).toEqual(['jpeg', 200, 200])
  })

  it('needs no API key under REQUIRE_API_KEY for unsigned presets, but does for UNSIGNED_URLS=all', async () => {
    const required = { ...presetsOnly, REQUIRE_API_KEY: 'true' }
    expect(await size(await img('/img/preset=thumb/presets/photo.jpg', required))).toEqual(['jpeg', 200, 200])
    await expectProblem(await img('/img/width=333/presets/photo.jpg', required), 'unsigned_not_allowed', 403)
    await expectProblem(await img('/img/width=333/presets/photo.jpg', { ...required, UNSIGNED_URLS: 'all' }), 'api_key_required', 401)
  })

  it('UNSIGNED_URLS=none refuses unsigned URLs even without SIGNING_KEY; all serves them beside a key', async () => {
    await expectProblem(await img('/img/preset=thumb/presets/photo.jpg', { UNSIGNED_URLS: 'none' }), 'signature_required', 403)
    const res = await img('/img/width=333/presets/photo.jpg', { UNSIGNED_URLS: 'all', SIGNING_KEY: KEY })
    expect(res.headers.get('content-type')).toBe(MIME.jpeg)
    expect(await size(res)).toEqual(['jpeg', 333, 208])
  })
})
