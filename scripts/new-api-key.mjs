#!/usr/bin/env node
// Makes an API key for imgedge: prints the key once (give it to the client) and the entry to add to the
// API_KEYS secret, which holds only its SHA-256. Usage: npm run key -- <name> <plan> [existing API_KEYS JSON]
import { createHash, randomBytes } from 'node:crypto'

const [name, plan, existing] = process.argv.slice(2)
if (!name || !plan || !/^[\w.@-]{1,64}$/.test(name)) {
  console.error('usage: npm run key -- <name> <plan> [existing API_KEYS JSON]\n  name: 1-64 letters, digits, _ . @ -; plan: one of RATE_LIMIT_PLANS')
  process.exit(2)
}
const key = `ie_${randomBytes(24).toString('base64url')}`
const entry = { name, plan, sha256: createHash('sha256').update(key).digest('hex') }
const keys = existing ? JSON.parse(existing) : []
if (keys.some((k) => k.name === name)) {
  console.error(`a key named "${name}" is already in the list`)
  process.exit(2)
}
keys.push(entry)

console.log(`key for ${name} (shown once, store it now):\n  ${key}\n`)
console.log(`API_KEYS value:\n  ${JSON.stringify(keys)}\n`)
console.log('set it with:  npx wrangler secret put API_KEYS   (paste the value)')
console.log(`or locally:   API_KEYS='${JSON.stringify(keys)}' in .dev.vars`)
