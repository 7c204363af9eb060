#!/usr/bin/env node
// Says what in a wrangler configuration is unsafe or ineffective for a production imgedge, before deploying.
//
//   npm run doctor                                   # wrangler.toml; secrets from the environment (SIGNING_KEY, API_KEYS)
//   npm run doctor -- --remote                       # and the deployed worker's secrets (npx wrangler secret list)
//   npm run doctor -- --config prod.toml --env production --secrets SIGNING_KEY,API_KEYS
//
// Exits 1 when anything is unsafe or broken, so a deploy script can stop on it; warnings alone exit 0.

import { execFileSync } from 'node:child_process'
import { unstable_readConfig } from 'wrangler'
import { parsePresets } from '../src/delivery/presets.ts'

const args = process.argv.slice(2)
const option = (name) => {
  const at = args.indexOf(name)
  return at >= 0 ? args[at + 1] : undefined
}
const configPath = option('--config') ?? 'wrangler.toml'
const envName = option('--env')

const config = unstable_readConfig({ config: configPath, env: envName })
const vars = config.vars ?? {}
const text = (name, fallback) => {
  const value = vars[name]
  return value === undefined || value === '' ? fallback : String(value)
}

/** Secrets known to be set: named with --secrets, present in this environment, or (--remote) on the deployed worker. */
const secrets = new Set((option('--secrets') ?? '').split(',').map((name) => name.trim()).filter(Boolean))
for (const name of ['SIGNING_KEY', 'API_KEYS']) if (process.env[name]) secrets.add(name)
if (args.includes('--remote')) {
  const listed = execFileSync('npx', ['wrangler', 'secret', 'list', '--format', 'json', '--config', configPath, ...(envName ? ['--env', envName] : [])], { encoding: 'utf8' })
  for (const { name } of JSON.parse(listed)) secrets.add(name)
}
const secretsFrom = args.includes('--remote') ? 'on the deployed worker' : 'in this environment or --secrets; --remote asks Cloudflare'

/** @type {{ level: 'unsafe' | 'broken' | 'ineffective' | 'warning' | 'ok', text: string }[]} */
const findings = []
const say = (level, message) => findings.push({ level, text: message })

// GET /img: who may ask for what.
const signing = secrets.has('SIGNING_KEY')
const unsigned = text('UNSIGNED_URLS', signing ? 'none' : 'all')
let presets = {}
try {
  presets = parsePresets(text('PRESETS', ''))
} catch (error) {
  say('broken', `${error.message}: every /img request answers 500 until it is fixed.`)
}
if (unsigned === 'all') {
  say('unsafe', `Unsigned /img URLs may ask for any size and settings (UNSIGNED_URLS=${vars.UNSIGNED_URLS || 'empty'}, SIGNING_KEY ${signing ? 'set' : `not found ${secretsFrom}`}): anyone can make the worker convert without limit. Set UNSIGNED_URLS = "presets" in [vars], and the secret SIGNING_KEY for anything else.`)
} else if (unsigned === 'none' && !signing) {
  say('broken', `UNSIGNED_URLS=none without SIGNING_KEY (not found ${secretsFrom}): every /img URL is refused. Put the secret, or set UNSIGNED_URLS = "presets".`)
} else if (unsigned === 'none') {
  say('warning', 'Only signed /img URLs are served: pages must be rendered with signed URLs (the Next.js loader and plain <img srcset> in the browser cannot sign). UNSIGNED_URLS = "presets" lets presets and listed widths through unsigned.')
} else if (unsigned === 'presets') {
  const names = Object.keys(presets)
  say('ok', `Unsigned /img URLs are limited to presets (${names.join(', ') || 'none defined'}), format, widths ${text('UNSIGNED_WIDTHS', 'Next.js defaults')} and qualities ${text('UNSIGNED_QUALITIES', '75')}${signing ? '; signed URLs may ask for anything' : ''}.`)
} else {
  say('broken', `UNSIGNED_URLS=${unsigned} is none of all, presets, none.`)
}

// Caching: the Cache API works only on a zone of the account, not on workers.dev.
const routes = [...(config.routes ?? []), ...(config.route ? [config.route] : [])]
if (routes.length === 0) {
  say('ineffective', 'No route or custom domain: on *.workers.dev the Cache API keeps nothing, so every view converts again and counts against the rate limit. Uncomment routes in wrangler.toml with your own host (custom_domain = true).')
} else {
  say('ok', `Routes: ${routes.map((route) => (typeof route === 'string' ? route : route.pattern)).join(', ')}.`)
  if (config.workers_dev !== false) say('warning', 'workers_dev is not false: the worker can stay reachable on *.workers.dev too, where nothing is cached. Set workers_dev = false.')
}

// POST /api/compress and the tester page.
const requireKey = ['true', '1'].includes(text('REQUIRE_API_KEY', 'false'))
const anonymous = Number(text('RATE_LIMIT_ANON_PER_MINUTE', '60'))
if (!requireKey) {
  say('unsafe', `REQUIRE_API_KEY is not true: POST /api/compress converts anything for anyone (${anonymous === 0 ? 'without any limit' : `${anonymous} a minute per IP address`}). Set REQUIRE_API_KEY = "true" and give clients keys (npm run key).`)
} else if (!secrets.has('API_KEYS')) {
  say('warning', `REQUIRE_API_KEY is true but no API_KEYS secret (not found ${secretsFrom}): every compress call will answer 401.`)
} else {
  say('ok', 'POST /api/compress needs an API key.')
}
if (anonymous === 0 && !requireKey) say('unsafe', 'RATE_LIMIT_ANON_PER_MINUTE is 0: clients without a key are not limited at all.')
const cors = text('CORS_ORIGINS', '*')
if (cors.split(',').map((origin) => origin.trim()).includes('*')) {
  say('warning', 'CORS_ORIGINS is "*": scripts on any website can call the API from their visitors\' browsers. List your own origins (https://www.example.com).')
}

// The CPU limit the worker plans with must be the one the platform enforces.
const cpuMs = config.limits?.cpu_ms
const cpuVar = Number(text('CPU_LIMIT_MS', '30000'))
if (cpuMs === undefined) {
  say('warning', 'No [limits] cpu_ms: the platform default applies (Workers Paid: 30000 ms; Free: 10 ms, too little for any conversion).')
} else if (cpuMs !== cpuVar) {
  say('ineffective', `CPU_LIMIT_MS (${cpuVar}) is not [limits] cpu_ms (${cpuMs}): max_bytes plans its tries against the wrong limit.`)
}

// Where images come from.
if (!(config.r2_buckets ?? []).some((bucket) => bucket.binding === 'IMAGES') && text('ORIGIN_URL', '') === '') {
  say('broken', 'No IMAGES R2 bucket and no ORIGIN_URL: GET /img has nowhere to read images from.')
}

const ORDER = ['broken', 'unsafe', 'ineffective', 'warning', 'ok']
console.log(`imgedge doctor: ${configPath}${envName ? ` [env ${envName}]` : ''}`)
for (const { level, text: message } of findings.sort((a, b) => ORDER.indexOf(a.level) - ORDER.indexOf(b.level))) console.log(`  ${level.padEnd(11)} ${message}`)
const count = (level) => findings.filter((finding) => finding.level === level).length
const blocking = count('broken') + count('unsafe')
console.log(blocking > 0 ? `${count('broken')} broken, ${count('unsafe')} unsafe: not ready for production.` : `nothing unsafe or broken (${count('ineffective')} ineffective, ${count('warning')} warnings).`)
process.exitCode = blocking > 0 ? 1 : 0
