// The reference page in a real browser: headless Chromium (Debian `chromium`) driven by playwright-core,
// against a fresh `wrangler dev`. Run with `npm run test:e2e`; `npm test` does not include it.
// With UPDATE_SCREENSHOT=1 it writes docs/reference-page.png, the screenshot in the README: an endpoint's documentation
// beside its examples at 1440 px (otherwise the tracked file is left alone).
import { execFileSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import axe from 'axe-core'
import { chromium } from 'playwright-core'
import { startWranglerDev } from '../http/wrangler-dev.ts'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const PHOTO = fileURLToPath(new URL('../fixtures/photo.jpg', import.meta.url))
const SCREENSHOT = fileURLToPath(new URL('../../docs/reference-page.png', import.meta.url))

let passed = 0
let failed = 0
async function check(name, fn) {
  const started = Date.now()
  try {
    await fn()
    passed++
    console.log(`ok   ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)`)
  } catch (error) {
    failed++
    console.log(`FAIL ${name}\n     ${String(error?.stack ?? error).split('\n').slice(0, 6).join('\n     ')}`)
  }
}
function assert(condition, message) {
  if (!condition) throw new Error(message)
}
function finish() {
  console.log(`e2e: ${passed} passed, ${failed} failed`)
  process.exit(failed ? 1 : 0)
}

if (!existsSync(CHROMIUM)) {
  console.log(`FAIL no browser at ${CHROMIUM}: apt-get install -y chromium, or set CHROMIUM_PATH`)
  failed++
  finish()
}

/** A page that records console errors, uncaught exceptions and CSP violations. */
async function openPage(context) {
  const page = await context.newPage()
  const errors = []
  page.on('console', (message) => message.type() === 'error' && errors.push(`${message.text()} (${message.location().url})`))
  page.on('pageerror', (error) => errors.push(`uncaught: ${error.message}`))
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      console.error(`CSP violation: ${event.violatedDirective} ${event.blockedURI}`)
    })
  })
  return { page, errors }
}

async function loadReady(page, base) {
  const res = await page.goto(`${base}/`)
  await page.waitForSelector('html[data-ready="true"]')
  return res
}

/** Click send (or press a key on it) and wait until that answer is rendered. */
async function send(page, action = () => page.click('#send')) {
  await action()
  await page.waitForSelector('#result[aria-busy="false"]', { state: 'attached' })
}

/** Whether python3 with `requests` is here (without it the Python snippets are checked by eye only). */
function hasPythonRequests() {
  try {
    execFileSync('python3', ['-c', 'import requests'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/**
 * Run the tester's generated JavaScript (and Python, where `requests` is installed) in a scratch directory holding
 * photo.jpg, as a reader would, and return what each wrote to `output`.
 */
function runSnippets(js, py, output) {
  const dir = mkdtempSync(join(tmpdir(), 'imgedge-snippet-'))
  try {
    copyFileSync(PHOTO, join(dir, 'photo.jpg'))
    const written = {}
    writeFileSync(join(dir, 'snippet.mjs'), js)
    execFileSync(process.execPath, ['snippet.mjs'], { cwd: dir, stdio: 'pipe' })
    written.js = readFileSync(join(dir, output))
    rmSync(join(dir, output))
    if (hasPythonRequests()) {
      writeFileSync(join(dir, 'snippet.py'), py)
      execFileSync('python3', ['snippet.py'], { cwd: dir, stdio: 'pipe' })
      written.py = readFileSync(join(dir, output))
    }
    return written
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The files a snippet reads and writes: curl's `@file` and `-o`, readFile/writeFile, Python's open(). */
function snippetFiles(text) {
  const found = (pattern) => [...text.matchAll(pattern)].map((match) => match.slice(1).find((group) => group !== undefined))
  return {
    reads: found(/@([^'\s]+)'|readFile\("([^"]+)"\)|open\("([^"]+)", "rb"\)/g),
    writes: found(/-o '([^']+)'|writeFile\("([^"]+)"|open\("([^"]+)", "wb"\)/g),
  }
}

const isWebp = (bytes) => bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WEBP'

/** Open the tester's folded options ("More options"). */
const openMore = (page) => page.evaluate(() => document.querySelector('details.more-options')?.setAttribute('open', ''))

/** Use the tester: compress the fixture photo to WebP at 320 px wide and wait for the preview. */
async function compressPhoto(page, extra = async () => {}) {
  await page.check('input[name="endpoint"][value="compress"]')
  await page.setInputFiles('#file', PHOTO)
  await page.selectOption('#opt-format', 'webp')
  await page.fill('#opt-quality', '')
  await page.fill('#opt-width', '320')
  await extra()
  await send(page)
  await page.waitForFunction(() => {
    const img = document.querySelector('#after-img')
    return !document.querySelector('#compare').hidden && img.complete && img.naturalWidth > 0
  })
}

const noOverflow = (page) => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)

/** An origin on loopback for GET /img (ORIGIN_URL): the fixture photo at /images/photos/cat.jpg. */
async function startOrigin() {
  const photo = readFileSync(PHOTO)
  const server = http.createServer((req, res) => {
    if (req.url === '/images/photos/cat.jpg') res.writeHead(200, { 'Content-Type': 'image/jpeg', ETag: '"cat"' }).end(photo)
    else res.writeHead(404).end()
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${server.address().port}/images/`, close: () => server.close() }
}

let dev
let unlimited
let browser
let origin
try {
  origin = await startOrigin()
  dev = await startWranglerDev({ ORIGIN_URL: origin.url })
  // A second server whose anonymous policy is unlimited, for the examples' output without rate-limit headers
  // (started after the first: two starting at once can race for a port).
  unlimited = await startWranglerDev({ RATE_LIMIT_ANON_PER_MINUTE: '0' })
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
  // reducedMotion: no smooth scrolling, so the screenshot is taken where the page was scrolled to.
  const desktop = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'light', reducedMotion: 'reduce' })
  const { page, errors } = await openPage(desktop)

  await check('loads / from wrangler dev with its CSP, and builds every area', async () => {
    const res = await loadReady(page, dev.base)
    assert(res.status() === 200, `status ${res.status()}`)
    const csp = res.headers()['content-security-policy'] ?? ''
    assert(csp.includes("default-src 'none'") && csp.includes("script-src 'self'"), `CSP: ${csp}`)
    assert(await page.locator('#op-post-api-compress').count() === 1, 'no documentation for POST /api/compress')
    assert(await page.locator('#error-invalid_option').count() === 1, 'no error row with id error-invalid_option')
    const quota = await page.textContent('#quota-body')
    assert(/60 per minute/.test(quota), `quotas: ${quota}`)
    // The limits in numbers, as wrangler.toml sets them.
    const limits = await page.textContent('#service-limits')
    for (const text of ['25 MiB', '50 MP', '120 MiB', '16384 px', '9 up to 0.1 MP']) assert(limits.includes(text), `limits lack ${text}: ${limits}`)
    // The measured matrix as /api/formats publishes it: every row, and exactly its refused cells shown refused.
    const { limits: published } = await (await fetch(`${dev.base}/api/formats`)).json()
    const rows = published.measuredMatrix.rows.length
    assert(await page.locator('#measured-matrix tbody tr').count() === rows, `the measured matrix does not have its ${rows} rows`)
    const refusedCells = published.measuredMatrix.rows.flatMap((row) => row.cells).filter((cell) => cell.status === 422).length
    assert(await page.locator('#measured-matrix .refused').count() === refusedCells, `the page shows other than the ${refusedCells} refused cells of /api/formats`)
    await page.waitForFunction(() => document.querySelector('#example-compress pre').textContent.includes('curl'))
    assert(await page.locator('#opt-quality').count() === 1, 'no quality control generated from /api/formats')
  })

  /** The operations the served OpenAPI document has: the page shows one article each. */
  const operationCount = async () => Object.values((await (await fetch(`${dev.base}/api/openapi.json`)).json()).paths).reduce((n, ops) => n + Object.keys(ops).length, 0)

  await check('the documentation search narrows endpoints, parameters and error codes to what is typed', async () => {
    const visibleOps = () => page.locator('article.op:visible').count()
    const all = await visibleOps()
    const documented = await operationCount()
    assert(all === documented, `${all} endpoints shown before a search, of ${documented}`)
    await page.fill('#docs-search', 'signature')
    assert((await page.locator('#error-invalid_signature').isVisible()) && !(await page.locator('#error-invalid_option').isVisible()), 'error rows not narrowed')
    assert(await page.locator('#op-get-img-options-source').isVisible(), 'GET /img not found by "signature"')
    assert(!(await page.locator('#op-get-api-health').isVisible()), 'GET /api/health shown for "signature"')
    assert(/\d+ match/.test(await page.textContent('#docs-search-count')), 'no match count')
    await page.fill('#docs-search', 'quality lossy')
    assert(await page.locator('#op-post-api-compress').isVisible(), 'compress not found by its quality parameter')
    await page.fill('#docs-search', '')
    assert((await visibleOps()) === all && (await page.locator('#error-invalid_option').isVisible()), 'clearing the search does not show everything again')
  })

  await check('each endpoint shows an example request, and its example answers run as documented', async () => {
    const request = await page.textContent('#op-post-api-compress pre.example-request')
    assert(request.includes("--data-binary '@photo.jpg'") && request.includes('/api/compress?format=webp&width=800&quality=75') && request.includes("-o 'photo.imgedge.webp'"), `compress example: ${request}`)
    const img = await page.textContent('#op-get-img-options-source pre.example-request')
    assert(img.includes('/img/width=800,format=auto/photos/cat.jpg') && img.includes('Accept: image/avif'), `img example: ${img}`)
    assert(await page.locator('article.op pre.example-request').count() === await operationCount(), 'not one example request per endpoint')
    // The example answers are what the API answers: the 400 example has the fields a real 400 has.
    const answers = await page.$$eval('#op-post-api-compress pre.example-answer', (pres) => pres.map((pre) => JSON.parse(pre.textContent)))
    const problem = answers.find((a) => a.status === 400)
    const real = await (await fetch(`${dev.base}/api/compress?quality=0`, { method: 'POST', headers: { 'Content-Type': 'image/jpeg' }, body: readFileSync(PHOTO) })).json()
    assert(problem && Object.keys(real).filter((k) => !['option', 'errors'].includes(k)).every((k) => k in problem), `example problem ${JSON.stringify(problem)} lacks fields of ${JSON.stringify(real)}`)
    assert(answers.some((a) => a.format === 'webp' && a.output?.width === 800), 'no example JSON answer')
  })

  await check('the header\'s contents mark the section in view', async () => {
    const current = () => page.evaluate(() => document.querySelector('header.top nav a[aria-current]')?.getAttribute('href'))
    await page.evaluate(() => document.querySelector('#limits').scrollIntoView({ block: 'start' }))
    await page.waitForFunction(() => document.querySelector('header.top nav a[aria-current]')?.getAttribute('href') === '#limits')
    await page.evaluate(() => document.querySelector('#docs').scrollIntoView({ block: 'start' }))
    await page.waitForFunction(() => document.querySelector('header.top nav a[aria-current]')?.getAttribute('href') === '#docs')
    assert((await current()) === '#docs', 'the documentation link is not marked')
    await page.evaluate(() => window.scrollTo(0, 0))
  })

  await check('the side panel lists every section, endpoint, error code and example, and follows the reader', async () => {
    assert(await page.isVisible('#toc'), 'no side panel at 1280 px')
    const hrefs = await page.$$eval('#toc a', (links) => links.map((a) => a.getAttribute('href')))
    const expected = await page.evaluate(() => [
      ...[...document.querySelectorAll('main > section[id]')].map((el) => el.id),
      ...[...document.querySelectorAll('article.op[id], tr[id^="error-"], article.example[id]')].map((el) => el.id),
    ])
    const missing = expected.filter((id) => !hrefs.includes(`#${id}`))
    assert(expected.length > 30 && missing.length === 0, `the panel lacks ${missing.join(', ')}`)
    await page.click('#toc a[href="#error-codec_failed"]')
    await page.waitForFunction(() => document.querySelector('#toc a[aria-current="location"]')?.getAttribute('href') === '#error-codec_failed')
    const [row, header] = await page.evaluate(() => [document.querySelector('#error-codec_failed').getBoundingClientRect().top, document.querySelector('header.top').getBoundingClientRect().bottom])
    assert(row >= header, `the row (${row}) is under the header (${header})`)
    assert(await page.getAttribute('#toc a[href="#docs"]', 'aria-current') === 'true', 'its section is not marked')
    const link = await page.evaluate(() => {
      const toc = document.querySelector('#toc').getBoundingClientRect()
      const a = document.querySelector('#toc a[aria-current="location"]').getBoundingClientRect()
      return a.top >= toc.top && a.bottom <= toc.bottom
    })
    assert(link, 'the marked link is scrolled out of the panel')
    await page.evaluate(() => window.scrollTo(0, 0))
  })

  await check('"Try it" beside each endpoint takes the tester to it', async () => {
    assert(await page.locator('article.op button.try-it').count() === 4, 'not one Try it per endpoint')
    await page.click('#op-get-img-options-source button.try-it')
    assert(await page.isChecked('input[name="endpoint"][value="img"]'), 'GET /img not selected')
    assert(await page.isVisible('#img-source'), 'the /img source field is not shown')
    assert(await page.evaluate(() => document.activeElement?.value === 'img'), 'the endpoint is not focused')
    await page.click('#op-post-api-compress button.try-it')
    assert(await page.isChecked('input[name="endpoint"][value="compress"]') && await page.isVisible('#file'), 'compress not selected')
  })

  await check('every form control has a label', async () => {
    const unlabelled = await page.evaluate(() =>
      [...document.querySelectorAll('input, select, textarea')]
        .filter((el) => el.type !== 'hidden' && !el.labels?.length && !el.getAttribute('aria-label'))
        .map((el) => el.id || el.name),
    )
    assert(unlabelled.length === 0, `unlabelled: ${unlabelled.join(', ')}`)
  })

  await check('the tester compresses a real photo to WebP: preview decoded at 320x200, saving shown', async () => {
    await compressPhoto(page)
    const size = await page.evaluate(() => {
      const img = document.querySelector('#after-img')
      return `${img.naturalWidth}x${img.naturalHeight}`
    })
    assert(size === '320x200', `after preview is ${size}`)
    const before = await page.evaluate(() => document.querySelector('#before-img').naturalWidth)
    assert(before === 480, `before preview is ${before} wide`)
    const saving = await page.textContent('#saving')
    assert(/^Saved [\d.]+ KiB \(\d+% smaller\)$/.test(saving), `saving: ${saving}`)
    assert((await page.textContent('#status-line')).startsWith('200'), 'status is not 200')
    assert(/webp · 320×200/.test(await page.textContent('#after-meta')), 'after meta')
    assert(await page.locator('#headers-table tr.timing-row').count() === 1, 'Server-Timing not marked')
    assert(await page.locator('#headers-table tr.rate-row').count() >= 5, 'rate-limit headers not marked')
    // The overlaid comparison: 1:1 shows the 320 px output at 320 CSS px (device pixel ratio 1 here), the divider moves.
    await page.selectOption('#zoom', '1')
    const stageWidth = await page.evaluate(() => document.querySelector('#slider-stage').getBoundingClientRect().width)
    assert(Math.round(stageWidth) === 320, `1:1 stage is ${stageWidth} px wide`)
    await page.focus('#divider')
    await page.keyboard.press('Home')
    for (let i = 0; i < 2; i++) await page.keyboard.press('PageUp')
    const clip = await page.evaluate(() => getComputedStyle(document.querySelector('#split-after')).clipPath)
    assert(clip.includes('20%'), `divider clip: ${clip}`)
    assert(await page.evaluate(() => document.querySelector('#split-before').naturalWidth === 480 && document.querySelector('#split-after').naturalWidth === 320), 'overlaid images not loaded')
    await page.selectOption('#zoom', 'fit')
    const curl = await page.textContent('#curl')
    assert(curl.includes("--data-binary '@photo.jpg'") && curl.includes('/api/compress?format=webp&width=320'), `curl: ${curl}`)
    assert(curl.includes('--fail-with-body') && curl.includes("-o 'photo.imgedge.webp'"), `curl: ${curl}`)
    // The generated JavaScript and Python make the same request and write the same kind of answer.
    const written = runSnippets(await page.textContent('#snippet-js'), await page.textContent('#snippet-py'), 'photo.imgedge.webp')
    assert(isWebp(written.js), 'the JavaScript snippet did not write a WebP')
    if (written.py) assert(isWebp(written.py), 'the Python snippet did not write a WebP')
    const remaining = await page.textContent('#remaining')
    assert(/\d+ of 60/.test(remaining), `remaining: ${remaining}`)
  })


  await check('the JSON answer (Accept: application/json) previews its base64 image', async () => {
    await compressPhoto(page, () => page.selectOption('#accept', 'application/json'))
    await page.waitForFunction(() => document.querySelector('#body-json').textContent.includes('"format": "webp"'))
    const size = await page.evaluate(() => document.querySelector('#after-img').naturalWidth)
    assert(size === 320, `after preview is ${size} wide`)
    await page.selectOption('#accept', '')
  })

  await check('the tester sends multipart/form-data when asked, and copies it as curl -F', async () => {
    await compressPhoto(page, () => page.check('#multipart'))
    assert((await page.textContent('#status-line')).startsWith('200'), 'status is not 200')
    assert(/webp · 320×200/.test(await page.textContent('#after-meta')), 'after meta')
    const curl = await page.textContent('#curl')
    assert(curl.includes("-F 'image=@photo.jpg'") && curl.includes("-F 'format=webp'") && curl.includes("-F 'width=320'") && !curl.includes('?format'), `curl: ${curl}`)
    const written = runSnippets(await page.textContent('#snippet-js'), await page.textContent('#snippet-py'), 'photo.imgedge.webp')
    assert(isWebp(written.js), 'the multipart JavaScript snippet did not write a WebP')
    if (written.py) assert(isWebp(written.py), 'the multipart Python snippet did not write a WebP')
    await page.uncheck('#multipart')
  })

  await check('an invalid option shows the problem and links to its error code', async () => {
    await page.selectOption('#opt-format', 'webp')
    await page.fill('#opt-quality', '500')
    await send(page)
    assert(await page.locator('#status-line a[href="#error-invalid_option"]').count() === 1, 'no link to #error-invalid_option')
    assert((await page.textContent('#status-line')).startsWith('400'), 'status is not 400')
    // The photo compressed before is not shown as if it were this answer.
    for (const stale of ['#compare', '#timing', '#download', '#after-img']) assert(!(await page.isVisible(stale)), `${stale} still shown after a 400`)
    // The link lands with the row below the sticky header, not under it.
    await page.click('#status-line a[href="#error-invalid_option"]')
    await page.waitForFunction(() => location.hash === '#error-invalid_option')
    const { row, header } = await page.evaluate(() => ({
      row: document.querySelector('#error-invalid_option').getBoundingClientRect().top,
      header: document.querySelector('.top').getBoundingClientRect().bottom,
    }))
    assert(row >= header, `the error row (top ${row}) is under the header (bottom ${header})`)
    await page.fill('#opt-quality', '')
    // Chromium logs every 4xx fetch as a console error; this one was asked for.
    const expected = errors.findIndex((text) => text.includes('status of 400') && text.includes('/api/compress'))
    if (expected >= 0) errors.splice(expected, 1)
  })

  await check('the tester is reachable and usable from the keyboard, with a visible focus ring', async () => {
    await page.evaluate(() => window.scrollTo(0, 0))
    await page.focus('input[name="endpoint"]:checked')
    const seen = new Set()
    for (let i = 0; i < 40 && !seen.has('send'); i++) {
      await page.keyboard.press('Tab')
      seen.add(await page.evaluate(() => document.activeElement?.id))
    }
    for (const id of ['file', 'sample', 'opt-format', 'opt-quality', 'opt-width', 'opt-fit', 'accept', 'api-key', 'send']) {
      assert(seen.has(id), `Tab never reached #${id} (reached: ${[...seen].join(', ')})`)
    }
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle)
    assert(outline !== 'none', 'no focus outline on the send button')
    await send(page, () => page.keyboard.press('Enter'))
    assert((await page.textContent('#status-line')).startsWith('200'), 'Enter on the send button did not send')
    assert(await page.evaluate(() => document.activeElement?.id === 'send'), 'the send button lost the focus while sending')
  })

  await check('1: no snippet, example or download writes over the file it reads (JPEG to JPEG, GET /img, the docs)', async () => {
    // Format left empty: a JPEG comes back a JPEG, whose answered name is the input's own.
    await page.check('input[name="endpoint"][value="compress"]')
    await page.setInputFiles('#file', PHOTO)
    await page.selectOption('#opt-format', '')
    await page.fill('#opt-width', '320')
    await send(page)
    assert((await page.textContent('#status-line')).startsWith('200'), 'status is not 200')
    for (const id of ['#curl', '#snippet-js', '#snippet-py']) {
      const { reads, writes } = snippetFiles(await page.textContent(id))
      assert(reads.includes('photo.jpg') && writes.length === 1 && !writes.includes('photo.jpg'), `${id} reads ${reads} and writes ${writes}`)
    }
    const download = await page.getAttribute('#download', 'download')
    assert(download !== 'photo.jpg' && snippetFiles(await page.textContent('#curl')).writes[0] === download, `the download is ${download}`)
    // The documentation's examples, in every language.
    const examples = await page.$$eval('article.op .op-examples pre:not(.example-answer)', (pres) => pres.map((pre) => pre.textContent))
    const endpoints = await page.locator('article.op').count()
    assert(examples.length === 3 * endpoints, `${examples.length} documentation examples for ${endpoints} endpoints`)
    for (const text of examples) {
      const { reads, writes } = snippetFiles(text)
      assert(!writes.some((name) => reads.includes(name) || name === 'cat.jpg'), `an example writes ${writes} over what it reads (${reads}): ${text}`)
    }
  })

  await check('9: the download has the name the snippets write, and a GET leaves the last count of calls', async () => {
    await compressPhoto(page)
    const name = await page.getAttribute('#download', 'download')
    assert(name === snippetFiles(await page.textContent('#curl')).writes[0], `download ${name}`)
    assert(/\d+ of 60/.test(await page.textContent('#remaining')), 'no count after a compress')
    await page.check('input[name="endpoint"][value="health"]')
    await send(page)
    const remaining = await page.textContent('#remaining')
    assert(/\d+ of 60/.test(remaining) && /not counted/.test(remaining), `after a GET: ${remaining}`)
    await page.check('input[name="endpoint"][value="compress"]')
  })

  await check('5: options the chosen format cannot take are disabled, with the reason', async () => {
    await page.check('input[name="endpoint"][value="compress"]')
    await page.setInputFiles('#file', PHOTO)
    await page.selectOption('#opt-format', 'jpeg')
    await page.fill('#opt-quality', '')
    assert(await page.isDisabled('#opt-colors'), 'colors enabled with JPEG output')
    assert(await page.isDisabled('#opt-target'), 'target enabled without quality=auto')
    assert(await page.isDisabled('#opt-lossless'), 'lossless enabled with JPEG output')
    assert(/PNG/.test(await page.textContent('#hint-colors')), 'the colors hint does not say why')
    await page.selectOption('#opt-format', '')
    assert(await page.isDisabled('#opt-colors'), 'colors enabled for a JPEG input with the format left empty')
    await page.selectOption('#opt-format', 'png')
    assert(await page.isEnabled('#opt-colors'), 'colors disabled with PNG output')
    await page.fill('#opt-quality', 'auto')
    assert(await page.isEnabled('#opt-target'), 'target disabled with quality=auto')
    await page.selectOption('#opt-format', 'webp')
    await page.fill('#opt-quality', '')
    await openMore(page)
    await page.check('#opt-lossless')
    assert(await page.isDisabled('#opt-max_bytes') && await page.isDisabled('#opt-quality'), 'max_bytes or quality enabled with lossless')
    await page.uncheck('#opt-lossless')
    assert(await page.isEnabled('#opt-max_bytes'), 'max_bytes still disabled')
  })

  await check('6: the documentation renders anyOf, open ranges and code spans (no raw backticks)', async () => {
    const values = (name) => page.evaluate((name) => {
      const row = [...document.querySelectorAll('#op-post-api-compress tbody tr')].find((tr) => tr.querySelector('td code')?.textContent === name)
      return [...row.cells].map((cell) => cell.textContent).join(' | ')
    }, name)
    const quality = await values('quality')
    assert(/auto or integer 1–100/.test(quality) && !/\bany\b/.test(quality), `quality: ${quality}`)
    const maxBytes = await values('max_bytes')
    assert(/integer ≥ 100/.test(maxBytes), `max_bytes: ${maxBytes}`)
    const raw = await page.evaluate(() => {
      const walker = document.createTreeWalker(document.querySelector('main'), NodeFilter.SHOW_TEXT)
      const found = []
      while (walker.nextNode()) if (walker.currentNode.nodeValue.includes('`') && !walker.currentNode.parentElement.closest('pre')) found.push(walker.currentNode.nodeValue.slice(0, 80))
      return found
    })
    assert(raw.length === 0, `raw backticks: ${raw.join(' | ')}`)
  })

  await check('7: the search filters the quick links and the side panel; no match leaves no empty heading', async () => {
    await page.fill('#docs-search', 'signature')
    assert(await page.isHidden('#docs-body > ul a[href="#op-get-api-health"]'), 'the quick link to the hidden GET /api/health stays')
    assert(await page.isVisible('#docs-body > ul a[href="#op-get-img-options-source"]'), 'the quick link to GET /img went')
    assert(await page.isHidden('#toc a[href="#op-get-api-health"]'), 'the side panel still links to GET /api/health')
    assert(await page.isHidden('#toc a[href="#error-invalid_option"]'), 'the side panel still links to a hidden error code')
    await page.fill('#docs-search', 'zqxj no such word')
    assert(/^0 matches/.test(await page.textContent('#docs-search-count')), 'no "0 matches"')
    const headings = await page.$$eval('#docs-body h3, #docs-body h4', (list) => list.filter((el) => el.offsetParent !== null).map((el) => el.textContent))
    assert(headings.length === 0, `headings left: ${headings.join(', ')}`)
    assert(await page.locator('#docs-body > ul li:visible').count() === 0, 'quick links left')
    await page.fill('#docs-search', '')
    assert(await page.isVisible('#toc a[href="#op-get-api-health"]') && await page.isVisible('#docs-body > ul a[href="#errors"]'), 'clearing the search does not bring the links back')
  })

  await check('layout: at 1440 px each endpoint\'s documentation sits beside its curl, JavaScript and Python examples, with copy buttons, before any request', async () => {
    const wide = await browser.newContext({ viewport: { width: 1440, height: 900 }, reducedMotion: 'reduce' })
    const { page: fresh } = await openPage(wide)
    await loadReady(fresh, dev.base)
    for (const id of await fresh.$$eval('article.op', (ops) => ops.map((op) => op.id))) {
      const [doc, examples] = await fresh.evaluate((id) => ['.op-doc', '.op-examples'].map((part) => document.querySelector(`#${id} ${part}`).getBoundingClientRect().toJSON()), id)
      assert(examples.left >= doc.right && examples.top < doc.top + 80, `${id}: the examples are not beside the documentation`)
    }
    assert(await fresh.isHidden('#result'), 'an answer is shown before any request')
    const compress = '#op-post-api-compress'
    for (const [lang, kind] of [['JavaScript', 'example-js'], ['Python', 'example-py'], ['curl', 'example-request']]) {
      await fresh.click(`${compress} [role="tab"]:text-is("${lang}")`)
      assert(await fresh.isVisible(`${compress} pre.${kind}`), `the ${lang} example is not shown`)
      assert(await fresh.isVisible(`${compress} button.copy:text-is("Copy ${lang}")`), `no copy button for ${lang}`)
      // One language everywhere: every endpoint now shows it.
      assert(await fresh.locator(`article.op pre.${kind}:visible`).count() === await fresh.locator('article.op').count(), `not every endpoint switched to ${lang}`)
    }
    // The README's picture: POST /api/compress's documentation beside its example, as a 1440 x 1000 window shows it.
    if (process.env.UPDATE_SCREENSHOT === '1') {
      await fresh.setViewportSize({ width: 1440, height: 1000 })
      await fresh.evaluate(() => document.querySelector('#op-post-api-compress').scrollIntoView({ block: 'start' }))
      await fresh.waitForTimeout(200)
      await fresh.screenshot({ path: SCREENSHOT })
    }
    // Keys move between the tabs.
    await fresh.focus(`${compress} [role="tab"][aria-selected="true"]`)
    await fresh.keyboard.press('ArrowRight')
    assert(await fresh.evaluate(() => document.activeElement.textContent === 'JavaScript' && document.activeElement.getAttribute('aria-selected') === 'true'), 'ArrowRight does not choose JavaScript')
    // The documentation's JavaScript and Python examples run as shown and write a WebP.
    const written = runSnippets(await fresh.textContent(`${compress} pre.example-js`), await fresh.textContent(`${compress} pre.example-py`), 'photo.imgedge.webp')
    assert(isWebp(written.js), 'the JavaScript example did not write a WebP')
    if (written.py) assert(isWebp(written.py), 'the Python example did not write a WebP')
    // Optional parameters folded: the primary ones shown, the rest under a summary.
    assert(await fresh.isVisible(`${compress} tbody tr:has(code:text-is("width"))`), 'width is folded')
    assert(await fresh.isHidden(`${compress} tbody tr:has(code:text-is("metadata"))`), 'metadata is not folded')
    // The tester shows its own request as code before it is sent, and follows the form.
    await fresh.setInputFiles('#file', PHOTO)
    await fresh.selectOption('#opt-format', 'avif')
    await fresh.fill('#opt-width', '640')
    await fresh.click('#request-code [role="tab"]:text-is("curl")')
    const live = await fresh.textContent('#curl')
    assert(live.includes('/api/compress?format=avif&width=640') && live.includes("-o 'photo.imgedge.avif'") && await fresh.isVisible('#curl'), `the tester's curl before sending: ${live}`)
    assert((await fresh.textContent('#snippet-py')).includes('open("photo.imgedge.avif", "wb")'), 'the tester\'s Python does not follow the form')
    // The tester folds its optional options too.
    assert(await fresh.isVisible('#opt-width') && await fresh.isHidden('#opt-metadata'), 'the tester does not fold its optional options')
    await fresh.click('details.more-options > summary')
    assert(await fresh.isVisible('#opt-metadata'), 'the tester\'s more options do not open')
    await wide.close()
  })

  await check('layout: "Try it" carries the example\'s parameters into the tester', async () => {
    await page.click('#op-post-api-compress button.try-it')
    assert(await page.isChecked('input[name="endpoint"][value="compress"]'), 'compress not selected')
    const set = await page.evaluate(() => ['format', 'width', 'quality'].map((name) => document.querySelector(`#opt-${name}`).value).join(','))
    assert(set === 'webp,800,75', `the tester has ${set}, not webp,800,75`)
    await page.click('#op-get-img-options-source button.try-it')
    const img = await page.evaluate(() => [document.querySelector('#opt-format').value, document.querySelector('#opt-width').value, document.querySelector('#opt-quality').value, document.querySelector('#img-source').value, document.querySelector('#accept').value].join(','))
    assert(img === 'auto,800,,photos/cat.jpg,image/avif,image/webp,*/*', `GET /img took ${img}`)
    await page.click('#op-post-api-compress button.try-it')
    await page.selectOption('#accept', '')
  })

  await check("a problem's type URI (/#error-<code>) opens on its row of the error table", async () => {
    const linked = await desktop.newPage()
    await linked.goto(`${dev.base}/#error-rate_limited`)
    await linked.waitForSelector('html[data-ready="true"]')
    const target = await linked.evaluate(() => {
      const row = document.querySelector(':target')
      const box = row?.getBoundingClientRect()
      return row && { id: row.id, visible: box.top >= 0 && box.bottom <= window.innerHeight }
    })
    assert(target?.id === 'error-rate_limited' && target.visible, `target: ${JSON.stringify(target)}`)
    await linked.close()
  })

  await check('without /api/openapi.json the page says so, and the tester still works', async () => {
    const degraded = await desktop.newPage()
    await degraded.route('**/api/openapi.json', (route) => route.fulfill({ status: 503, body: 'down' }))
    await degraded.goto(`${dev.base}/`)
    await degraded.waitForSelector('html[data-ready="true"]')
    assert(/could not be loaded/.test(await degraded.textContent('#docs-body')), 'no message in the documentation area')
    assert(!(await degraded.isHidden('#load-status')), 'no page-level notice')
    assert(await degraded.locator('#opt-fit option').count() === 5, 'fit control not built from the fallback values')
    await degraded.close()
  })

  await check('2: after a network failure, a file over MAX_INPUT_BYTES or a non-Latin API key, nothing of the last answer stays', async () => {
    const { page: tester } = await openPage(desktop)
    // The limit the page checks against is the one /api/formats publishes: here 200 kB, so the refused file is small.
    const limit = 200_000
    await tester.route('**/api/formats', async (route) => {
      const res = await route.fetch()
      const body = await res.json()
      body.limits.maxInputBytes = limit
      await route.fulfill({ response: res, json: body })
    })
    await loadReady(tester, dev.base)
    let sent = 0
    tester.on('request', (request) => request.url().includes('/api/compress') && sent++)
    const stale = async (why) => {
      assert(await tester.isHidden('#result'), `${why}: the answer area is still shown`)
      for (const id of ['#status-line', '#saving', '#after-meta', '#before-meta']) assert((await tester.textContent(id)) === '', `${why}: ${id} still holds the last answer`)
      assert(await tester.locator('#headers-table tbody tr').count() === 0, `${why}: the last headers stay`)
      assert(await tester.isVisible('#request-error'), `${why}: no message`)
    }
    await compressPhoto(tester)
    // The connection fails.
    await tester.route('**/api/compress*', (route) => route.abort('failed'))
    await send(tester)
    await stale('network failure')
    await tester.unroute('**/api/compress*')
    // A file over the published limit is refused before sending.
    await compressPhoto(tester)
    const before = sent
    await tester.setInputFiles('#file', { name: 'huge.jpg', mimeType: 'image/jpeg', buffer: Buffer.alloc(limit + 1) })
    assert(/over the .* limit/.test(await tester.textContent('#file-info')), 'choosing the file does not warn')
    await send(tester)
    await stale('file over MAX_INPUT_BYTES')
    assert(sent === before, 'the file over the limit was sent')
    assert(/MAX_INPUT_BYTES/.test(await tester.textContent('#request-error')), 'the message does not name the limit')
    // A key no header can carry.
    await compressPhoto(tester)
    await tester.fill('#api-key', 'ключ')
    await send(tester)
    await stale('non-Latin API key')
    await tester.close()
  })

  await check('layout: a long conversion shows its progress and can be cancelled', async () => {
    const { page: tester } = await openPage(desktop)
    await loadReady(tester, dev.base)
    await compressPhoto(tester)
    // The answer is held back 10 s (a slow AVIF encode, without spending the CPU); the cancel comes long before.
    await tester.route('**/api/compress*', async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 10_000))
      await route.continue().catch(() => {})
    })
    await tester.click('#send')
    await tester.waitForSelector('#progress:not([hidden])')
    assert(await tester.isVisible('#progress progress') && /Waiting/.test(await tester.textContent('#progress-text')), 'no progress shown')
    await tester.click('#cancel')
    await tester.waitForSelector('#result[aria-busy="false"]', { state: 'attached' })
    assert(/Cancelled/.test(await tester.textContent('#request-error')), 'no "Cancelled" message')
    assert(await tester.isHidden('#progress') && await tester.isHidden('#result'), 'progress or the old answer still shown')
    assert(await tester.getAttribute('#send', 'aria-disabled') === null, 'the send button stays disabled')
    await tester.unroute('**/api/compress*')
    await compressPhoto(tester)
    assert(await tester.isHidden('#request-error'), 'the cancel message outlives the next answer')
    await tester.close()
  })

  await check('3: no horizontal overflow at 360 px at any zoom; the zoom control stays on screen', async () => {
    const phone = await browser.newContext({ viewport: { width: 360, height: 740 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true })
    const { page: small } = await openPage(phone)
    await loadReady(small, dev.base)
    // A 1600 px answer: bigger than the screen at every zoom.
    await compressPhoto(small, async () => {
      await small.fill('#opt-width', '1600')
      await openMore(small)
      await small.check('#opt-enlarge')
    })
    for (const zoom of ['fit', '1', '2', '4']) {
      await small.selectOption('#zoom', zoom)
      const { scroll, right } = await small.evaluate(() => ({ scroll: document.documentElement.scrollWidth, right: document.querySelector('#zoom').getBoundingClientRect().right }))
      assert(scroll <= 360 && right <= 360, `zoom ${zoom}: page ${scroll} px wide, zoom control ends at ${right}`)
    }
    await phone.close()
  })

  await check('4: the divider is visible, follows a pointer drag and the keys; zoomed in, the frame opens on it', async () => {
    await compressPhoto(page)
    await page.selectOption('#zoom', 'fit')
    assert(await page.locator('#divider').count() === 1, 'no divider')
    await page.locator('#slider-frame').scrollIntoViewIfNeeded()
    const stage = await page.locator('#slider-stage').boundingBox()
    const divider = await page.locator('#divider').boundingBox()
    assert(divider && divider.width > 0 && Math.abs(divider.x + divider.width / 2 - (stage.x + stage.width / 2)) < 2, `divider at ${JSON.stringify(divider)} in ${JSON.stringify(stage)}`)
    assert(await page.isVisible('#divider'), 'the divider is not visible')
    const value = () => page.evaluate(() => Number(document.querySelector('#divider').getAttribute('aria-valuenow')))
    const clipAt = () => page.evaluate(() => getComputedStyle(document.querySelector('#split-after')).clipPath)
    // Drag from the divider to a quarter of the width.
    await page.mouse.move(divider.x + divider.width / 2, stage.y + stage.height / 2)
    await page.mouse.down()
    await page.mouse.move(stage.x + stage.width / 4, stage.y + stage.height / 2, { steps: 5 })
    await page.mouse.up()
    assert(Math.abs((await value()) - 25) <= 1, `after a drag to a quarter: ${await value()}`)
    assert((await clipAt()).includes(`${await value()}%`), `clip ${await clipAt()}`)
    await page.focus('#divider')
    await page.keyboard.press('ArrowRight')
    assert(Math.abs((await value()) - 26) <= 1, `ArrowRight: ${await value()}`)
    await page.keyboard.press('End')
    assert((await value()) === 100, `End: ${await value()}`)
    await page.keyboard.press('Home')
    await page.keyboard.press('PageUp')
    assert((await value()) === 10, `Home, PageUp: ${await value()}`)
    // 4:1: the 320 px answer is 1280 px wide in a narrower frame, scrolled so the divider is in view.
    await page.keyboard.press('End')
    for (let i = 0; i < 5; i++) await page.keyboard.press('PageDown')
    await page.selectOption('#zoom', '4')
    const inView = await page.evaluate(() => {
      const frame = document.querySelector('#slider-frame').getBoundingClientRect()
      const line = document.querySelector('#divider').getBoundingClientRect()
      const middle = line.left + line.width / 2
      return { inside: middle > frame.left && middle < frame.right, scrolled: document.querySelector('#slider-frame').scrollLeft }
    })
    assert(inView.inside && inView.scrolled > 0, `at 4:1 the divider is out of view: ${JSON.stringify(inView)}`)
    await page.selectOption('#zoom', 'fit')
  })

  await check('8: axe-core finds no serious or critical violation (with an answer shown: desktop light, phone dark)', async () => {
    const found = []
    const audit = async (target, label) => {
      await target.evaluate(axe.source)
      const violations = await target.evaluate(async () => (await window.axe.run(document, { resultTypes: ['violations'] })).violations
        .filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`))
      found.push(...violations.map((v) => `${label}: ${v}`))
    }
    await compressPhoto(page)
    // Folded parts open, so what they hold is audited too.
    await page.evaluate(() => document.querySelectorAll('details').forEach((details) => (details.open = true)))
    await audit(page, 'desktop, light')
    const phone = await browser.newContext({ viewport: { width: 360, height: 740 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true, colorScheme: 'dark' })
    const { page: small } = await openPage(phone)
    await loadReady(small, dev.base)
    await compressPhoto(small)
    await audit(small, 'phone, dark')
    await phone.close()
    assert(found.length === 0, found.join('\n     '))
  })

  await check('9: the examples say "not counted" under an unlimited policy, not "null of null"', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'imgedge-example-'))
    try {
      copyFileSync(PHOTO, join(dir, 'photo.jpg'))
      const examples = fileURLToPath(new URL('../../public/examples/', import.meta.url))
      const env = { ...process.env, IMGEDGE_URL: unlimited.base }
      const outputs = [execFileSync(process.execPath, [join(examples, 'compress.mjs'), 'photo.jpg'], { cwd: dir, env }).toString()]
      if (hasPythonRequests()) outputs.push(execFileSync('python3', [join(examples, 'compress.py'), 'photo.jpg'], { cwd: dir, env }).toString())
      for (const out of outputs) assert(/^rate limit: not counted$/m.test(out) && !out.includes('null') && !out.includes('None'), out)
      // The default output name is not the input's.
      assert(isWebp(readFileSync(join(dir, 'photo.imgedge.webp'))), 'no photo.imgedge.webp written')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  await check('dark mode follows prefers-color-scheme', async () => {
    await page.emulateMedia({ colorScheme: 'dark' })
    const [bg, fg] = await page.evaluate(() => {
      const style = getComputedStyle(document.body)
      return [style.backgroundColor, style.color]
    })
    const light = (rgb) => rgb.match(/\d+/g).slice(0, 3).reduce((sum, n) => sum + Number(n), 0) / 3
    assert(light(bg) < 60 && light(fg) > 180, `dark mode colours: background ${bg}, text ${fg}`)
    await page.emulateMedia({ colorScheme: 'light' })
  })

  await check('no console errors or CSP violations on the page', async () => {
    assert(errors.length === 0, errors.join('\n'))
  })

  await check('a 360 px phone: no horizontal overflow, before and after a compress', async () => {
    const phone = await browser.newContext({ viewport: { width: 360, height: 740 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true })
    const { page: small, errors: phoneErrors } = await openPage(phone)
    await loadReady(small, dev.base)
    assert(await small.isHidden('#toc'), 'the side panel takes room on a phone')
    assert(await noOverflow(small), 'page is wider than the screen')
    await compressPhoto(small)
    assert(await noOverflow(small), 'page is wider than the screen after a compress')
    assert(phoneErrors.length === 0, phoneErrors.join('\n'))
    await phone.close()
  })

  await check('the tester delivers an image with GET /img: URL from the options, the image, a cache miss then a hit, a srcset snippet', async () => {
    await page.check('input[name="endpoint"][value="img"]')
    assert(await page.isHidden('#drop'), 'the file drop is shown for GET /img')
    await page.fill('#img-source', 'photos/cat.jpg')
    await page.selectOption('#opt-format', 'webp')
    await page.fill('#opt-width', '200')
    await page.selectOption('#accept', '')
    const delivered = async () => {
      await send(page)
      await page.waitForFunction(() => {
        const img = document.querySelector('#delivered-img')
        return !document.querySelector('#delivered').hidden && img.complete && img.naturalWidth > 0
      })
      return page.textContent('#delivered-meta')
    }
    const first = await delivered()
    assert(/webp · 200×125 .* fwd=miss; stored/.test(first), `first: ${first}`)
    assert(await page.isHidden('#compare'), 'the compress comparison is still shown')
    const line = await page.textContent('#request-line')
    assert(line.includes('GET /img/') && line.includes('format=webp') && line.includes('width=200') && line.includes('/photos/cat.jpg'), `request line: ${line}`)
    const second = await delivered()
    assert(/imgedge; hit/.test(second), `second: ${second}`)
    const snippet = await page.textContent('#srcset')
    assert(snippet.includes('srcset=') && snippet.includes('width=400') && snippet.includes('1200w'), `snippet: ${snippet}`)
    assert((await page.textContent('#curl')).includes('/img/'), 'curl lacks the /img URL')
    // 1: the answer is written beside the source's own name (the file uploaded as photos/cat.jpg), not over it.
    const { writes } = snippetFiles(await page.textContent('#curl'))
    assert(writes.length === 1 && writes[0] === 'cat.imgedge.webp', `GET /img's curl writes ${writes}`)
    await page.check('input[name="endpoint"][value="compress"]')
  })

  await check('the <picture> and srcset example page shows GET /img images', async () => {
    const { page: pictures, errors: pictureErrors } = await openPage(desktop)
    await pictures.goto(`${dev.base}/examples/picture.html`)
    await pictures.waitForFunction(() => [...document.images].every((img) => img.complete && img.naturalWidth > 0))
    const chosen = await pictures.evaluate(() => [...document.images].map((img) => img.currentSrc))
    assert(chosen.length === 2 && chosen.every((src) => src.includes('/img/width=')), `sources: ${chosen.join(', ')}`)
    assert(chosen[1].includes('format=avif'), `<picture> did not take AVIF: ${chosen[1]}`)
    const unexpected = pictureErrors.filter((text) => !text.includes('/favicon.ico'))
    assert(unexpected.length === 0, unexpected.join('\n'))
    await pictures.close()
  })

  await check('the HTML form example posts multipart and gets a WebP back', async () => {
    const { page: form, errors: formErrors } = await openPage(desktop)
    await form.goto(`${dev.base}/examples/form.html`)
    await form.setInputFiles('input[name="image"]', PHOTO)
    await form.fill('input[name="width"]', '240')
    const [answer] = await Promise.all([
      form.waitForResponse((res) => res.url().includes('/api/compress')),
      form.click('button[type="submit"]'),
    ])
    assert(answer.status() === 200, `status ${answer.status()}`)
    assert(answer.headers()['content-type'] === 'image/webp', `type ${answer.headers()['content-type']}`)
    assert(answer.headers()['x-output-width'] === '240', `width ${answer.headers()['x-output-width']}`)
    // The browser's own request for /favicon.ico, made for the image document, is no error of the form's.
    const unexpected = formErrors.filter((text) => !text.includes('/favicon.ico'))
    assert(unexpected.length === 0, unexpected.join('\n'))
  })
} catch (error) {
  failed++
  console.log(`FAIL ${error.stack ?? error}`)
} finally {
  await browser?.close()
  await dev?.stop()
  await unlimited?.stop()
  origin?.close()
}
finish()
