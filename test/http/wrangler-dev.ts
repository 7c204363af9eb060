/**
 * Start a real `wrangler dev` on a free loopback port with fresh local state, for tests that talk to it over
 * HTTP: test/http/examples.test.ts and the browser test test/e2e/page.e2e.mjs (which imports this file
 * directly, so only erasable TypeScript here).
 */
import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface WranglerDev {
  base: string
  log: () => string
  stop: () => Promise<void>
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
    server.on('error', reject)
  })
}

/**
 * `objects` (bucket key -> file) are put in its local IMAGES bucket first, as `wrangler r2 object put --local` does.
 *
 * @example
 * const dev = await startWranglerDev({ RATE_LIMIT_ANON_PER_MINUTE: '100' })
 * await fetch(`${dev.base}/api/health`)
 * await dev.stop()
 */
export async function startWranglerDev(vars: Record<string, string> = {}, timeoutMs = 90_000, objects: Record<string, string> = {}): Promise<WranglerDev> {
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const state = mkdtempSync(join(tmpdir(), 'imgedge-dev-'))
  for (const [key, file] of Object.entries(objects)) {
    execFileSync('npx', ['wrangler', 'r2', 'object', 'put', `imgedge-images/${key}`, '--file', file, '--local', '--persist-to', state], { stdio: 'ignore' })
  }
  // An inspector port of its own too: wrangler's default (9229, or the next free one it finds) races when two files
  // start a server at once (vitest runs two files at a time), and the loser exits.
  const args = ['wrangler', 'dev', '--port', String(port), '--inspector-port', String(await freePort()), '--persist-to', state]
  for (const [name, value] of Object.entries(vars)) args.push('--var', `${name}:${value}`)
  // Its own process group, so stop() ends wrangler and the workerd processes it started, and nothing else.
  const child = spawn('npx', args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  let log = ''
  child.stdout!.on('data', (chunk) => (log += chunk))
  child.stderr!.on('data', (chunk) => (log += chunk))

  const stop = async () => {
    if (child.pid && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      process.kill(-child.pid, 'SIGTERM')
      await exited
    }
    rmSync(state, { recursive: true, force: true })
  }

  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      if ((await fetch(`${base}/api/health`)).ok) break
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop()
      throw new Error(`wrangler dev did not start:\n${log}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
  return { base, log: () => log, stop }
}
