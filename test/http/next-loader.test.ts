/**
 * The Next.js loader example (public/examples/next-loader.mjs) against a real `wrangler dev` whose ORIGIN_URL is a
 * loopback origin holding the fixture photo: the URLs it makes for Next's widths are served, each at that width
 * (never enlarged past the photo's 480 px), in the format the browser's Accept asks for.
 */
import { readFileSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { readHeader } from '../../src/pipeline/sniff'
import { startWranglerDev, type WranglerDev } from './wrangler-dev'

const photo = readFileSync(new URL('../fixtures/photo.jpg', import.meta.url))
let origin: http.Server
let dev: WranglerDev
let loader: (args: { src: string; width: number; quality?: number }) => string

beforeAll(async () => {
  origin = http.createServer((req, res) => {
    if (req.url === '/images/blog/cat%20photo.jpg') res.writeHead(200, { 'Content-Type': 'image/jpeg', ETag: '"1"' }).end(photo)
    else res.writeHead(404).end()
  })
  await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve))
  dev = await startWranglerDev({ ORIGIN_URL: `http://127.0.0.1:${(origin.address() as AddressInfo).port}/images/` })
  process.env.NEXT_PUBLIC_IMGEDGE_URL = dev.base
  // @ts-expect-error: a plain JavaScript example, without types
  loader = (await import('../../public/examples/next-loader.mjs')).default
}, 120_000)

afterAll(async () => {
  await dev?.stop()
  origin?.close()
})

it('serves the widths Next.js asks for, in the format the browser accepts', async () => {
  for (const [width, expected] of [[256, 256], [384, 384], [640, 480]] as const) {
    const url = loader({ src: '/blog/cat photo.jpg', width, quality: 75 })
    expect(url).toBe(`${dev.base}/img/width=${width},format=auto,quality=75/blog/cat%20photo.jpg`)
    const res = await fetch(url, { headers: { Accept: 'image/avif,image/webp,image/apng,*/*;q=0.8' } })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('image/avif')
    expect(res.headers.get('vary')).toContain('Accept')
    const header = readHeader(new Uint8Array(await res.arrayBuffer()))
    expect([header.format, header.width]).toEqual(['avif', expected])
  }
  const old = await fetch(loader({ src: 'blog/cat photo.jpg', width: 256 }), { headers: { Accept: 'image/webp,*/*' } })
  expect(old.headers.get('content-type')).toBe('image/webp')
})
