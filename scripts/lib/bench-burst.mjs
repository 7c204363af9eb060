// The burst phase of `npm run bench -- --burst`: a page's first view, under wrangler.toml's default limits, each part
// against a fresh `wrangler dev` (a fresh isolate, an empty cache, a fresh rate-limit window):
//   page    24 distinct ~2 MP JPEGs from R2 at width=640,format=auto with Chrome's Accept, all at once
//   origin  the same 24 from an HTTP origin on loopback (ALLOWED_SOURCES)
//   same    one uncached variant of a 2 MP JPEG asked 30 times at once (conversions counted from Cache-Status)
//   overload QUEUE_TIMEOUT_MS=3000, six distinct 12 MP JPEGs to 3500 px WebP at once, then small conversions 4, 8, 12 s later
// with workerd's resident memory (the process that runs the worker) sampled through each part.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { memoryOf, startWorker, tempDir } from './devserver.mjs'

const CHROME_ACCEPT = 'image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8'
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]

/** Film grain: noise about mid-grey, seeded by `seed`. */
function grain(width, height, seed) {
  const noise = Buffer.alloc(width * height * 3)
  let state = (seed + 1) * 2654435761
  for (let p = 0; p < noise.length; p++) {
    state = (state * 1103515245 + 12345) >>> 0
    noise[p] = 128 + ((state >>> 16) % 41) - 20
  }
  return noise
}

/** Photos made for this phase from the corpus (or synthesised): `count` distinct JPEGs of about `megapixels`. */
async function makePhotos({ sharp, corpusDir, count, megapixels, quality = 85 }) {
  const sources = corpusDir ? fs.readdirSync(corpusDir).filter((name) => /\.(jpe?g|png)$/i.test(name)).sort().map((name) => path.join(corpusDir, name)) : []
  const width = Math.round(Math.sqrt(megapixels * 1e6 * 1.5))
  const height = Math.round(width / 1.5)
  const photos = []
  for (let i = 0; i < count; i++) {
    let image
    if (sources.length) {
      // Each a different crop of a corpus photo, some mirrored: distinct bytes and content, none tuned on.
      const source = sharp(sources[i % sources.length])
      const { width: w, height: h } = await source.metadata()
      const side = 0.6 + 0.1 * (Math.floor(i / sources.length) % 4)
      const cw = Math.round(w * side)
      const ch = Math.round(Math.min(h, cw / 1.5))
      image = sharp(sources[i % sources.length]).extract({ left: Math.round((w - cw) * ((i * 37) % 100) / 100), top: Math.round((h - ch) * ((i * 53) % 100) / 100), width: cw, height: ch })
      if (i % 2) image = image.flop()
      // Upscaled crops are soft; a camera's photo has grain, which is what makes its JPEG 3-5 MiB at 12 MP.
      image = sharp(await image.resize(width, height, { fit: 'fill' }).toBuffer()).composite([{ input: grain(width, height, i), raw: { width, height, channels: 3 }, blend: 'soft-light' }])
    } else {
      const noise = Buffer.alloc(width * height * 3)
      for (let p = 0; p < noise.length; p++) noise[p] = (p * (i + 7) + ((p / 3 / width) | 0) * 3) & 255
      image = sharp(noise, { raw: { width, height, channels: 3 } }).blur(2)
    }
    photos.push(await image.jpeg({ quality, mozjpeg: false }).toBuffer())
  }
  return photos
}

/** Resident memory of the workerd that runs the worker, sampled every 100 ms while `work` runs. */
async function sampled(server, work) {
  const pid = server.worker?.pid
  const before = pid ? memoryOf(pid)?.rss ?? 0 : 0
  let peak = before
  const timer = setInterval(() => {
    const now = pid ? memoryOf(pid)?.rss ?? 0 : 0
    if (now > peak) peak = now
  }, 100)
  try {
    const result = await work()
    return { ...result, rssBeforeMiB: before / 1024, rssPeakMiB: peak / 1024 }
  } finally {
    clearInterval(timer)
  }
}

/** Every URL at once; each answer's status, Cache-Status, Retry-After and time to its last byte. */
async function burst(urls, headers = {}) {
  const t0 = performance.now()
  const answers = await Promise.all(urls.map(async (url) => {
    const t = performance.now()
    let res
    try {
      res = await fetch(url, { headers }).catch((error) => {
        // A kept-alive connection the dev server closed while the bucket was filled: the client's, not the worker's.
        if (error.cause?.code === 'UND_ERR_SOCKET' && performance.now() - t < 100) return fetch(url, { headers })
        throw error
      })
    } catch (error) {
      // The connection failed (wrangler dev's proxy gave up): counted as such, not a crash of the phase.
      return { status: `failed: ${error.cause?.code ?? error.message}`, ms: performance.now() - t, bytes: 0 }
    }
    const bytes = (await res.arrayBuffer()).byteLength
    return { status: res.status, cacheStatus: res.headers.get('cache-status'), retryAfter: res.headers.get('retry-after'), ms: performance.now() - t, bytes }
  }))
  const seconds = (performance.now() - t0) / 1000
  const times = answers.map((a) => a.ms).sort((a, b) => a - b)
  const statuses = {}
  for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1
  return { requests: urls.length, seconds, perSecond: urls.length / seconds, p50: percentile(times, 50), p95: percentile(times, 95), statuses, answers }
}

/**
 * Into the running worker's local bucket. Run from a folder of its own: wrangler run in the worker's tree writes
 * there, and the dev server then reloads, dropping the connections it holds.
 */
function putInBucket({ root, server, key, bytes }) {
  const scratch = tempDir('imgedge-bench-burst-')
  const file = path.join(scratch, 'photo.jpg')
  fs.writeFileSync(file, bytes)
  execFileSync(path.join(root, 'node_modules', '.bin', 'node'), [path.join(root, 'node_modules', 'wrangler', 'bin', 'wrangler.js'), 'r2', 'object', 'put', `imgedge-images/${key}`, '--file', file, '--local', '--persist-to', server.persistTo], { cwd: scratch, stdio: 'ignore' })
  fs.rmSync(scratch, { recursive: true, force: true })
}

/** One fresh worker for `run`, with an origin on loopback serving `photos` as /p<i>.jpg. */
async function withWorker({ root, cwd, log, photos, vars = {} }, run) {
  const origin = http.createServer((req, res) => {
    const match = /^\/p(\d+)\.jpg$/.exec(req.url ?? '')
    const photo = match ? photos[Number(match[1])] : undefined
    if (photo) res.writeHead(200, { 'Content-Type': 'image/jpeg', 'Content-Length': photo.length, ETag: `"p${match[1]}"` }).end(photo)
    else res.writeHead(404).end()
  })
  await new Promise((resolve) => origin.listen(0, '127.0.0.1', resolve))
  const originBase = `http://127.0.0.1:${origin.address().port}`
  const server = await startWorker({ root, cwd, vars: { ALLOWED_SOURCES: originBase, ...vars }, prefix: 'imgedge-bench-burst-', log })
  try {
    return await run(server, originBase)
  } finally {
    await server.stop()
    origin.close()
  }
}

const conversions = (answers) => answers.filter((a) => a.cacheStatus?.includes('stored')).length

/**
 * @example
 * const result = await burstPhase({ root, cwd: tree, sharp, corpusDir, log })
 */
export async function burstPhase({ root, cwd, sharp, corpusDir, log }) {
  log('  making 24 photos of 2 MP and 6 of 12 MP ...')
  const page = await makePhotos({ sharp, corpusDir, count: 24, megapixels: 2 })
  const large = await makePhotos({ sharp, corpusDir, count: 6, megapixels: 12 })
  const small = await sharp(page[0]).resize(400).jpeg({ quality: 85 }).toBuffer()
  const result = { inputs: { page: { count: 24, meanBytes: page.reduce((s, b) => s + b.length, 0) / 24 }, large: { count: 6, meanBytes: large.reduce((s, b) => s + b.length, 0) / 6 } } }

  result.page = await withWorker({ root, cwd, log, photos: page }, async (server, originBase) => {
    for (let i = 0; i < page.length; i++) putInBucket({ root, server, key: `page/p${i}.jpg`, bytes: page[i] })
    // One request alone first (another photo's variant), for the single-request time beside the burst's.
    const single = await burst([`${server.base}/img/width=641,format=auto/page/p0.jpg`], { Accept: CHROME_ACCEPT })
    const fromBucket = await sampled(server, () => burst(page.map((_, i) => `${server.base}/img/width=640,format=auto/page/p${i}.jpg`), { Accept: CHROME_ACCEPT }))
    return { singleMs: single.answers[0].ms, singleStatus: single.answers[0].status, singleCacheStatus: single.answers[0].cacheStatus, ...fromBucket }
  })
  log(`  page from R2: ${JSON.stringify(result.page.statuses)}, ${result.page.perSecond.toFixed(1)} images/s, p50 ${result.page.p50.toFixed(0)} ms, p95 ${result.page.p95.toFixed(0)} ms (one alone ${result.page.singleMs.toFixed(0)} ms, ${result.page.singleStatus} ${result.page.singleCacheStatus}), RSS ${result.page.rssBeforeMiB.toFixed(0)} -> peak ${result.page.rssPeakMiB.toFixed(0)} MiB`)

  result.origin = await withWorker({ root, cwd, log, photos: page }, async (server, originBase) =>
    sampled(server, () => burst(page.map((_, i) => `${server.base}/img/width=640,format=auto/${originBase}/p${i}.jpg`), { Accept: CHROME_ACCEPT })))
  log(`  page from an origin: ${JSON.stringify(result.origin.statuses)}, ${result.origin.perSecond.toFixed(1)} images/s, p50 ${result.origin.p50.toFixed(0)} ms, p95 ${result.origin.p95.toFixed(0)} ms, RSS peak ${result.origin.rssPeakMiB.toFixed(0)} MiB`)

  result.same = await withWorker({ root, cwd, log, photos: page }, async (server) => {
    putInBucket({ root, server, key: 'same.jpg', bytes: page[5] })
    const r = await sampled(server, () => burst(Array.from({ length: 30 }, () => `${server.base}/img/width=640,format=auto/same.jpg`), { Accept: CHROME_ACCEPT }))
    return { ...r, conversions: conversions(r.answers) }
  })
  log(`  one variant 30 times: ${JSON.stringify(result.same.statuses)}, ${result.same.conversions} conversion(s), p95 ${result.same.p95.toFixed(0)} ms`)

  result.overload = await withWorker({ root, cwd, log, photos: large, vars: { QUEUE_TIMEOUT_MS: '3000' } }, async (server) => {
    for (let i = 0; i < large.length; i++) putInBucket({ root, server, key: `large/p${i}.jpg`, bytes: large[i] })
    const t0 = performance.now()
    const heavy = await sampled(server, async () => {
      const heavyRun = burst(large.map((_, i) => `${server.base}/img/width=3500,format=webp/large/p${i}.jpg`))
      const later = []
      for (const at of [4000, 8000, 12000]) {
        later.push((async () => {
          await sleep(at - (performance.now() - t0))
          try {
            const res = await fetch(`${server.base}/api/compress?format=webp&width=100`, { method: 'POST', body: small, headers: { 'Content-Type': 'image/jpeg' } })
            await res.arrayBuffer()
            return { at, status: res.status }
          } catch (error) {
            return { at, status: `failed: ${error.cause?.code ?? error.message}` }
          }
        })())
      }
      return { ...(await heavyRun), later: await Promise.all(later) }
    })
    return heavy
  })
  const refused = result.overload.answers.filter((a) => a.status === 503)
  result.overload.every503HasRetryAfter = refused.every((a) => Number(a.retryAfter) >= 1)
  log(`  overload: ${JSON.stringify(result.overload.statuses)}, 503 with Retry-After: ${refused.filter((a) => a.retryAfter).length}/${refused.length} (${refused.map((a) => `${a.ms.toFixed(0)} ms`).join(', ')}), later: ${result.overload.later.map((l) => `${l.at / 1000} s ${l.status}`).join(', ')}, RSS peak ${result.overload.rssPeakMiB.toFixed(0)} MiB`)
  for (const part of ['page', 'origin', 'same', 'overload']) delete result[part].answers
  result.overload.refusedMs = refused.map((a) => Math.round(a.ms))
  return result
}

/** The goals of the phase, each met or not. */
export function burstGoals(r) {
  const only200 = (s) => Object.keys(s).every((status) => status === '200')
  return [
    { goal: '24 distinct 2 MP JPEGs from R2 at once: 24 x 200', met: only200(r.page.statuses) && r.page.statuses[200] === 24, value: JSON.stringify(r.page.statuses) },
    { goal: 'the same from an HTTP origin: no 502', met: !r.origin.statuses[502] && r.origin.statuses[200] === 24, value: JSON.stringify(r.origin.statuses) },
    { goal: 'one uncached variant 30 times: 30 x 200, at most 2 conversions', met: r.same.statuses[200] === 30 && r.same.conversions <= 2, value: `${JSON.stringify(r.same.statuses)}, ${r.same.conversions} conversion(s)` },
    { goal: 'overload: every 503 has Retry-After; 4, 8 and 12 s later all 200', met: r.overload.every503HasRetryAfter && r.overload.later.every((l) => l.status === 200), value: `${JSON.stringify(r.overload.statuses)}; later ${r.overload.later.map((l) => l.status).join(', ')}` },
  ]
}

/** The phase as Markdown. */
export function burstSection(r) {
  const lines = [
    '| part | answers | images/s | p50 / p95 ms | workerd RSS before -> peak MiB |',
    '|---|---|---|---|---|',
    `| page, R2 (one alone: ${r.page.singleMs.toFixed(0)} ms) | ${JSON.stringify(r.page.statuses)} | ${r.page.perSecond.toFixed(1)} | ${r.page.p50.toFixed(0)} / ${r.page.p95.toFixed(0)} | ${r.page.rssBeforeMiB.toFixed(0)} -> ${r.page.rssPeakMiB.toFixed(0)} |`,
    `| page, origin | ${JSON.stringify(r.origin.statuses)} | ${r.origin.perSecond.toFixed(1)} | ${r.origin.p50.toFixed(0)} / ${r.origin.p95.toFixed(0)} | ${r.origin.rssBeforeMiB.toFixed(0)} -> ${r.origin.rssPeakMiB.toFixed(0)} |`,
    `| one variant x 30 (${r.same.conversions} conversion) | ${JSON.stringify(r.same.statuses)} | ${r.same.perSecond.toFixed(1)} | ${r.same.p50.toFixed(0)} / ${r.same.p95.toFixed(0)} | ${r.same.rssBeforeMiB.toFixed(0)} -> ${r.same.rssPeakMiB.toFixed(0)} |`,
    `| overload, 6 x 12 MP (503 after ${r.overload.refusedMs.join(', ')} ms) | ${JSON.stringify(r.overload.statuses)} | ${r.overload.perSecond.toFixed(2)} | ${r.overload.p50.toFixed(0)} / ${r.overload.p95.toFixed(0)} | ${r.overload.rssBeforeMiB.toFixed(0)} -> ${r.overload.rssPeakMiB.toFixed(0)} |`,
    '',
    '| goal | met | measured |',
    '|---|---|---|',
    ...burstGoals(r).map((g) => `| ${g.goal} | ${g.met ? 'yes' : '**no**'} | ${g.value} |`),
  ]
  return lines.join('\n')
}

/**
 * docs/results/burst.md: the phase's tables with how to rerun it.
 *
 * @example
 * writeBurstDoc(root, result)
 */
export function writeBurstDoc(root, r) {
  const text = [
    '# A page\'s first view: bursts of conversions',
    '',
    'Written by `npm run bench -- --burst`. Each part runs against a fresh `wrangler dev` (a fresh isolate and an empty',
    'cache) with `wrangler.toml`\'s default limits. The photos are crops of the corpus photos made for the run (or',
    `synthesised without the corpus): ${r.inputs.page.count} of about 2 MP (mean ${(r.inputs.page.meanBytes / 1024).toFixed(0)} KiB) and ${r.inputs.large.count} of 12 MP (mean ${(r.inputs.large.meanBytes / 2 ** 20).toFixed(1)} MiB).`,
    '',
    '- **page**: every photo at `width=640,format=auto` with Chrome\'s Accept, all at once, from R2 and from an HTTP',
    '  origin on loopback; "one alone" is one such request on an idle worker.',
    '- **one variant x 30**: the same uncached variant 30 times at once; conversions counted from `Cache-Status`.',
    '- **overload**: `QUEUE_TIMEOUT_MS=3000`, the six 12 MP photos to 3500 px WebP at once, then a small conversion 4, 8',
    '  and 12 s later.',
    '- **RSS**: resident memory of the workerd process that runs the worker, sampled every 100 ms.',
    '',
    burstSection(r),
    '',
    'How the queue handles these: [the queue](../design/queue.md).',
    '',
  ].join('\n')
  fs.writeFileSync(path.join(root, 'docs', 'results', 'burst.md'), text)
}
