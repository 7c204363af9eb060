import type {} from '../helpers/provided'
/**
 * GET /cdn-cgi/image/<options>/<source>: Cloudflare's URL form answered by /img: the same bytes and cache entry as the
 * equivalent /img URL, Cloudflare's names, aliases and fit meanings (contain never pads, pad does), the options imgedge
 * does not do refused by name, signed URLs, and format=json's facts and placeholder on both URL forms.
 */
import { env } from 'cloudflare:test'
import { thumbHashToApproximateAspectRatio, thumbHashToRGBA } from 'thumbhash'
import { describe, expect, inject, it } from 'vitest'
import { signPath } from '../../src/delivery/sign'
import guide from '../../docs/guide/cloudflare-urls.md?raw'
import { cloudflareTable, cloudflareToImg } from '../../src/dialects/cloudflare'
import { base64ToBytes, expectProblem, MIME, okBytes } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import { colourDistance, decode, pixel, translucentPng } from '../helpers/image'
import { callWorker, freshIp } from '../helpers/worker'

const get = (path: string, vars: Record<string, string> = {}, headers: Record<string, string> = {}, method = 'GET') => callWorker(path, { method, headers }, vars)
const put = (key: string, name: string) => env.IMAGES.put(key, fixture(name))

/** photo.jpg is 480x300. */
describe('GET /cdn-cgi/image', () => {
  it('answers the bytes, ETag and cache entry of the equivalent /img URL', async () => {
    await put('cf/cat.jpg', 'photo.jpg')
    const img = await get('/img/width=320,format=webp/cf/cat.jpg')
    const bytes = await okBytes(img)
    const cf = await get('/cdn-cgi/image/width=320,format=webp/cf/cat.jpg')
    expect(cf.headers.get('cache-status')).toBe('imgedge; hit')
    expect(cf.headers.get('etag')).toBe(img.headers.get('etag'))
    expect(await okBytes(cf)).toEqual(bytes)
    const out = await decode(bytes)
    expect([out.format, out.image.width, out.image.height]).toEqual(['webp', 320, 200])
    const page = await get('/cdn-cgi/image/width=320,format=webp/cf/cat.jpg', {}, { Origin: 'https://app.example' })
    expect([page.headers.get('access-control-allow-origin'), page.headers.get('access-control-expose-headers')]).toEqual(['*', img.headers.get('access-control-expose-headers')])
    const preflight = await get('/cdn-cgi/image/width=320/cf/cat.jpg', {}, { Origin: 'https://app.example', 'Access-Control-Request-Method': 'GET' }, 'OPTIONS')
    expect([preflight.status, preflight.headers.get('access-control-allow-origin')]).toEqual([204, '*'])
    await expectProblem(await get('/cdn-cgi/image/width=320/cf/cat.jpg', {}, {}, 'POST'), 'method_not_allowed', 405)
    const head = await get('/cdn-cgi/image/w=320,f=webp/cf/cat.jpg', {}, {}, 'HEAD')
    expect([head.status, head.headers.get('etag'), (await head.arrayBuffer()).byteLength]).toEqual([200, img.headers.get('etag'), 0])
  })

  it("counts against /img's quota, and its stored answers do not", async () => {
    await put('cf/quota.jpg', 'photo.jpg')
    const client = { 'CF-Connecting-IP': freshIp() }
    const limited = { RATE_LIMIT_ANON_PER_MINUTE: '1' }
    expect((await get('/img/width=61/cf/quota.jpg', limited, client)).status).toBe(200)
    expect((await get('/cdn-cgi/image/width=61/cf/quota.jpg', limited, client)).headers.get('cache-status')).toBe('imgedge; hit')
    await expectProblem(await get('/cdn-cgi/image/width=62/cf/quota.jpg', limited, client), 'rate_limited', 429)
  })

  it('maps names, aliases and values onto the same work as /img', async () => {
    await put('cf/same.jpg', 'photo.jpg')
    for (const [cloudflare, imgedge] of [
      ['w=200,h=100,q=high,f=jpeg', 'width=200,height=100,quality=90,format=jpeg'],
      ['width=200,quality=low,format=avif', 'width=200,quality=50,format=avif'],
      ['width=150,format=webp,quality=medium-high,compression=fast', 'width=150,format=webp,quality=80,effort=1'],
      ['width=150,metadata=copyright,quality=medium-low', 'width=150,metadata=copyright,quality=65'],
      ['width=100,format=webp,quality=100', 'width=100,format=webp,lossless=true'],
      ['width=100,upscale=interpolate', 'width=100'],
    ]) {
      const a = await okBytes(await get(`/cdn-cgi/image/${cloudflare}/cf/same.jpg`))
      const b = await okBytes(await get(`/img/${imgedge}/cf/same.jpg`))
      expect(a, cloudflare).toEqual(b)
    }
  })

  it("gives each fit Cloudflare's meaning: scale-down and crop never enlarge, contain never pads, pad does", async () => {
    await put('cf/fit.jpg', 'photo.jpg')
    const size = async (options: string) => {
      const { image, format } = await decode(await okBytes(await get(`/cdn-cgi/image/${options}/cf/fit.jpg`)))
      return [format, image.width, image.height]
    }
    expect(await size('width=200,height=200')).toEqual(['jpeg', 200, 125])
    expect(await size('width=1000,height=1000,fit=scale-down')).toEqual(['jpeg', 480, 300])
    expect(await size('width=1000,height=1000,fit=contain')).toEqual(['jpeg', 1000, 625])
    expect(await size('width=960,fit=contain')).toEqual(['jpeg', 960, 600])
    expect(await size('width=200,height=200,fit=cover')).toEqual(['jpeg', 200, 200])
    expect(await size('width=600,height=600,fit=cover')).toEqual(['jpeg', 600, 600])
    expect(await size('width=200,height=200,fit=crop')).toEqual(['jpeg', 200, 200])
    expect(await size('width=1000,height=1000,fit=crop')).toEqual(['jpeg', 480, 300])
    expect(await size('width=1000,height=200,fit=crop')).toEqual(['jpeg', 480, 200])
    expect(await size('width=1000,height=1000,fit=aspect-crop')).toEqual(['jpeg', 300, 300])
    expect(await size('width=200,height=100,fit=squeeze')).toEqual(['jpeg', 200, 100])
    expect(await size('width=1000,height=1000,fit=pad')).toEqual(['jpeg', 1000, 1000])
    const padded = (await decode(await okBytes(await get('/cdn-cgi/image/width=200,height=200,fit=pad,background=red,format=png/cf/fit.jpg')))).image
    expect([padded.width, padded.height]).toEqual([200, 200])
    expect(pixel(padded, 100, 2).slice(0, 3)).toEqual([255, 0, 0])
    const contained = (await decode(await okBytes(await get('/cdn-cgi/image/width=200,height=200,fit=contain,background=red,format=png/cf/fit.jpg')))).image
    expect([contained.width, contained.height]).toEqual([200, 125])
  })

  it('makes baseline-jpeg a baseline JPEG and jpeg a progressive one', async () => {
    await put('cf/scan.jpg', 'photo.jpg')
    const baseline = await decode(await okBytes(await get('/cdn-cgi/image/width=200,format=baseline-jpeg/cf/scan.jpg')))
    const progressive = await decode(await okBytes(await get('/cdn-cgi/image/width=200,format=jpeg/cf/scan.jpg')))
    expect([baseline.format, baseline.header.progressive, progressive.header.progressive]).toEqual(['jpeg', false, true])
  })

  it('reads CSS colours for background, and keeps one frame with anim=false', async () => {
    await put('cf/alpha.png', 'alpha.png')
    for (const colour of ['blue', '%230000ff', '%2300f', 'rgb(0,0,255)', 'rgba(0,0,255,1)']) {
      const { image } = await decode(await okBytes(await get(`/cdn-cgi/image/width=64,height=64,fit=pad,format=jpeg,background=${colour}/cf/alpha.png`)))
      expect(colourDistance(pixel(image, 0, 0).slice(0, 3), [0, 0, 255]), colour).toBeLessThan(12)
    }
    await put('cf/anim.gif', 'anim.gif')
    const still = await get('/cdn-cgi/image/width=100,anim=false,format=webp/cf/anim.gif')
    expect((await decode(await okBytes(still))).header.frames).toBe(1)
    const moving = await get('/cdn-cgi/image/width=100,anim=true,format=webp/cf/anim.gif')
    expect(moving.headers.get('x-frames')).toBe('10')
  })

  it("maps the transformations onto imgedge's: the same bytes as /img, the effect decoded", async () => {
    await put('cf/turn.jpg', 'photo.jpg')
    for (const options of ['gravity=left', 'g=0.2x0.8', 'gravity=auto', 'gravity=face', 'gravity=face,zoom=0', 'dpr=2', 'rotate=90', 'flip=hv', 'trim=10;20;30;40', 'sharpen=2', 'blur=8', 'brightness=1.4', 'contrast=0.6', 'gamma=2', 'saturation=0']) {
      const cf = await okBytes(await get(`/cdn-cgi/image/width=120,height=90,fit=cover,format=webp,${options}/cf/turn.jpg`))
      const imgOptions = options.replace(/^g=/, 'gravity=').replace(/;/g, '%3B').replace(',zoom=0', '')
      const img = await okBytes(await get(`/img/width=120,height=90,fit=cover,enlarge=true,format=webp,${imgOptions}/cf/turn.jpg`))
      expect(cf, options).toEqual(img)
    }
    const { image: turned } = await decode(await okBytes(await get('/cdn-cgi/image/width=100,rotate=90,format=png/cf/turn.jpg')))
    const { image: upright } = await decode(await okBytes(await get('/cdn-cgi/image/height=100,format=png/cf/turn.jpg')))
    expect([turned.width, turned.height]).toEqual([100, upright.width])
    expect((await decode(await okBytes(await get('/cdn-cgi/image/width=100,dpr=2,format=png/cf/turn.jpg')))).image.width).toBe(200)
  })

  it('refuses what it does not map by name: not mapped yet, not supported, unknown, bad values', async () => {
    await put('cf/refused.jpg', 'photo.jpg')
    for (const [options, option, status] of [['zoom=0.5', 'zoom', 'refused'], ['trim.left=20', 'trim.left', 'not mapped yet'], ['segment=foreground', 'segment', 'refused'], ['scq=50', 'scq', 'refused'], ['origin-auth=share-publicly', 'origin-auth', 'refused']]) {
      const problem = await expectProblem(await get(`/cdn-cgi/image/width=100,${options}/cf/refused.jpg`), 'unsupported_option', 400)
      expect([problem.option, problem.mapping]).toEqual([option, status])
    }
    for (const [options, option] of [['colour=red', 'colour'], ['fit=fill', 'fit'], ['format=gif', 'format'], ['fit=scale-up', 'fit'], ['quality=best', 'quality'], ['background=rgba(0,0,0,0.5)', 'background'], ['background=notacolour', 'background'], ['w=1,width=2', 'width'], ['upscale=generate', 'upscale'], ['compression=slow', 'compression'], ['zoom=2', 'zoom'], ['zoom=near', 'zoom'], ['zoom=0x0', 'zoom']]) {
      const problem = await expectProblem(await get(`/cdn-cgi/image/${options}/cf/refused.jpg`), 'invalid_option', 400)
      expect(problem.option, options).toBe(option)
    }
    await expectProblem(await get('/cdn-cgi/image/width=100/cf/refused.jpg?width=5'), 'invalid_option', 400)
    await expectProblem(await get('/cdn-cgi/image/width=100'), 'not_found', 404)
  })

  it('takes a path under ORIGIN_URL or an absolute URL on ALLOWED_SOURCES, and redirects with onerror=redirect', async () => {
    const origin = inject('originUrl')
    const under = await get('/cdn-cgi/image/width=100,format=png/cf.jpg', { ORIGIN_URL: `${origin}/images/` })
    expect((await decode(await okBytes(under))).image.width).toBe(100)
    const absolute = await get(`/cdn-cgi/image/width=120,format=webp/${origin}/images/cf.jpg`, { ALLOWED_SOURCES: origin })
    expect(absolute.headers.get('content-type')).toBe(MIME.webp)
    expect((await decode(await okBytes(absolute))).image.width).toBe(120)
    await expectProblem(await get(`/cdn-cgi/image/width=120/${origin}/images/cf.jpg`), 'source_not_allowed', 403)
    const redirected = await get('/cdn-cgi/image/width=100,onerror=redirect/broken', { ORIGIN_URL: `${origin}/images/` })
    expect([redirected.status, redirected.headers.get('location')]).toEqual([302, `${origin}/images/broken`])
  })

  it('checks a signature made over the /cdn-cgi path, with its expiry', async () => {
    await put('cf/signed.jpg', 'photo.jpg')
    const vars = { SIGNING_KEY: 'cdn-cgi-secret' }
    const path = '/cdn-cgi/image/width=90,format=webp/cf/signed.jpg'
    const signed = await get(await signPath(path, vars.SIGNING_KEY), vars)
    expect((await decode(await okBytes(signed))).image.width).toBe(90)
    const later = Math.floor(Date.now() / 1000) + 3600
    expect((await get(await signPath(path, vars.SIGNING_KEY, later), vars)).status).toBe(200)
    await expectProblem(await get(path, vars), 'signature_required', 403)
    const imgSig = (await signPath('/img/width=90,format=webp/cf/signed.jpg', vars.SIGNING_KEY)).split('?')[1]
    await expectProblem(await get(`${path}?${imgSig}`, vars), 'invalid_signature', 403)
    await expectProblem(await get(await signPath(path, vars.SIGNING_KEY, 1000), vars), 'signature_expired', 403)
  })
})

describe('format=json', () => {
  interface Facts {
    width: number
    height: number
    original: { file_size: number; width: number; height: number; format: string; frames: number; orientation: number; colour: string }
    placeholder: { thumbhash: string; data_url: string }
    dominant_colour: string
  }

  it("answers the image's facts, a ThumbHash and a dominant colour, on /img and /cdn-cgi alike", async () => {
    await put('cf/facts.jpg', 'photo.jpg')
    const res = await get('/cdn-cgi/image/width=240,format=json/cf/facts.jpg')
    expect(res.headers.get('content-type')).toMatch(/^application\/json/)
    expect(res.headers.get('server-timing')).toMatch(/decode;dur=[\d.]+, transform;dur=[\d.]+/)
    expect(res.headers.get('etag')).toMatch(/^"[0-9a-f]{32}"$/)
    const facts = (await res.json()) as Facts
    expect(facts).toMatchObject({ width: 240, height: 150, original: { file_size: fixture('photo.jpg').length, width: 480, height: 300, format: 'image/jpeg', frames: 1, orientation: 1, colour: 'srgb' } })
    const hash = base64ToBytes(facts.placeholder.thumbhash)
    expect(thumbHashToApproximateAspectRatio(hash)).toBeCloseTo(1.6, 0)
    const { w, h } = thumbHashToRGBA(hash)
    expect(Math.max(w, h)).toBe(32)
    expect(facts.placeholder.data_url).toMatch(/^data:image\/png;base64,/)
    expect(facts.dominant_colour).toMatch(/^#[0-9a-f]{6}$/)
    const viaImg = await get('/img/width=240,format=json/cf/facts.jpg')
    expect(viaImg.headers.get('cache-status')).toBe('imgedge; hit')
    expect(await viaImg.json()).toEqual(facts)
    const image = await get('/img/width=240/cf/facts.jpg')
    expect(image.headers.get('content-type')).toBe(MIME.jpeg)
    expect(image.headers.get('etag')).not.toBe(res.headers.get('etag'))
  })

  it('reports the upright size and the orientation, a frame count, and the dominant colour of a flat image', async () => {
    await put('cf/exif-6.jpg', 'exif-6.jpg')
    const turned = (await (await get('/img/format=json/cf/exif-6.jpg')).json()) as Facts
    const stored = (await decode(fixture('exif-6.jpg'))).header
    expect([turned.original.width, turned.original.height, turned.original.orientation]).toEqual([stored.height, stored.width, 6])
    await put('cf/anim.webp', 'anim.webp')
    const animated = (await (await get('/cdn-cgi/image/format=json/cf/anim.webp')).json()) as Facts
    expect(animated.original.frames).toBeGreaterThan(1)
    expect(animated.original.format).toBe('image/webp')
    // three quarters one colour, a quarter another
    await env.IMAGES.put('cf/flat.png', await translucentPng(64, 40, (x) => (x < 48 ? [200, 100, 50, 255] : [20, 40, 220, 255])))
    const flat = (await (await get('/cdn-cgi/image/format=json/cf/flat.png')).json()) as Facts
    expect(flat.dominant_colour).toBe('#c86432')
  })

  it('refuses what is not an image, or not whole, as a conversion would', async () => {
    await put('cf/page.svg', 'not-an-image.svg')
    await expectProblem(await get('/cdn-cgi/image/format=json/cf/page.svg'), 'unsupported_format', 415)
    await put('cf/cut.jpg', 'truncated-10000.jpg')
    await expectProblem(await get('/img/format=json/cf/cut.jpg'), 'corrupt_image', 422)
  })
})

describe('/api/formats', () => {
  it('lists every Cloudflare option: mapped onto what, not mapped yet, or refused', async () => {
    const { cloudflare } = (await (await get('/api/formats')).json()) as { cloudflare: { options: Array<{ option: string; aliases: string[]; status: string; imgedge?: string }> } }
    const by = (status: string) => cloudflare.options.filter((row) => row.status === status).map((row) => row.option)
    expect(by('mapped')).toEqual(['width', 'height', 'fit', 'quality', 'format', 'background', 'metadata', 'anim', 'onerror', 'compression', 'upscale', 'gravity', 'zoom', 'dpr', 'rotate', 'flip', 'trim', 'sharpen', 'blur', 'brightness', 'contrast', 'gamma', 'saturation'])
    expect(by('not mapped yet')).toEqual(['trim.width', 'trim.height', 'trim.left', 'trim.top'])
    expect(cloudflare.options.find((row) => row.option === 'width')!.aliases).toEqual(['w'])
  })

  it("docs/guide/cloudflare-urls.md's table gives every option its status", () => {
    const rows = guide.split('\n').filter((line) => line.startsWith('| `')).map((line) => line.split('|').map((cell) => cell.trim()))
    for (const { option, status } of cloudflareTable()) {
      const row = rows.find((cells) => cells[1]!.split(', ').includes(`\`${option}\``))
      expect(row?.[3]?.startsWith(status), option).toBe(true)
    }
  })
})

describe('cloudflareToImg', () => {
  it('writes imgedge options text', () => {
    expect(cloudflareToImg('w=800,fit=contain,q=high,f=webp')).toBe('width=800,fit=inside,enlarge=true,quality=90,format=webp')
    expect(cloudflareToImg('format=baseline-jpeg,compression=fast')).toBe('format=jpeg,effort=1')
    expect(cloudflareToImg('background=%23abc')).toBe('background=aabbcc')
  })
})
