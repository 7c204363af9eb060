// The delivery phase of `npm run bench` (and `npm run bench -- --delivery` alone): GET /img against its own
// `wrangler dev`, with an origin on loopback (on ALLOWED_SOURCES) holding the 1 MP photo. At 1 and 16 clients: misses (each
// request a new variant, so each converts), cache hits (one variant, stored), and 304s (If-None-Match on a stored one);
// and the same photo as a key of the local R2 bucket, whose hits and 304s each read R2's head first.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { startWorker, tempDir } from './devserver.mjs'

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]

/** `count` requests from `connections` clients, each taking the next URL when its last answer has arrived. */
async function load(urlFor, count, connections, headers = {}) {
  const latencies = []
  const statuses = {}
  let next = 0
  const t0 = performance.now()
  await Promise.all(Array.from({ length: connections }, async () => {
    while (next < count) {
      const url = urlFor(next++)
      const t = performance.now()
      const res = await fetch(url, { headers })
      await res.arrayBuffer()
      latencies.push(performance.now() - t)
      const key = `${res.status}${res.headers.get('cache-status')?.includes('hit') ? ' hit' : ''}`
      statuses[key] = (statuses[key] ?? 0) + 1
    }
  }))
  const seconds = (performance.now() - t0) / 1000
  latencies.sort((a, b) => a - b)
  return { requests: count, seconds, rps: count / seconds, p50: percentile(latencies, 50), p97_5: percentile(latencies, 97.5), max: latencies.at(-1), statuses }
}

/**
 * @example
 * const rows = await deliveryPhase({ root, cwd: tree, vars, photo: input.body, log })
 */
export async function deliveryPhase({ root, cwd, vars, photo, log, quick = false }) {
  const origin = http.createServer((req, res) => {
    if (req.url === '/images/photo.jpg') res.writeHead(200, { 'Content-Type': 'image/jpeg', ETag: '"bench"' }).end(photo)
    else res.writeHead(404).end()
  })
  await new Promise((resolve) => origin.listen(0, '127.0.0.1', resolve))
  const originBase = `http://127.0.0.1:${origin.address().port}`
  const server = await startWorker({ root, cwd, vars: { ...vars, ALLOWED_SOURCES: originBase }, prefix: 'imgedge-bench-delivery-', log })
  const rows = []
  try {
    // The photo into the running server's local bucket too.
    const scratch = tempDir('imgedge-bench-r2-')
    fs.writeFileSync(path.join(scratch, 'photo.jpg'), photo)
    execFileSync(path.join(root, 'node_modules', '.bin', 'node'), [path.join(root, 'node_modules', 'wrangler', 'bin', 'wrangler.js'), 'r2', 'object', 'put', 'imgedge-images/bucket/photo.jpg', '--file', path.join(scratch, 'photo.jpg'), '--local', '--persist-to', server.persistTo], { cwd, stdio: 'ignore' })
    fs.rmSync(scratch, { recursive: true, force: true })
    const url = (options) => `${server.base}/img/${options}/${originBase}/images/photo.jpg`
    let variant = 0
    for (const connections of [1, 16]) {
      const misses = quick ? Math.max(4, connections) : Math.max(8, connections * 2)
      const hits = quick ? 100 : 500
      const miss = await load(() => url(`width=${400 + variant++},format=webp`), misses, connections)
      const stored = url(`width=${300 + connections},format=webp`)
      const first = await fetch(stored)
      await first.arrayBuffer()
      const hit = await load(() => stored, hits, connections)
      const notModified = await load(() => stored, hits, connections, { 'If-None-Match': first.headers.get('etag') })
      const inBucket = `${server.base}/img/width=${300 + connections},format=webp/bucket/photo.jpg`
      const bucketFirst = await fetch(inBucket)
      await bucketFirst.arrayBuffer()
      const bucketHit = await load(() => inBucket, hits, connections)
      const bucket304 = await load(() => inBucket, hits, connections, { 'If-None-Match': bucketFirst.headers.get('etag') })
      for (const [kind, r] of [['miss (converts)', miss], ['cache hit', hit], ['304', notModified], ['R2 key: cache hit (R2 head, then the cache)', bucketHit], ['R2 key: 304 (R2 head)', bucket304]]) {
        rows.push({ kind, connections, ...r })
        log(`- ${kind}, ${connections} clients: ${r.rps.toFixed(1)} req/s, p50 ${r.p50.toFixed(1)} ms, p97.5 ${r.p97_5.toFixed(1)} ms; ${JSON.stringify(r.statuses)}`)
      }
    }
  } finally {
    await server.stop()
    origin.close()
  }
  return rows
}

/** The Markdown table of the phase's rows. */
export function deliveryTable(rows) {
  const lines = ['| request | clients | requests | req/s | latency p50 / p97.5 / max ms | answers |', '|---|---|---|---|---|---|']
  for (const r of rows) {
    lines.push(`| ${r.kind} | ${r.connections} | ${r.requests} | ${r.rps.toFixed(1)} | ${r.p50.toFixed(1)} / ${r.p97_5.toFixed(1)} / ${r.max.toFixed(1)} | ${Object.entries(r.statuses).map(([s, n]) => `${n}× ${s}`).join(', ')} |`)
  }
  return lines.join('\n')
}
