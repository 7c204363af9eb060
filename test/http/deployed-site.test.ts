/**
 * A site's images against `wrangler dev` configured as docs/guide/deploy.md says (its toml settings and a
 * SIGNING_KEY, the photo in the IMAGES bucket): every image URL of the guide's page example, of
 * public/examples/picture.html as served and of the Next.js loader at Next's default widths answers 200 with the
 * image at its width, unsigned; an arbitrary unsigned width answers 403 unless signed; compress needs a key.
 */
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { signPath } from '../../signers/js/imgedge-sign.mjs'
import { readHeader } from '../../src/pipeline/sniff'
import { startWranglerDev, type WranglerDev } from './wrangler-dev'

const guide = readFileSync(new URL('../../docs/guide/deploy.md', import.meta.url), 'utf8')
const blocks = (language: string) => [...guide.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((match) => match[1]!)
/** The [vars] the guide sets (`NAME = "value"` lines of its toml blocks). */
const guideVars = Object.fromEntries(blocks('toml').flatMap((block) => [...block.matchAll(/^([A-Z][A-Z0-9_]*) = "(.*)"$/gm)].map((m) => [m[1]!, m[2]!])))
const SECRET = 'deployed-site-test-key'
const BROWSER = 'image/avif,image/webp,image/apng,*/*;q=0.8'
const PHOTO_WIDTH = 480 // test/fixtures/photo.jpg, 480x300: wider asks are not enlarged
/** Next.js's default imageSizes and deviceSizes. */
const NEXT_WIDTHS = [16, 32, 48, 64, 96, 128, 256, 384, 640, 750, 828, 1080, 1200, 1920, 2048, 3840]

let dev: WranglerDev

beforeAll(async () => {
  dev = await startWranglerDev({ ...guideVars, SIGNING_KEY: SECRET }, 90_000, { 'photos/cat.jpg': new URL('../fixtures/photo.jpg', import.meta.url).pathname })
}, 180_000)

afterAll(async () => {
  await dev?.stop()
})

/** Fetch as a browser would and check the image: 200, and the width the URL asks for (or a preset's). */
async function expectImage(url: string): Promise<void> {
  const res = await fetch(url, { headers: { Accept: BROWSER } })
  expect(res.status, `${url}: ${res.status === 200 ? '' : await res.clone().text()}`).toBe(200)
  const header = readHeader(new Uint8Array(await res.arrayBuffer()))
  const asked = /[/,]width=(\d+)/.exec(url)?.[1]
  const width = asked === undefined ? Number(/preset=thumb/.test(url) ? 256 : Number.NaN) : Math.min(Number(asked), PHOTO_WIDTH)
  expect([header.width, header.format], url).toEqual([width, /format=(webp|jpeg|avif)/.exec(url)?.[1] ?? 'avif'])
}

it('reads the guide: presets-only with presets, compress behind keys, CORS for one site', () => {
  expect(guideVars).toMatchObject({ UNSIGNED_URLS: 'presets', REQUIRE_API_KEY: 'true' })
  expect(guideVars.PRESETS).toContain('thumb=')
})

it('serves every image of the guide\'s page example unsigned', async () => {
  const urls = blocks('html').flatMap((block) => [...block.matchAll(/https:\/\/images\.example\.com(\/img\/[^\s"]+)/g)].map((m) => `${dev.base}${m[1]}`))
  expect(urls.length).toBeGreaterThanOrEqual(5)
  expect(urls.some((url) => url.includes('preset='))).toBe(true)
  for (const url of urls) await expectImage(url)
})

it('serves every image of picture.html, the page as served', async () => {
  const page = await (await fetch(`${dev.base}/examples/picture.html`)).text()
  const urls = [...new Set([...page.matchAll(/(\/img\/[^\s"]+)/g)].map((m) => `${dev.base}${m[1]}`))]
  expect(urls.length).toBe(8)
  for (const url of urls) await expectImage(url)
})

it('serves the Next.js loader\'s URLs at every default width, with its default quality and without', async () => {
  process.env.NEXT_PUBLIC_IMGEDGE_URL = dev.base
  // @ts-expect-error: a plain JavaScript example, without types
  const loader: (args: { src: string; width: number; quality?: number }) => string = (await import('../../public/examples/next-loader.mjs')).default
  for (const width of NEXT_WIDTHS) await expectImage(loader({ src: '/photos/cat.jpg', width, quality: 75 }))
  await expectImage(loader({ src: 'photos/cat.jpg', width: 640 }))
})

it('refuses an arbitrary unsigned width (403 unsigned_not_allowed), serves it signed, and keeps compress behind keys', async () => {
  const path = '/img/width=333,format=auto/photos/cat.jpg'
  const refused = await fetch(`${dev.base}${path}`, { headers: { Accept: BROWSER } })
  expect([refused.status, refused.headers.get('content-type'), (await refused.json()).code]).toEqual([403, 'application/problem+json', 'unsigned_not_allowed'])
  for (const options of ['quality=90', 'height=300', 'preset=thumb,blur=5', 'width=640,quality=80']) {
    expect((await fetch(`${dev.base}/img/${options}/photos/cat.jpg`)).status, options).toBe(403)
  }
  await expectImage(`${dev.base}${await signPath(path, SECRET)}`)
  const compress = await fetch(`${dev.base}/api/compress`, { method: 'POST', body: readFileSync(new URL('../fixtures/photo.jpg', import.meta.url)), headers: { 'Content-Type': 'image/jpeg' } })
  expect([compress.status, (await compress.json()).code]).toEqual([401, 'api_key_required'])
})
