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
export async function answerStatus(res, sizes) {
  const bytes = await res.arrayBuffer()
  sizes?.(res.status, bytes.byteLength)
  if (res.ok) return 'ok'
  try {
    return `${res.status} ${JSON.parse(new TextDecoder().decode(bytes)).code}`
  } catch {
    return String(res.status)
  }
}

/** TCP ports `pid` listens on (Linux: its socket inodes in /proc/<pid>/net/tcp). */
function listeningPorts(pid) {
  const inodes = new Set()
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`))
      if (match) inodes.add(match[1])
    } catch {
      /* closed meanwhile */
    }
  }
  return fs.readFileSync(`/proc/${pid}/net/tcp`, 'utf8').split('\n').slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((f) => f[3] === '0A' && inodes.has(f[9]))
    .map((f) => parseInt(f[1].split(':')[1], 16))
}

/**
 * The V8 heaps of the isolates wrangler dev runs beside the Worker in its process (miniflare's entry, asset,
 * storage and observability workers), read from workerd's own inspector (wrangler's proxy shows only the Worker).
 * The Worker's own isolate (`core:user:<name>`) is left to the proxy's session, which a second one would end.
 * Returns { list() -> Promise<{ used, byId: { id: MiB } }> } or null when the port is not found.
 */
export async function platformHeaps(pid) {
  let targets = null
  for (const port of listeningPorts(pid)) {
    try {
      const list = await (await fetch(`http://127.0.0.1:${port}/json`, { signal: AbortSignal.timeout(2000) })).json()
      if (Array.isArray(list) && list.some((t) => t.id === 'core:entry')) targets = list.filter((t) => !/^core:user:/.test(t.id) || /miniflare/.test(t.id))
    } catch {
      /* not the inspector */
    }
  }
  if (!targets) return null
  const usedOf = (target) =>
    new Promise((resolve) => {
      const ws = new WebSocket(target.webSocketDebuggerUrl)
      const done = (value) => {
        clearTimeout(timer)
        ws.close()
        resolve(value)
      }
      const timer = setTimeout(() => done(0), 3000)
      ws.onopen = () => ws.send(JSON.stringify({ id: 1, method: 'Runtime.getHeapUsage' }))
      ws.onmessage = (event) => done(JSON.parse(event.data).result?.usedSize ?? 0)
      ws.onerror = () => done(0)
    })
  return {
    async list() {
      const used = await Promise.all(targets.map(usedOf))
      const byId = Object.fromEntries(targets.map((t, i) => [t.id, mibOfBytes(used[i])]))
      return { used: mibOfBytes(used.reduce((a, b) => a + b, 0)), byId }
    },
  }
}

/** POST one case of the mix; the answer's status (answerStatus, or 'timeout' / 'error ...'); `sizes` gets its status and bytes. */
async function send(base, c, sizes) {
  try {
    const res = await fetch(`${base}/api/compress?${c.query}`, { method: 'POST', headers: { 'Content-Type': c.mime }, body: c.body, signal: AbortSignal.timeout(300_000) })
    return await answerStatus(res, sizes)
  } catch (error) {
    return error.name === 'TimeoutError' ? 'timeout' : `error ${error.message}`
  }
}

/**
 * One round: `clients` clients, client i starting at case i of the mix and cycling through it, each sending its next
 * request when the last is answered, until `seconds` have passed (or, with `requests`, until that many were sent in
 * all, at most `seconds` apart from the start); requests in flight then are answered and counted.
 */
async function round(base, inputs, { clients, seconds, requests, answers }) {
  const statuses = {}
  let sent = 0
  const deadline = performance.now() + seconds * 1000
  const more = () => (requests === undefined ? performance.now() < deadline : sent < requests)
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      for (let r = 0; more(); r++) {
        sent++
        const c = inputs[(client + r) % inputs.length]
        const status = await send(base, c, (code, bytes) => answers.set(c.key, { status: code, bytes }))
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
 * { idle, rounds: [{ requests, statuses, rss: { worker, proxy } (MiB), heap, isolate, rssAfterGc, heapAfterGc }], answers }
 * (answers: the last status and size of each case's answer). After each round's sample the Worker's isolate gets a
 * full collection and is sampled again (rssAfterGc, heapAfterGc).
 *
 * @example
 * const run = await runRounds({ root, cwd: root, inputs, rounds: 20, vars })
 */
export async function runRounds({ root, cwd = root, inputs, rounds, clients = 12, seconds = 20, settleMs = 2000, vars = {}, env, matched, log = () => {} }) {
  // From a copy, so that an edit during the minutes of a run does not reload the Worker.
  const tree = cwd === root ? snapshotTree(root, 'imgedge-rounds-tree-') : cwd
  const server = await startWorker({ root, cwd: tree, vars, env, prefix: 'imgedge-rounds-', log }).catch((error) => {
    if (tree !== cwd) removeTempDir(tree)
    throw error
  })
  let inspector = null
  try {
    await (await fetch(`${server.base}/api/health`)).arrayBuffer()
    await sleep(1000)
    inspector = await openInspector(server.inspectorPort).catch((error) => (log(`  no inspector: ${error.message}`), null))
    const platform = await platformHeaps(server.worker.pid).catch(() => null)
    const idle = { rss: mapValues(rssOf(server), mib), heap: (await inspector?.heap()) ?? null, platform: (await platform?.list()) ?? null }
    const results = []
    const answers = new Map()
    const nudge = () => fetch(`${server.base}/api/health`).then((res) => res.arrayBuffer())
    for (let i = 0; i < rounds; i++) {
      const r = await round(server.base, inputs, { clients, seconds, requests: matched?.[i], answers })
      await sleep(settleMs)
      const entry = { ...r, rss: mapValues(rssOf(server), mib), heap: (await inspector?.heap()) ?? null, platform: (await platform?.list()) ?? null, isolate: await isolateView(server.base) }
      // Then a full collection of the Worker's isolate: what is left is what it holds, not garbage V8 has yet to collect.
      if (inspector && !(await inspector.collectGarbage(nudge)).error) {
        await sleep(settleMs)
        Object.assign(entry, { rssAfterGc: mapValues(rssOf(server), mib), heapAfterGc: await inspector.heap() })
      }
      results.push(entry)
      log(`  round ${i + 1}: ${entry.requests} requests, worker ${entry.rss.worker} MiB (after a full GC ${entry.rssAfterGc?.worker ?? '?'}), proxy ${entry.rss.proxy} MiB, heap ${entry.heap?.used ?? '?'} MiB (${entry.heapAfterGc?.used ?? '?'}), wrangler's isolates ${entry.platform?.used ?? '?'} MiB ${JSON.stringify(entry.statuses)}`)
    }
    return { idle, rounds: results, answers: Object.fromEntries(answers) }
  } finally {
    inspector?.close()
    await server.stop()
    if (tree !== cwd) removeTempDir(tree)
  }
}

const mapValues = (object, f) => Object.fromEntries(Object.entries(object).map(([k, v]) => [k, f(v)]))

/**
 * The goals, over the last `tail` rounds:
 * - what the isolate holds, after each round's full collection (V8 heap used, lean memory, body buffer), stays within
 *   `spreadMiB`: imgedge's own share, measured;
 * - on the Worker's process after each full collection, imgedge's growth over idle less the control's after the same
 *   round (what imgedge adds to what wrangler dev grows by for the traffic alone) rises by at most `spreadMiB` from
 *   any of these rounds to a later one, and is under `gapMiB` at the last. Its plain spread is printed too: the
 *   control's own growth is not flat under wrangler dev (about 40 KiB a request), and a difference of two growing
 *   series swings both ways without either holding more.
 * Without a control, imgedge's growth stands for the difference.
 */
export function judgeRounds(imgedge, control, { tail = 10, spreadMiB = 10, gapMiB = 40 } = {}) {
  const round1 = (x) => Math.round(x * 10) / 10
  const growth = (run, i) => (run.rounds[i].rssAfterGc ?? run.rounds[i].rss).worker - run.idle.rss.worker
  const share = imgedge.rounds.map((_, i) => round1(growth(imgedge, i) - (control ? growth(control, i) : 0)))
  const last = share.slice(-tail)
  const spread = round1(Math.max(...last) - Math.min(...last))
  const rise = round1(Math.max(0, ...last.map((d, i) => d - Math.min(...last.slice(0, i + 1)))))
  const gap = share.at(-1)
  const held = imgedge.rounds.slice(-tail).map((r) => (r.heapAfterGc?.used ?? r.heap?.used ?? NaN) + (r.isolate?.lean.sharedMiB ?? 0) + (r.isolate?.bodyBufferMiB ?? 0))
  const heldSpread = round1(Math.max(...held) - Math.min(...held))
  const pass = imgedge.rounds.length >= tail && heldSpread <= spreadMiB && rise <= spreadMiB && gap < gapMiB
  const whose = control ? "imgedge's growth less the control's" : "imgedge's growth (no control)"
  const line =
    `${pass ? 'PASS' : 'FAIL'} steady, last ${tail} rounds: the isolate holds ${round1(Math.min(...held))}-${round1(Math.max(...held))} MiB ` +
    `(V8 heap after GC, lean memory, body buffer; within ${heldSpread}, goal ${spreadMiB}); ${whose} on the Worker's process ` +
    `${last.join(', ')} MiB: rises at most ${rise} (goal ${spreadMiB}; spread ${spread}), ${gap} at the last (goal under ${gapMiB})`
  return { share, spread, rise, gap, held: { spread: heldSpread, min: round1(Math.min(...held)), max: round1(Math.max(...held)) }, pass, line }
}

/**
 * The per-round table (Markdown), MiB: imgedge and the control side by side; RSS of each workerd process over its idle
 * RSS, the Worker's process as sampled and after a full collection of the Worker's isolate; V8 heap used after it.
 */
export function roundsTable(imgedge, control, verdict) {
  const over = (run, r, p) => (r && Number.isFinite(r[p]) ? `+${Math.round((r[p] - run.idle.rss[p]) * 10) / 10}` : '')
  const lines = [
    `| round | requests | worker | worker, after GC | proxy | V8 heap after GC | lean memory | wrangler's isolates | control worker | control worker, after GC | control proxy | control V8 heap after GC | imgedge less control, after GC |`,
    `|---|---|---|---|---|---|---|---|---|---|---|---|---|`,
    `| idle (RSS) | | ${imgedge.idle.rss.worker} | | ${imgedge.idle.rss.proxy} | ${imgedge.idle.heap?.used ?? ''} | | ${imgedge.idle.platform?.used ?? ''} | ${control?.idle.rss.worker ?? ''} | | ${control?.idle.rss.proxy ?? ''} | ${control?.idle.heap?.used ?? ''} | |`,
  ]
  imgedge.rounds.forEach((r, i) => {
    const k = control?.rounds[i]
    lines.push(
      `| ${i + 1} | ${r.requests} | ${over(imgedge, r.rss, 'worker')} | ${over(imgedge, r.rssAfterGc, 'worker')} | ${over(imgedge, r.rss, 'proxy')} | ${r.heapAfterGc?.used ?? ''} | ${r.isolate?.lean?.sharedMiB ?? ''} | ${r.platform?.used ?? ''} | ${k ? over(control, k.rss, 'worker') : ''} | ${k ? over(control, k.rssAfterGc, 'worker') : ''} | ${k ? over(control, k.rss, 'proxy') : ''} | ${k?.heapAfterGc?.used ?? ''} | ${verdict?.share[i] ?? ''} |`,
    )
  })
  return lines.join('\n')
}

/**
 * The whole check: the mix's inputs, `rounds` rounds against imgedge (from a copy of `root`), the same rounds as many
 * requests each against the control (unless `control` is false), the table and the verdict. Rate limiting is off
 * (the control has no Durable Object; `vars` can turn it on); DEBUG_MEMORY is set for the isolate's view. `tail` is
 * the number of last rounds judged.
 *
 * @example
 * const { verdict } = await steadyCheck({ root: ROOT, corpusDir, cacheDir, rounds: 20 })
 * console.log(verdict.line) // PASS steady: ...
 */
export async function steadyCheck({ root, corpusDir, cacheDir, rounds = 20, clients = 12, seconds = 20, tail = Math.min(10, rounds), vars = {}, control = true, observability = false, log = console.log }) {
  const inputs = await roundInputs({ root, corpusDir, cacheDir, log })
  const options = {
    root,
    inputs,
    rounds,
    clients,
    seconds,
    vars: { RATE_LIMIT_ANON_PER_MINUTE: '0', QUEUE_TIMEOUT_MS: '60000', DEBUG_MEMORY: '1', ...vars },
    // wrangler's local traces (X_LOCAL_OBSERVABILITY) keep something for every request in the Worker's process,
    // whatever the Worker: off unless asked for, in both runs alike.
    env: observability ? {} : { X_LOCAL_OBSERVABILITY: 'false' },
    log,
  }
  log(`imgedge: ${rounds} rounds of ${clients} clients x ${seconds} s (${inputs.map((c) => c.key).join(', ')})`)
  const imgedge = await runRounds(options)
  let controlRun = null
  if (control) {
    log('control: the same rounds, as many requests each')
    // The control reads each body and answers as many bytes, with the same status, as imgedge answered that case.
    const answered = inputs.map((c) => {
      const a = imgedge.answers[c.key] ?? { status: 200, bytes: 0 }
      return { ...c, query: `${c.query}&control_bytes=${a.bytes}&control_status=${a.status}` }
    })
    controlRun = await runRounds({ ...options, inputs: answered, cwd: path.join(root, 'scripts', 'lib', 'control-worker'), matched: imgedge.rounds.map((r) => r.requests) })
  }
  const verdict = judgeRounds(imgedge, controlRun, { tail })
  return { imgedge, control: controlRun, table: roundsTable(imgedge, controlRun, verdict), verdict }
}
