/**
 * The examples on the reference page (public/examples/) run against a real `wrangler dev`: every curl and
 * JavaScript example, and the Python ones where `requests` is installed. The page shows these very files,
 * so what readers copy is what ran here.
 */
import { execFile } from 'node:child_process'
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import ts from 'typescript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readHeader } from '../../src/pipeline/sniff'
import { has } from './runtimes'
import { startWranglerDev, type WranglerDev } from './wrangler-dev'

const run = promisify(execFile)
const examples = new URL('../../public/examples/', import.meta.url).pathname
const hasJq = has('jq', ['--version'])
const hasRequests = has('python3', ['-c', 'import requests'])

const LANGUAGES = {
  curl: { ext: 'sh', command: 'sh', enabled: true },
  JavaScript: { ext: 'mjs', command: process.execPath, enabled: true },
  Python: { ext: 'py', command: 'python3', enabled: hasRequests },
} as const

let dev: WranglerDev
let work: string

beforeAll(async () => {
  dev = await startWranglerDev()
  work = mkdtempSync(join(tmpdir(), 'imgedge-examples-'))
  copyFileSync(new URL('../fixtures/photo.jpg', import.meta.url), join(work, 'photo.jpg'))
}, 120_000)

afterAll(async () => {
  await dev?.stop()
  if (work) rmSync(work, { recursive: true, force: true })
})

/** Run one example file in the scratch directory, as its usage line says, against the dev server. */
async function example(command: string, file: string, ...args: string[]) {
  const { stdout } = await run(command, [join(examples, file), ...args], {
    cwd: work,
    env: { ...process.env, IMGEDGE_URL: dev.base },
  })
  return stdout
}

const image = (name: string) => readHeader(new Uint8Array(readFileSync(join(work, name))))

describe.each(Object.entries(LANGUAGES))('%s examples', (_language, { ext, command, enabled }) => {
  it.skipIf(!enabled)('compress: WebP at quality 75, 320 px wide, with the statistics printed', async () => {
    const out = `compress-${ext}.webp`
    const stdout = await example(command, `compress.${ext}`, 'photo.jpg', out)
    expect(image(out)).toMatchObject({ format: 'webp', width: 320, height: 200 })
    if (ext === 'sh') expect(stdout).toMatch(/^X-Output-Width: 320\r?$/im)
    else expect(stdout).toContain('-> webp 320x200')
    expect(stdout).toContain(`wrote ${out}`)
  })

  it.skipIf(!enabled)('negotiate: three Accept headers get AVIF, WebP and JPEG, each with Vary: Accept', async () => {
    const stdout = await example(command, `negotiate.${ext}`, 'photo.jpg')
    const lines = stdout.trim().split('\n')
    expect(lines).toHaveLength(3)
    // Vary lists Accept, possibly among others (Origin, for CORS).
    expect(lines[0]).toMatch(/^Accept: image\/avif,image\/webp,\*\/\* -> image\/avif, \d+ bytes, Vary: .*\bAccept\b/)
    expect(lines[1]).toMatch(/^Accept: image\/webp,\*\/\* -> image\/webp, \d+ bytes, Vary: .*\bAccept\b/)
    expect(lines[2]).toMatch(/^Accept: \*\/\* -> image\/jpeg, \d+ bytes, Vary: .*\bAccept\b/)
  })

  it.skipIf(!enabled || (ext === 'sh' && !hasJq))('json-answer: the statistics, and the base64 image decoded to a file', async () => {
    const out = `answer-${ext}.webp`
    const stdout = await example(command, `json-answer.${ext}`, 'photo.jpg', out)
    const stats = JSON.parse(stdout.slice(0, stdout.lastIndexOf('wrote ')))
    expect(stats).toMatchObject({ format: 'webp', input: { format: 'jpeg', width: 480, height: 300 }, output: { width: 320, height: 200 } })
    expect(stats).not.toHaveProperty('image')
    expect(image(out)).toMatchObject({ format: 'webp', width: 320, height: 200 })
    expect(readFileSync(join(work, out)).length).toBe(stats.output.bytes)
  })
})

describe('the typed client (openapi-typescript + openapi-fetch)', () => {
  const repo = new URL('../../', import.meta.url).pathname
  /** Type-check one file against the types next to it, resolving openapi-fetch from the repository. */
  const typeErrors = (file: string) => {
    const program = ts.createProgram([file], {
      strict: true, noEmit: true, target: ts.ScriptTarget.ES2023, module: ts.ModuleKind.ES2022, moduleResolution: ts.ModuleResolutionKind.Bundler,
      lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'], types: ['node'], typeRoots: [join(repo, 'node_modules/@types')],
      paths: { 'openapi-fetch': [join(repo, 'node_modules/openapi-fetch')] }, skipLibCheck: true,
    })
    return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
  }

  it('generates from the served document exactly the types the example imports', async () => {
    await run(process.execPath, [join(repo, 'scripts/openapi-types.mjs'), `${dev.base}/api/openapi.json`, join(work, 'imgedge-api.d.ts')])
    expect(readFileSync(join(work, 'imgedge-api.d.ts'), 'utf8')).toBe(readFileSync(join(examples, 'imgedge-api.d.ts'), 'utf8'))
  })

  it('type-checks the example against the generated types, and refuses a format the API does not have', () => {
    const source = readFileSync(join(examples, 'typed-client.ts'), 'utf8')
    writeFileSync(join(work, 'typed-client.ts'), source)
    expect(typeErrors(join(work, 'typed-client.ts'))).toEqual([])
    writeFileSync(join(work, 'typed-client.ts'), source.replace("format: 'webp'", "format: 'bmp'"))
    expect(typeErrors(join(work, 'typed-client.ts')).join('\n')).toContain('"bmp"')
  }, 60_000)

  it('runs: the JSON answer read through the typed client, the image written', async () => {
    const stdout = await example(process.execPath, 'typed-client.ts', 'photo.jpg', 'typed.webp')
    expect(stdout).toMatch(/^formats: \d+$/m)
    expect(stdout).toMatch(/^jpeg 480x300 -> webp 320x200, \d+ bytes$/m)
    expect(image('typed.webp')).toMatchObject({ format: 'webp', width: 320, height: 200 })
  })
})

describe('the page and its examples as static assets', () => {
  it('serves the page at / with its Content-Security-Policy, and /api/* from the worker', async () => {
    const page = await fetch(`${dev.base}/`)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toMatch(/^text\/html/)
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'")
    expect(await page.text()).toContain('<script type="module" src="/app.js"></script>')
    const missing = await fetch(`${dev.base}/api/no-such-route`)
    expect(missing.status).toBe(404)
    expect(missing.headers.get('content-type')).toBe('application/problem+json')
  })

  it('serves every example byte for byte as it is in the repository', async () => {
    for (const file of ['compress', 'negotiate', 'json-answer'].flatMap((name) => ['sh', 'mjs', 'py'].map((ext) => `${name}.${ext}`)).concat('form.html', 'typed-client.ts', 'imgedge-api.d.ts')) {
      const res = await fetch(`${dev.base}/examples/${file}`)
      expect(res.status, file).toBe(200)
      expect(await res.text(), file).toBe(readFileSync(join(examples, file), 'utf8'))
    }
  })
})
