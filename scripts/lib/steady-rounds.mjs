// Rounds of sustained traffic against one `wrangler dev` (npm run memory:steady -- --rounds N; bench --steady):
// K clients, each sending the mix's conversions one after another for a round's seconds, then the resident memory of
// both workerd processes, the isolate's V8 heap (read through wrangler's inspector proxy) and what the Worker says it
// holds (GET /api/health?memory=1, answered only when DEBUG_MEMORY is set). The same rounds, as many requests each,
// go to the control Worker (scripts/lib/control-worker), which never reads a body: what workerd grows by under
// wrangler dev for the traffic alone.

import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import { memoryOf, removeTempDir, snapshotTree, startWorker } from './devserver.mjs'

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const mib = (kib) => Math.round((kib / 1024) * 10) / 10
const mibOfBytes = (bytes) => Math.round((bytes / 2 ** 20) * 10) / 10

/** Bump when the way the inputs are made changes. */
const RECIPE = 1

/**
 * The issue's mix of small conversions, made from corpus photos the memory work was not tuned on (the tuning used
 * Wood and Dune): a 1600 px JPEG to an 800 px WebP, a 1000 px PNG to WebP, a 1200 px WebP to a 600 px JPEG, and a
 * JPEG cut off at 60 % of its bytes.
 */
export const ROUND_MIX = [
  { key: 'jpeg1600>webp800', photo: 'LadyBird.jpg', width: 1600, format: 'jpeg', query: 'format=webp&width=800', mime: 'image/jpeg' },
  { key: 'png1000>webp', photo: 'Blinds.jpg', width: 1000, format: 'png', query: 'format=webp', mime: 'image/png' },
  { key: 'webp1200>jpeg600', photo: 'Storm.jpg', width: 1200, format: 'webp', query: 'format=jpeg&width=600', mime: 'image/webp' },
  { key: 'truncated-jpeg>webp', photo: 'FreshFlower.jpg', width: 1600, format: 'jpeg', query: 'format=webp', mime: 'image/jpeg', cut: 0.6 },
]

/** The mix's request bodies, made with sharp once and cached in `cacheDir`: [{ ...case, body }]. */
export async function roundInputs({ root, corpusDir, cacheDir, mix = ROUND_MIX, log = () => {} }) {
  const sharp = createRequire(path.join(root, 'package.json'))('sharp')
  fs.mkdirSync(cacheDir, { recursive: true })
  const out = []
  for (const c of mix) {
    const source = path.join(corpusDir, c.photo)
    const file = path.join(cacheDir, `${path.parse(c.photo).name.toLowerCase()}-${c.width}${c.cut ? `-cut${c.cut}` : ''}-r${RECIPE}.${c.format}`)
    if (!fs.existsSync(file)) {
      if (!fs.existsSync(source)) throw new Error(`no ${source}: the rounds need the corpus photos (--corpus DIR)`)
      log(`making ${file} ...`)
      const resized = sharp(source).resize({ width: c.width })
      const encoded = await (c.format === 'png' ? resized.png() : c.format === 'webp' ? resized.webp({ quality: 80 }) : resized.jpeg({ quality: 90 })).toBuffer()
      fs.writeFileSync(file, c.cut ? encoded.subarray(0, Math.round(encoded.length * c.cut)) : encoded)
    }
    out.push({ ...c, body: fs.readFileSync(file) })
  }
  return out
}

/**
 * A Chrome DevTools Protocol session with the Worker's isolate through wrangler's inspector proxy: its V8 heap
 * (Runtime.getHeapUsage) and a full collection on demand. workerd runs an inspector command only when the isolate
 * next runs, so `collectGarbage` sends `nudge` (a cheap request) after it.
 *
 * @example
 * const inspector = await openInspector(server.inspectorPort)
 * console.log(await inspector.heap()) // { used: 5.6, total: 8.8, ... } MiB
 */
export async function openInspector(port) {
  const [target] = await (await fetch(`http://127.0.0.1:${port}/json`)).json()
  // The proxy refuses upgrades without an Origin it knows (and Node's WebSocket sends none of its own).
  const ws = new WebSocket(target.webSocketDebuggerUrl, { headers: { Origin: 'http://127.0.0.1' } })
  await new Promise((resolve, reject) => {
    ws.onopen = resolve
    ws.onerror = () => reject(new Error('the inspector refused the connection'))
  })
  let id = 0
  const pending = new Map()
  ws.onmessage = (event) => {
    const message = JSON.parse(event.data)
    if (pending.has(message.id)) {
      pending.get(message.id)(message)
      pending.delete(message.id)
    }
  }
  const call = (method, params = {}, ms = 10_000) =>
    Promise.race([
      new Promise((resolve) => {
        pending.set(++id, resolve)
        ws.send(JSON.stringify({ id, method, params }))
      }),
      sleep(ms).then(() => ({ error: { message: `${method}: no answer in ${ms} ms` } })),
    ])
  return {
    /** V8's heap of the isolate, MiB: used and reserved, the embedder's (workerd's) part, ArrayBuffer backing stores. */
    async heap() {
      const { result, error } = await call('Runtime.getHeapUsage')
      if (error) return null
      return { used: mibOfBytes(result.usedSize), total: mibOfBytes(result.totalSize), embedder: mibOfBytes(result.embedderHeapUsedSize), backing: mibOfBytes(result.backingStorageSize) }
    },
    async collectGarbage(nudge) {
      const done = call('HeapProfiler.collectGarbage', {}, 30_000)
      await sleep(50)
      await nudge()
      return done
    },
    close: () => ws.close(),
  }
}

/**
 * An answer read whole, as 'ok' or 'STATUS code' (its problem+json's `code`).
 *
 * @example
 * await answerStatus(await fetch(url, { method: 'POST', body })) // '422 corrupt_image'
 */
export async function answerStatus(res) {
  const bytes = await res.arrayBuffer()
  if (res.ok) return 'ok'
  try {
    return `${res.status} ${JSON.parse(new TextDecoder().decode(bytes)).code}`
  } catch {
    return String(res.status)
  }
}

/** POST one case of the mix; the answer's status (answerStatus, or 'timeout' / 'error ...'). */
async function send(base, c) {
  try {
    return await answerStatus(await fetch(`${base}/api/compress?${c.query}`, { method: 'POST', headers: { 'Content-Type': c.mime }, body: c.body, signal: AbortSignal.timeout(300_000) }))
  } catch (error) {
    return error.name === 'TimeoutError' ? 'timeout' : `error ${error.message}`
  }
}

/**
 * One round: `clients` clients, client i starting at case i of the mix and cycling through it, each sending its next
 * request when the last is answered, until `seconds` have passed (or, with `requests`, until that many were sent in
 * all, at most `seconds` apart from the start); requests in flight then are answered and counted.
 */
async function round(base, inputs, { clients, seconds, requests }) {
  const statuses = {}
  let sent = 0
  const deadline = performance.now() + seconds * 1000
  const more = () => (requests === undefined ? performance.now() < deadline : sent < requests)
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      for (let r = 0; more(); r++) {
        sent++
        const status = await send(base, inputs[(client + r) % inputs.length])
        statuses[status] = (statuses[status] ?? 0) + 1
      }
    }),
  )
  // A matched round (the control's) still lasts the round's time, so both servers idle alike between rounds.
  const left = deadline - performance.now()
  if (left > 0) await sleep(left)
  return { requests: sent, statuses }
}

/** RSS of every workerd process of `server`, KiB: { worker, proxy }. */
function rssOf(server) {
  return { worker: memoryOf(server.worker.pid)?.rss ?? NaN, proxy: server.proxy ? (memoryOf(server.proxy.pid)?.rss ?? NaN) : NaN }
}

/** What the Worker reports about itself (null when it does not: the control, or DEBUG_MEMORY unset). */
async function isolateView(base) {
  try {
    const res = await fetch(`${base}/api/health?memory=1`, { signal: AbortSignal.timeout(10_000) })
    const body = await res.json()
    return body.memory ?? null
  } catch {
    return null
  }
}

/**
 * Start a fresh `wrangler dev` in `cwd`, let it idle after one GET /api/health, and run `rounds` rounds against it.
 * `matched` (the control): the request counts per round to send instead of running for the round's time. Returns
 * { idle, rounds: [{ requests, statuses, rss: { worker, proxy } (MiB), heap, isolate }], afterGc }.
 *
 * @example
 * const run = await runRounds({ root, cwd: root, inputs, rounds: 20, vars })
 */
export async function runRounds({ root, cwd = root, inputs, rounds, clients = 12, seconds = 20, settleMs = 2000, vars = {}, matched, log = () => {} }) {
  // From a copy, so that an edit during the minutes of a run does not reload the Worker.
  const tree = cwd === root ? snapshotTree(root, 'imgedge-rounds-tree-') : cwd
  const server = await startWorker({ root, cwd: tree, vars, prefix: 'imgedge-rounds-', log }).catch((error) => {
    if (tree !== cwd) removeTempDir(tree)
    throw error
  })
  let inspector = null
  try {
    await (await fetch(`${server.base}/api/health`)).arrayBuffer()
    await sleep(1000)
    inspector = await openInspector(server.inspectorPort).catch((error) => (log(`  no inspector: ${error.message}`), null))
    const idle = { rss: mapValues(rssOf(server), mib), heap: (await inspector?.heap()) ?? null }
    const results = []
    for (let i = 0; i < rounds; i++) {
      const r = await round(server.base, inputs, { clients, seconds, requests: matched?.[i] })
      await sleep(settleMs)
      const entry = { ...r, rss: mapValues(rssOf(server), mib), heap: (await inspector?.heap()) ?? null, isolate: await isolateView(server.base) }
      results.push(entry)
      log(`  round ${i + 1}: ${entry.requests} requests, worker ${entry.rss.worker} MiB, proxy ${entry.rss.proxy} MiB, heap ${entry.heap?.used ?? '?'} MiB ${JSON.stringify(entry.statuses)}`)
    }
    let afterGc = null
    if (inspector) {
      const gc = await inspector.collectGarbage(() => fetch(`${server.base}/api/health`).then((res) => res.arrayBuffer()))
      await sleep(settleMs)
      afterGc = gc.error ? null : { rss: mapValues(rssOf(server), mib), heap: await inspector.heap() }
    }
    return { idle, rounds: results, afterGc }
  } finally {
    inspector?.close()
    await server.stop()
    if (tree !== cwd) removeTempDir(tree)
  }
}

const mapValues = (object, f) => Object.fromEntries(Object.entries(object).map(([k, v]) => [k, f(v)]))

/**
 * The goals for a run of imgedge and its control: the last `tail` rounds of imgedge's Worker process within
 * `spreadMiB` of each other, and its growth over idle at the last round at most `gapMiB` above the control's.
 */
export function judgeRounds(imgedge, control, { tail = 10, spreadMiB = 10, gapMiB = 40 } = {}) {
  const last = imgedge.rounds.slice(-tail).map((r) => r.rss.worker)
  const spread = Math.round((Math.max(...last) - Math.min(...last)) * 10) / 10
  const growth = (run) => run.rounds.at(-1).rss.worker - run.idle.rss.worker
  const gap = control ? Math.round((growth(imgedge) - growth(control)) * 10) / 10 : null
  const pass = imgedge.rounds.length >= tail && spread <= spreadMiB && (gap === null || gap <= gapMiB)
  return { spread, gap, pass, line: `${pass ? 'PASS' : 'FAIL'} steady: last ${tail} rounds within ${spread} MiB (goal ${spreadMiB}), ${gap === null ? 'no control' : `${gap} MiB over the control's growth (goal under ${gapMiB})`}` }
}

/** The per-round table (Markdown): imgedge and the control side by side, RSS over idle per workerd process. */
export function roundsTable(imgedge, control) {
  const over = (run, r, p) => (Number.isFinite(r.rss[p]) ? Math.round((r.rss[p] - run.idle.rss[p]) * 10) / 10 : '')
  const lines = [
    `| round | requests | worker RSS (over idle) | proxy RSS (over idle) | V8 heap used / total | lean memory | control requests | control worker RSS (over idle) | control proxy RSS (over idle) |`,
    `|---|---|---|---|---|---|---|---|---|`,
    `| idle | | ${imgedge.idle.rss.worker} | ${imgedge.idle.rss.proxy} | ${heapCell(imgedge.idle.heap)} | | | ${control?.idle.rss.worker ?? ''} | ${control?.idle.rss.proxy ?? ''} |`,
  ]
  imgedge.rounds.forEach((r, i) => {
    const k = control?.rounds[i]
    lines.push(
      `| ${i + 1} | ${r.requests} | ${r.rss.worker} (+${over(imgedge, r, 'worker')}) | ${r.rss.proxy} (+${over(imgedge, r, 'proxy')}) | ${heapCell(r.heap)} | ${r.isolate?.lean?.sharedMiB ?? ''} | ${k?.requests ?? ''} | ${k ? `${k.rss.worker} (+${over(control, k, 'worker')})` : ''} | ${k ? `${k.rss.proxy} (+${over(control, k, 'proxy')})` : ''} |`,
    )
  })
  if (imgedge.afterGc || control?.afterGc) {
    lines.push(`| after a full GC | | ${imgedge.afterGc?.rss.worker ?? ''} | ${imgedge.afterGc?.rss.proxy ?? ''} | ${heapCell(imgedge.afterGc?.heap)} | | | ${control?.afterGc?.rss.worker ?? ''} | ${control?.afterGc?.rss.proxy ?? ''} |`)
  }
  return lines.join('\n')
}

const heapCell = (heap) => (heap ? `${heap.used} / ${heap.total}` : '')
