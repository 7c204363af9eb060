/**
 * The image components sites already use, as installed from npm (unpic's cloudflare provider, @nuxt/image's
 * cloudflare provider) and the Next.js loaders in public/examples/, pointed at a real `wrangler dev` whose ORIGIN_URL
 * is a loopback origin holding a 1200x750 photo (and the 480x300 fixture photo under blog/cat photo.jpg): every URL
 * they build for several widths, formats and fits is served, and the answer decodes to the size and format asked for.
 */
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { promisify } from 'node:util'
import nuxtCloudflare from '@nuxt/image/runtime/providers/cloudflare'
import { extract, generate, transform } from 'unpic/providers/cloudflare'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readHeader } from '../../src/pipeline/sniff'
import { startWranglerDev, type WranglerDev } from './wrangler-dev'

const photo = readFileSync(new URL('../fixtures/large.jpg', import.meta.url))
const small = readFileSync(new URL('../fixtures/photo.jpg', import.meta.url))
const BROWSER = 'image/avif,image/webp,image/apng,*/*;q=0.8'
type Loader = (args: { src: string; width: number; quality?: number }) => string

let origin: http.Server
let originBase: string
let dev: WranglerDev

beforeAll(async () => {
  origin = http.createServer((req, res) => {
    if (req.url === '/images/photos/large.jpg' || req.url === '/images/blog/sea%20view.jpg') res.writeHead(200, { 'Content-Type': 'image/jpeg', ETag: '"1"' }).end(photo)
    else if (req.url === '/images/blog/cat%20photo.jpg') res.writeHead(200, { 'Content-Type': 'image/jpeg', ETag: '"2"' }).end(small)
    else res.writeHead(404).end()
  })
  await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve))
  originBase = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`
  dev = await startWranglerDev({ ORIGIN_URL: `${originBase}/images/`, ALLOWED_SOURCES: originBase, RATE_LIMIT_ANON_PER_MINUTE: '0' })
  process.env.NEXT_PUBLIC_IMGEDGE_URL = dev.base
}, 120_000)

afterAll(async () => {
  await dev?.stop()
  origin?.close()
})

/** Fetch a URL from the worker as a browser would, and read the answer's format and size from its header. */
async function served(url: string, accept = BROWSER) {
  const res = await fetch(url, { headers: { Accept: accept } })
  const body = new Uint8Array(await res.arrayBuffer())
  expect(res.status, `${url}: ${new TextDecoder().decode(body.subarray(0, 300))}`).toBe(200)
  const { format, width, height } = readHeader(body)
  return { format, width, height, type: res.headers.get('content-type') }
}

describe("unpic's cloudflare provider", () => {
  it('generates URLs for widths, formats and fits that imgedge serves at that size and format', async () => {
    for (const [operations, expected] of [
      [{ width: 320, height: 200, format: 'webp' }, ['webp', 320, 200]],
      [{ width: 640, height: 640, format: 'avif', fit: 'cover' }, ['avif', 640, 640]],
      [{ width: 500, format: 'jpeg', fit: 'scale-down' }, ['jpeg', 500, 313]],
      [{ width: 2400, height: 1500, format: 'webp', fit: 'scale-down' }, ['webp', 1200, 750]],
      [{ width: 2400, height: 1500, format: 'webp', fit: 'contain' }, ['webp', 2400, 1500]],
      [{ width: 400, height: 400, format: 'png', fit: 'pad' }, ['png', 400, 400]],
      [{ width: 800 }, ['avif', 800, 500]],
    ] as const) {
      const url = generate('photos/large.jpg', operations)
      expect(url).toMatch(/^\/cdn-cgi\/image\/[^/]+\/photos\/large\.jpg$/)
      const got = await served(`${dev.base}${url}`)
      expect([got.format, got.width, got.height], url).toEqual(expected)
    }
  })

  it('parses an imgedge URL back and transforms it to other sizes', async () => {
    const url = `${dev.base}/cdn-cgi/image/width=300,height=300,fit=cover,f=webp/photos/large.jpg`
    const parsed = extract(url)
    expect(parsed).toMatchObject({ src: '/photos/large.jpg', operations: { width: 300, height: 300, fit: 'cover', format: 'webp' } })
    for (const width of [150, 600]) {
      // (unpic keeps the host name but not the port: the path is what it builds)
      const next = new URL(transform(url, { width, height: width }) as string).pathname
      const got = await served(`${dev.base}${next}`)
      expect([got.format, got.width, got.height], next).toEqual(['webp', width, width])
    }
  })

  it("public/examples/unpic-srcset.mjs prints a srcset whose every URL is served at its width, and the placeholder", async () => {
    const example = new URL('../../public/examples/unpic-srcset.mjs', import.meta.url).pathname
    const { stdout } = await promisify(execFile)(process.execPath, [example, 'photos/large.jpg'], { env: { ...process.env, IMGEDGE_URL: dev.base } })
    const srcset = /srcset="([^"]+)"/.exec(stdout)![1]!.split(', ')
    expect(srcset).toHaveLength(3)
    for (const entry of srcset) {
      const [url, width] = entry.split(' ')
      const got = await served(url!)
      // (1280w is the 1200 px photo itself: scale-down never enlarges)
      expect([got.format, got.width], url).toEqual(['avif', Math.min(1200, Number.parseInt(width!))])
    }
    expect(stdout).toMatch(/width="1200" height="750"/)
    expect(stdout).toMatch(/background: #[0-9a-f]{6} url\(data:image\/png;base64,/)
  })

  it('takes an absolute source URL on ALLOWED_SOURCES', async () => {
    const url = generate(`${originBase}/images/photos/large.jpg`, { width: 240, format: 'webp' })
    const got = await served(`${dev.base}${url}`)
    expect([got.format, got.width]).toEqual(['webp', 240])
  })
})

describe("@nuxt/image's cloudflare provider", () => {
  const { getImage } = nuxtCloudflare()
  const nuxt = (modifiers: Record<string, unknown>) => getImage('/photos/large.jpg', { modifiers, baseURL: dev.base } as never, {} as never).url

  it('builds URLs for widths, formats, qualities and fits that imgedge serves', async () => {
    for (const [modifiers, expected] of [
      [{ width: 320, format: 'webp', quality: 70 }, ['webp', 320, 200]],
      [{ width: 300, height: 300, fit: 'cover', format: 'avif' }, ['avif', 300, 300]],
      [{ width: 300, height: 300, fit: 'contain', format: 'jpeg' }, ['jpeg', 300, 188]],
      [{ width: 300, height: 300, fit: 'inside', format: 'png' }, ['png', 300, 300]],
      [{ width: 2000, height: 2000, fit: 'fill', format: 'webp' }, ['webp', 1200, 750]],
      [{ width: 400, height: 100, fit: 'outside', format: 'jpeg' }, ['jpeg', 400, 100]],
    ] as const) {
      const url = nuxt(modifiers)
      expect(url.startsWith(`${dev.base}/cdn-cgi/image/`), url).toBe(true)
      const got = await served(url)
      expect([got.format, got.width, got.height], url).toEqual(expected)
    }
  })
})

describe('Next.js images.loader', () => {
  const load = async (file: string): Promise<Loader> => (await import(new URL(`../../public/examples/${file}`, import.meta.url).href)).default

  it("the /img loader's URLs for Next's widths are served at that width (never past the photo's 480 px), in the format the browser accepts", async () => {
    const loader = await load('next-loader.mjs')
    for (const [width, expected] of [[256, 256], [384, 384], [640, 480]] as const) {
      const url = loader({ src: '/blog/cat photo.jpg', width, quality: 75 })
      expect(url).toBe(`${dev.base}/img/width=${width},format=auto,quality=75/blog/cat%20photo.jpg`)
      const res = await fetch(url, { headers: { Accept: BROWSER } })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('image/avif')
      expect(res.headers.get('vary')).toContain('Accept')
      const header = readHeader(new Uint8Array(await res.arrayBuffer()))
      expect([header.format, header.width]).toEqual(['avif', expected])
    }
    const old = await fetch(loader({ src: 'blog/cat photo.jpg', width: 256 }), { headers: { Accept: 'image/webp,*/*' } })
    expect(old.headers.get('content-type')).toBe('image/webp')
  })

  it("the Cloudflare-form loader's URLs for Next's widths are served at that width, never enlarged", async () => {
    const loader = await load('next-cloudflare-loader.mjs')
    for (const [width, expected] of [[384, 384], [828, 828], [1920, 1200]] as const) {
      const url = loader({ src: '/blog/sea view.jpg', width, quality: 60 })
      expect(url).toBe(`${dev.base}/cdn-cgi/image/width=${width},quality=60,format=auto/blog/sea%20view.jpg`)
      const got = await served(url)
      expect([got.format, got.width], url).toEqual(['avif', expected])
    }
    const jpeg = await served(loader({ src: 'blog/sea view.jpg', width: 640 }), '*/*')
    expect([jpeg.format, jpeg.width]).toEqual(['jpeg', 640])
  })

  it('the /img loader and the Cloudflare-form loader answer the same image for the same width', async () => {
    const [imgLoader, cloudflareLoader] = [await load('next-loader.mjs'), await load('next-cloudflare-loader.mjs')]
    const bytes = async (url: string) => new Uint8Array(await (await fetch(url, { headers: { Accept: 'image/webp,*/*' } })).arrayBuffer())
    expect(await bytes(cloudflareLoader({ src: 'photos/large.jpg', width: 640, quality: 75 }))).toEqual(await bytes(imgLoader({ src: 'photos/large.jpg', width: 640, quality: 75 })))
  })
})
