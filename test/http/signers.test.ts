/**
 * The signers applications use (signers/: JavaScript with Web Crypto, Python, PHP, shell with openssl) make the same
 * signatures of the same paths, and URLs a real `wrangler dev` with SIGNING_KEY set serves (its ORIGIN_URL a loopback
 * origin holding the fixture photo under every path). A runtime missing here (PHP, openssl) skips its language with
 * the reason in the test's name; Python is always run.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { imageUrl, requestedPath, signPath } from '../../signers/js/imgedge-sign.mjs'
import { readHeader } from '../../src/pipeline/sniff'
import { has } from './runtimes'
import { startWranglerDev, type WranglerDev } from './wrangler-dev'

const SECRET = 'signers-test-key-9f2c'
const signers = new URL('../../signers/', import.meta.url).pathname
const photo = readFileSync(new URL('../fixtures/photo.jpg', import.meta.url))

/** One signer's work, asked of each language the same way: JSON in on stdin, JSON out. */
interface Job {
  base: string
  secret: string
  urls: { options: Record<string, string | number>; source: string; exp?: number }[]
  paths: string[]
}
interface Done {
  urls: string[]
  signed: string[]
  requested: string[]
}

const PYTHON = `
import json, sys
sys.path.insert(0, ${JSON.stringify(`${signers}python`)})
from imgedge_sign import image_url, requested_path, sign_path
job = json.load(sys.stdin)
print(json.dumps({
    "urls": [image_url(job["base"], u["options"], u["source"], secret=job["secret"], exp=u.get("exp")) for u in job["urls"]],
    "signed": [sign_path(p, job["secret"]) for p in job["paths"]],
    "requested": [requested_path(p) for p in job["paths"]],
}))`

const PHP = `
require ${JSON.stringify(`${signers}php/imgedge_sign.php`)};
$job = json_decode(file_get_contents('php://stdin'), true);
echo json_encode([
    'urls' => array_map(fn ($u) => imgedge_image_url($job['base'], $u['options'], $u['source'], $job['secret'], $u['exp'] ?? null), $job['urls']),
    'signed' => array_map(fn ($p) => imgedge_sign_path($p, $job['secret']), $job['paths']),
    'requested' => array_map('imgedge_requested_path', $job['paths']),
], JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE);`

const run = (command: string, args: string[], job: Job): Done => JSON.parse(execFileSync(command, args, { input: JSON.stringify(job), encoding: 'utf8' }))

const LANGUAGES: Record<string, { enabled: boolean; sign: (job: Job) => Promise<Done> }> = {
  JavaScript: {
    enabled: true,
    sign: async (job) => ({
      urls: await Promise.all(job.urls.map((u) => imageUrl(job.base, u.options, u.source, { secret: job.secret, ...(u.exp === undefined ? {} : { exp: u.exp }) }))),
      signed: await Promise.all(job.paths.map((p) => signPath(p, job.secret))),
      requested: job.paths.map(requestedPath),
    }),
  },
  Python: { enabled: true, sign: async (job) => run('python3', ['-c', PYTHON], job) },
  [has('php', ['--version']) ? 'PHP' : 'PHP (skipped: no php here; apt-get install php-cli)']: { enabled: has('php', ['--version']), sign: async (job) => run('php', ['-r', PHP], job) },
}
const hasOpenssl = has('openssl', ['version'])

/** Paths a URL parser rewrites: the signers must sign what the worker will see, as JavaScript's URL does. */
const TRICKY = ['/img/width=40/café au lait.jpg', '/img/_/a/./b/../c.png', '/img/_/x/.%2E/y.jpg', '/img/_/{braces}`tick".jpg', '/img/_/back\\slash.jpg', '/img/_/tab\there.jpg', '/img/_/del\x7f.jpg', '/img/_/keep%20this~!$&()*+;=:@^|[].jpg', '/img/_/dir/..']

let origin: http.Server
let dev: WranglerDev
const future = () => Math.floor(Date.now() / 1000) + 3600

beforeAll(async () => {
  origin = http.createServer((req, res) => {
    if (req.url?.startsWith('/images/')) res.writeHead(200, { 'Content-Type': 'image/jpeg', ETag: '"1"' }).end(photo)
    else res.writeHead(404).end()
  })
  await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve))
  dev = await startWranglerDev({ SIGNING_KEY: SECRET, ORIGIN_URL: `http://127.0.0.1:${(origin.address() as AddressInfo).port}/images/` })
}, 120_000)

afterAll(async () => {
  await dev?.stop()
  origin?.close()
})

const widthOf = async (url: string) => {
  const res = await fetch(url)
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${await res.text()}`)
  const header = readHeader(new Uint8Array(await res.arrayBuffer()))
  return `${header.format} ${header.width}`
}

describe.each(Object.entries(LANGUAGES))('%s signer', (_language, { enabled, sign }) => {
  it.skipIf(!enabled)('signs the path a URL parser makes, exactly as the worker\'s own signer does', async () => {
    const job: Job = { base: 'https://images.example.com/', secret: SECRET, urls: [{ options: { width: 8, background: '#fff' }, source: '/blog/cat photo.jpg', exp: 1767225600 }], paths: TRICKY }
    const done = await sign(job)
    expect(done.requested).toEqual(TRICKY.map(requestedPath))
    expect(done.signed).toEqual(await Promise.all(TRICKY.map((p) => signPath(p, SECRET))))
    expect(done.urls).toEqual([`https://images.example.com${await signPath('/img/width=8,background=%23fff/blog/cat%20photo.jpg', SECRET, 1767225600)}`])
  })

  it.skipIf(!enabled)('makes URLs the worker serves, with and without exp, and none it serves once changed', async () => {
    const exp = future()
    const done = await sign({
      base: dev.base,
      secret: SECRET,
      urls: [{ options: { width: 123, format: 'webp', background: '#abc' }, source: 'blog/café au lait.jpg' }, { options: { width: 97 }, source: 'blog/cat.jpg', exp }],
      paths: ['/img/width=99,format=png/blog/café au lait.jpg'],
    })
    expect(await widthOf(done.urls[0]!)).toBe('webp 123')
    expect(done.urls[1]).toContain(`?exp=${exp}&sig=`)
    expect(await widthOf(done.urls[1]!)).toBe('jpeg 97')
    expect(await widthOf(`${dev.base}${done.signed[0]}`)).toBe('png 99')
    const changed = await fetch(done.urls[0]!.replace('width=123', 'width=124'))
    expect([changed.status, (await changed.json()).code]).toEqual([403, 'invalid_signature'])
  })
})

describe(hasOpenssl ? 'shell signer (openssl)' : 'shell signer (skipped: no openssl here)', () => {
  it.skipIf(!hasOpenssl)('signs an encoded path as the others do, and the worker serves it', async () => {
    const path = '/img/width=77,background=%23abc/blog/caf%C3%A9%20au%20lait.jpg'
    const sh = (...args: string[]) => execFileSync('sh', [`${signers}sh/imgedge-sign.sh`, ...args], { env: { ...process.env, SIGNING_KEY: SECRET }, encoding: 'utf8' }).trim()
    expect(sh(path)).toBe(await signPath(path, SECRET))
    expect(sh(path, '1767225600')).toBe(await signPath(path, SECRET, 1767225600))
    expect(await widthOf(`${dev.base}${sh(path, String(future()))}`)).toBe('jpeg 77')
  })
})

it('the worker refuses the same URL unsigned', async () => {
  const res = await fetch(`${dev.base}/img/width=123/blog/cat.jpg`)
  expect([res.status, (await res.json()).code]).toEqual([403, 'signature_required'])
})
