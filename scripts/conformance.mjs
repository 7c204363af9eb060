#!/usr/bin/env node
// Sends every file of the shared corpus (../shared/corpus: pngsuite/, bad/, exif/, formats/, photos/)
// to a fresh `wrangler dev` and compares each answer with its row in test/conformance/expected.json.
// The same comparison runs in `npm test` (test/http/robustness.test.ts); this script is for reviewing
// a change: it prints every file's answer and every difference.
//
//   npm run conformance                 # compare, exit 1 on a difference
//   npm run conformance -- --write      # rewrite expected.json from the answers (keeps notes and
//                                       # fixture flags); review the diff before committing it
//   CORPUS_DIR=/path/to/corpus npm run conformance
//
// (without npm: node_modules/.bin/node scripts/conformance.mjs; needs Node >= 22 and Linux)

import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { startWorker } from './lib/devserver.mjs'
import { asRow, corpusDir, corpusFiles, differences, observe } from '../test/http/corpus.ts'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const TABLE = path.join(ROOT, 'test', 'conformance', 'expected.json')
const write = process.argv.includes('--write')

const dir = corpusDir(ROOT)
if (!fs.existsSync(path.join(dir, 'README.md'))) {
  console.error(`conformance: no corpus at ${dir} (set CORPUS_DIR)`)
  process.exit(2)
}
const table = fs.existsSync(TABLE) ? JSON.parse(fs.readFileSync(TABLE, 'utf8')) : { request: '', query: '', files: [] }
const expected = new Map(table.files.map((row) => [row.file, row]))

const dev = await startWorker({ root: ROOT, prefix: 'imgedge-conformance-', vars: { RATE_LIMIT_ANON_PER_MINUTE: '0' } })

const rows = []
let failures = 0
try {
  for (const file of corpusFiles(dir)) {
    const observed = await observe(dev.base, file, new Uint8Array(fs.readFileSync(path.join(dir, file))), table.query)
    const want = expected.get(file)
    const diff = want ? differences(want, observed) : ['no row in expected.json']
    if (diff.length) failures++
    const got = observed.status === 200 ? `${observed.format} ${observed.width}x${observed.height}` : `${observed.code}${observed.detected ? ` (${observed.detected})` : ''}`
    console.log(`${diff.length ? 'DIFF' : 'ok  '} ${file.padEnd(52)} ${observed.status} ${got.padEnd(32)} ${String(observed.ms).padStart(6)} ms${diff.length ? `  ${diff.join('; ')}` : ''}`)
    const { fixture, note } = want ?? {}
    rows.push({ ...asRow(observed), ...(fixture ? { fixture } : {}), ...(note ? { note } : {}) })
  }
  for (const file of expected.keys()) {
    if (!rows.some((row) => row.file === file)) {
      failures++
      console.log(`DIFF ${file}: in expected.json but not in the corpus`)
    }
  }
} finally {
  await dev.stop()
}

console.log(`\n${rows.length} files, ${failures} differences`)
if (write) {
  fs.mkdirSync(path.dirname(TABLE), { recursive: true })
  // One row per line, so a review diff shows exactly which files changed.
  const head = Object.entries(table).filter(([key]) => key !== 'files').map(([key, value]) => `  ${JSON.stringify(key)}: ${JSON.stringify(value)},`)
  const body = rows.map((row, i) => `    ${JSON.stringify(row)}${i < rows.length - 1 ? ',' : ''}`)
  fs.writeFileSync(TABLE, ['{', ...head, '  "files": [', ...body, '  ]', '}', ''].join('\n'))
  console.log(`wrote ${path.relative(ROOT, TABLE)}`)
}
process.exit(failures && !write ? 1 : 0)
