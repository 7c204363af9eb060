/**
 * npm run doctor (scripts/doctor.mjs) on wrangler.toml as committed (a local setup: unsafe for production, exit 1), and
 * on wrangler.toml with docs/guide/deploy.md's settings applied (its route uncommented, its [vars]): nothing unsafe,
 * exit 0. So the guide and wrangler.toml agree on what a safe deployment is.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, it } from 'vitest'

const work = mkdtempSync(join(tmpdir(), 'imgedge-doctor-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

const toml = readFileSync('wrangler.toml', 'utf8')
const guide = readFileSync('docs/guide/deploy.md', 'utf8')

function doctor(config: string, ...args: string[]) {
  const path = join(work, `wrangler-${Math.random().toString(36).slice(2)}.toml`)
  writeFileSync(path, config)
  const run = spawnSync(process.execPath, ['scripts/doctor.mjs', '--config', path, ...args], { encoding: 'utf8', env: { ...process.env, SIGNING_KEY: '', API_KEYS: '' } })
  return { status: run.status, out: run.stdout + run.stderr }
}

/** wrangler.toml as the guide has it deployed: its commented route block uncommented, its [vars] lines set. */
function asGuideSays(): string {
  let config = toml.replace(/^# (workers_dev = false|routes = \[|  \{ pattern = .*|\])$/gm, '$1')
  const settings = [...guide.matchAll(/```toml\n([\s\S]*?)```/g)].flatMap((block) => [...block[1]!.matchAll(/^([A-Z][A-Z0-9_]*) = (".*")$/gm)])
  expect(settings.length).toBeGreaterThanOrEqual(4)
  for (const [, name, value] of settings) {
    expect(config, `wrangler.toml has no ${name} in [vars] for the guide to set`).toMatch(new RegExp(`^${name} = `, 'm'))
    config = config.replace(new RegExp(`^${name} = .*$`, 'm'), `${name} = ${value}`)
  }
  return config
}

it('calls the committed wrangler.toml unsafe: unsigned URLs for anything, compress open, no route', () => {
  const { status, out } = doctor(toml)
  expect(status).toBe(1)
  expect(out).toMatch(/^ {2}unsafe +Unsigned \/img URLs may ask for any size/m)
  expect(out).toMatch(/^ {2}unsafe +REQUIRE_API_KEY is not true/m)
  expect(out).toMatch(/^ {2}ineffective +No route or custom domain/m)
  expect(out).toMatch(/^ {2}warning +CORS_ORIGINS is "\*"/m)
  expect(out).toContain('not ready for production')
}, 60_000)

it('finds nothing unsafe once the deploy guide\'s settings are applied, and says what is allowed', () => {
  const config = asGuideSays()
  expect(config).toMatch(/^routes = \[\n {2}\{ pattern = "images\.example\.com", custom_domain = true \},\n\]$/m)
  const { status, out } = doctor(config, '--secrets', 'SIGNING_KEY,API_KEYS')
  expect(out).toMatch(/^ {2}ok +Unsigned \/img URLs are limited to presets \(thumb, card, hero\)/m)
  expect(out).toMatch(/^ {2}ok +Routes: images\.example\.com\.$/m)
  expect(out).not.toMatch(/^ {2}(unsafe|broken|ineffective|warning) /m)
  expect(out).toContain('nothing unsafe or broken')
  expect(status).toBe(0)
}, 60_000)

it('says what is broken: a PRESETS that does not parse, none without a key, a CPU limit unlike cpu_ms, workers.dev kept', () => {
  const config = asGuideSays()
    .replace(/^PRESETS = .*$/m, 'PRESETS = "thumb=width"')
    .replace(/^UNSIGNED_URLS = .*$/m, 'UNSIGNED_URLS = "none"')
    .replace(/^CPU_LIMIT_MS = .*$/m, 'CPU_LIMIT_MS = "50000"')
  const { status, out } = doctor(config)
  expect(out).toMatch(/^ {2}broken +PRESETS: "width" in thumb is not option:value/m)
  expect(out).toMatch(/^ {2}broken +UNSIGNED_URLS=none without SIGNING_KEY/m)
  expect(out).toMatch(/^ {2}warning +REQUIRE_API_KEY is true but no API_KEYS secret/m)
  expect(out).toMatch(/^ {2}ineffective +CPU_LIMIT_MS \(50000\) is not \[limits\] cpu_ms \(30000\)/m)
  expect(status).toBe(1)
  const kept = doctor(asGuideSays().replace(/^workers_dev = false$/m, ''), '--secrets', 'SIGNING_KEY,API_KEYS')
  expect([kept.status, kept.out]).toEqual([0, expect.stringMatching(/^ {2}warning +workers_dev is not false/m)])
}, 60_000)
