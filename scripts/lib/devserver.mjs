// A `wrangler dev` we start, find the workerd processes of, read the memory of, and stop.
// Linux only: memory figures come from /proc/<pid>/status.

import { spawn, execFileSync } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Process groups of the dev servers started here and not yet stopped. */
const groups = new Set()

/** Temporary folders made here and not yet removed. */
const tempDirs = new Set()

/** SIGKILL every dev server started here that is still running (for an interrupted script). */
export function killStarted() {
  for (const pgid of groups) {
    try {
      process.kill(-pgid, 'SIGKILL')
    } catch {
      /* already gone */
    }
  }
  groups.clear()
}

let trapped = false
/** The dev servers run in their own process groups, which an interrupt does not reach: take them down, and the folders. */
function trapInterrupts() {
  if (trapped) return
  trapped = true
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => {
      killStarted()
      for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true })
      process.exit(130)
    })
  }
}

/** A new folder under the system's temporary folder, removed by `removeTempDir` or on an interrupt. */
export function tempDir(prefix) {
  trapInterrupts()
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  tempDirs.add(dir)
  return dir
}

export function removeTempDir(dir) {
  fs.rmSync(dir, { recursive: true, force: true })
  tempDirs.delete(dir)
}

/**
 * A copy of what wrangler dev builds from (the tree at `root`) in a temporary folder, with node_modules linked, so
 * edits made while it runs (ours or another engineer's) do not reload it. Removed by `removeTempDir` or an interrupt.
 *
 * @example
 * const tree = snapshotTree(ROOT, 'imgedge-bench-tree-')
 * const dev = await startWorker({ root: ROOT, cwd: tree })
 */
export function snapshotTree(root, prefix = 'imgedge-tree-') {
  const dir = tempDir(prefix)
  // docs/memory-matrix.md is bundled as text (src/lib/measured-matrix.ts): without it the build fails.
  // signers/js is the one definition of a signed URL, which the worker imports.
  for (const name of ['src', 'wasm', 'public', 'signers', 'docs/memory-matrix.md', 'wrangler.toml', 'package.json', 'tsconfig.json', 'worker-configuration.d.ts']) {
    const from = path.join(root, name)
    if (fs.existsSync(from)) fs.cpSync(from, path.join(dir, name), { recursive: true })
  }
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'), 'dir')
  return dir
}

/**
 * `startDevServer` on free ports with a throw-away `--persist-to` folder, retried a few times (another
 * engineer's half-saved file can break a build). The handle's `stop()` removes the folder too.
 *
 * @example
 * const dev = await startWorker({ root: ROOT, prefix: 'imgedge-fuzz-', vars: { RATE_LIMIT_ANON_PER_MINUTE: '0' } })
 * try {
 *   await fetch(`${dev.base}/api/health`)
 * } finally {
 *   await dev.stop()
 * }
 */
export async function startWorker({ prefix = 'imgedge-dev-', attempts = 3, retryPauseMs = 5000, log = console.log, ...options }) {
  for (let attempt = 1; ; attempt++) {
    const persistTo = tempDir(prefix)
    try {
      const server = await startDevServer({ ...options, port: await freePort(), inspectorPort: await freePort(), persistTo })
      const stop = server.stop
      server.stop = () => stop().finally(() => removeTempDir(persistTo))
      server.persistTo = persistTo // local state (R2, Durable Objects, Cache API): `wrangler r2 object put --local --persist-to` fills it
      return server
    } catch (error) {
      const tail = error.handle?.log.split('\n').slice(-15).join('\n') ?? ''
      if (error.handle) await error.handle.stop().catch((e) => log(`  stop failed: ${e.message}`))
      removeTempDir(persistTo)
      if (attempt >= attempts) throw new Error(`${error.message}\n${tail}`)
      log(`  wrangler dev did not start (${error.message}); retrying in ${retryPauseMs / 1000} s`)
      await sleep(retryPauseMs)
    }
  }
}

/** A TCP port that was free a moment ago on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

/** VmRSS and VmHWM of `pid` in KiB, or null once the process is gone. */
export function memoryOf(pid) {
  let text
  try {
    text = fs.readFileSync(`/proc/${pid}/status`, 'utf8')
  } catch {
    return null
  }
  const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN)
  const memory = { rss: field('VmRSS'), hwm: field('VmHWM') }
  // A zombie (exited, not yet reaped) still has a status file, without memory lines.
  return Number.isFinite(memory.rss) && Number.isFinite(memory.hwm) ? memory : null
}

/**
 * Reset the kernel's peak-RSS counter (VmHWM) of `pid` to its current RSS (`echo 5 > clear_refs`,
 * Linux >= 4.0, needs the right to write the process's /proc files). Returns whether it worked.
 */
export function resetPeak(pid) {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5')
    return true
  } catch {
    return false
  }
}

function parentOf(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The command name (field 2) is in parentheses and may contain spaces: fields resume after the last ')'.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
  } catch {
    return null
  }
}

export function cmdlineOf(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean)
  } catch {
    return null
  }
}

/** Every live descendant of `root` (children, their children, ...). */
export function descendantsOf(root) {
  const children = new Map()
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    const ppid = parentOf(name)
    if (ppid === null) continue
    if (!children.has(ppid)) children.set(ppid, [])
    children.get(ppid).push(Number(name))
  }
  const found = []
  const queue = [root]
  while (queue.length) {
    for (const child of children.get(queue.shift()) ?? []) {
      found.push(child)
      queue.push(child)
    }
  }
  return found
}

/**
 * Start `wrangler dev` in its own process group. Returns a handle with the collected log, the
 * workerd processes (once ready), and stop().
 *
 * wrangler dev runs two workerd processes: a small proxy that owns the public port
 * (`--socket-addr=entry=IP:PORT`) and forwards to the runtime that actually runs the Worker. The
 * handle calls the second one `worker` and the first `proxy`. `vars` are passed as `--var`s, `env` is laid over
 * this process's environment for wrangler (e.g. X_LOCAL_OBSERVABILITY).
 */
export async function startDevServer({ root, cwd = root, port, inspectorPort, vars = {}, env = {}, persistTo, readyTimeoutMs = 120_000, readyPath = '/api/health' }) {
  const node = path.join(root, 'node_modules', '.bin', 'node')
  const wrangler = path.join(root, 'node_modules', 'wrangler', 'bin', 'wrangler.js')
  const args = [
    wrangler, 'dev',
    '--ip', '127.0.0.1',
    '--port', String(port),
    '--inspector-port', String(inspectorPort),
    '--show-interactive-dev-session=false',
    '--persist-to', persistTo,
    ...Object.entries(vars).flatMap(([name, value]) => ['--var', `${name}:${value}`]),
  ]
  const child = spawn(node, args, {
    cwd,
    detached: true, // own process group, so stop() reaches esbuild and both workerd processes too
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1', FORCE_COLOR: '0', ...env },
  })
  groups.add(child.pid)
  let log = ''
  const append = (chunk) => {
    log += chunk.toString()
    if (log.length > 200_000) log = log.slice(-100_000)
  }
  child.stdout.on('data', append)
  child.stderr.on('data', append)
  let exited = null
  const exitPromise = new Promise((resolve) => child.on('exit', (code, signal) => resolve((exited = { code, signal }))))

  const known = new Set() // every descendant pid we have seen, so stop() can check they are gone
  const handle = {
    pid: child.pid,
    port,
    base: `http://127.0.0.1:${port}`,
    /** wrangler's inspector proxy (Chrome DevTools Protocol over a WebSocket; GET /json lists the Worker's target). */
    inspectorPort,
    get log() {
      return log
    },
    get exited() {
      return exited
    },
    worker: null,
    proxy: null,
    /** Current workerd descendants: [{ pid, cmdline }]. */
    workerds() {
      const list = descendantsOf(child.pid)
      list.forEach((pid) => known.add(pid))
      return list
        .map((pid) => ({ pid, cmdline: cmdlineOf(pid) }))
        .filter((p) => p.cmdline && path.basename(p.cmdline[0]).startsWith('workerd'))
    },
    async stop() {
      descendantsOf(child.pid).forEach((pid) => known.add(pid))
      const alive = () => [child.pid, ...known].filter((pid) => fs.existsSync(`/proc/${pid}`) && !isZombie(pid))
      const signalGroup = (signal) => {
        try {
          process.kill(-child.pid, signal)
        } catch {
          /* group already gone */
        }
      }
      signalGroup('SIGTERM')
      for (let i = 0; i < 50 && alive().length; i++) await sleep(100)
      if (alive().length) {
        signalGroup('SIGKILL')
        // Anything of ours that left the group (it should not) is ended by its own pid.
        for (const pid of alive()) {
          try {
            process.kill(pid, 'SIGKILL')
          } catch {
            /* gone */
          }
        }
        for (let i = 0; i < 30 && alive().length; i++) await sleep(100)
      }
      await Promise.race([exitPromise, sleep(2000)])
      groups.delete(child.pid)
      const left = alive()
      if (left.length) throw new Error(`processes still running after stop: ${left.join(', ')}`)
    },
  }

  // Ready: GET readyPath answers 200 (default /api/health; a static asset such as /favicon.svg is
  // answered without running the Worker, so its isolate has then served no request: a cold start).
  const deadline = Date.now() + readyTimeoutMs
  for (;;) {
    if (exited) throw Object.assign(new Error(`wrangler dev exited (${exited.code ?? exited.signal}) before it was ready`), { handle })
    if (Date.now() > deadline) throw Object.assign(new Error(`wrangler dev not ready after ${readyTimeoutMs} ms`), { handle })
    try {
      const response = await fetch(`${handle.base}${readyPath}`, { signal: AbortSignal.timeout(5000) })
      await response.arrayBuffer()
      if (response.ok) break
    } catch {
      /* not listening yet */
    }
    await sleep(250)
  }

  const workerds = handle.workerds()
  const isProxy = (p) => p.cmdline.some((arg) => arg === `--socket-addr=entry=127.0.0.1:${port}`)
  handle.proxy = workerds.find(isProxy) ?? null
  const runtimes = workerds.filter((p) => !isProxy(p))
  handle.worker = runtimes.length === 1 ? runtimes[0] : workerds.length === 1 ? workerds[0] : null
  if (!handle.worker) {
    throw Object.assign(new Error(`cannot tell which workerd runs the Worker: ${workerds.map((p) => p.cmdline.join(' ')).join(' | ')}`), { handle })
  }
  return handle
}

function isZombie(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')
  } catch {
    return false
  }
}

/** `<binary> --version` of the workerd that a dev server actually runs. */
/** Server-Timing "decode;dur=261.0, transform;dur=0.0, encode;dur=2364.0" -> { decode: 261, ... } */
export function parseServerTiming(header) {
  const out = {}
  for (const part of (header ?? '').split(',')) {
    const m = /^\s*([\w-]+)\s*;.*?dur=([\d.]+)/.exec(part)
    if (m) out[m[1]] = Number(m[2])
  }
  return out
}

/** The version of the workerd package wrangler runs (`1.YYYYMMDD.N`), as the docs name it. */
export function workerdPackageVersion(root) {
  try {
    return JSON.parse(fs.readFileSync(path.join(root, 'node_modules', 'workerd', 'package.json'), 'utf8')).version
  } catch {
    return 'unknown'
  }
}

export function workerdVersion(binary) {
  try {
    return execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim()
  } catch (error) {
    return `unknown (${error.message})`
  }
}
