// Builds the worker with `wrangler deploy --dry-run` and fails if the gzip size reaches 3 MiB,
// the Workers free plan's limit. Prints wrangler's own size line and ours.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'

const LIMIT = 3 * 1024 * 1024
const outdir = mkdtempSync(join(tmpdir(), 'imgedge-bundle-'))
const log = execFileSync('wrangler', ['deploy', '--dry-run', '--outdir', outdir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
const sizeLine = log.split('\n').find((line) => /Total Upload/i.test(line))
if (sizeLine) console.log(sizeLine.trim())

let raw = 0
let gzip = 0
const walk = (dir) => {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) walk(path)
    else if (!name.endsWith('.map') && name !== 'README.md') {
      const bytes = readFileSync(path)
      raw += bytes.length
      gzip += gzipSync(bytes, { level: 9 }).length
    }
  }
}
walk(outdir)
rmSync(outdir, { recursive: true, force: true })
const mib = (n) => `${(n / 1024 / 1024).toFixed(2)} MiB`
console.log(`bundle: ${mib(raw)} raw, ${mib(gzip)} gzip (limit ${mib(LIMIT)} gzip)`)
if (gzip >= LIMIT) {
  console.error('bundle-size check failed: the gzip size is at or over 3 MiB')
  process.exit(1)
}
