/// <reference types="vite/client" />
/**
 * Corpus conformance, inside workerd: every file of test/fixtures/corpus/ (the rows of
 * test/conformance/expected.json marked "fixture": true, copied by scripts/make-fixtures.mjs) gets
 * exactly the outcome in that table: status, problem code (and `detected`), output format and
 * upright size. The HTTP project runs the same table over the whole corpus (test/http/robustness.test.ts).
 */
import { describe, expect, it } from 'vitest'
import table from '../conformance/expected.json'
import type { Expected } from '../conformance/table'
import { compress, expectProblem, okBytes } from '../helpers/api'
import { fixture } from '../helpers/fixtures'
import { decode } from '../helpers/image'

/** The copied corpus files, baked into the test bundle as base64 data URLs (workerd has no filesystem). */
const COPIES = import.meta.glob<string>('../fixtures/corpus/**/*.{png,jpg,jpeg,webp,avif,gif,bmp,ico,jxl}', {
  query: '?inline',
  import: 'default',
  eager: true,
})

function bytesOf(file: string): Uint8Array {
  const url = COPIES[`../fixtures/corpus/${file}`]
  if (url === undefined) throw new Error(`test/fixtures/corpus/${file} is missing: run scripts/make-fixtures.mjs`)
  const binary = atob(url.slice(url.indexOf(',') + 1))
  return Uint8Array.from(binary, (c) => c.charCodeAt(0))
}

const TYPES: Record<string, string> = { jpg: 'image/jpeg', jpeg: 'image/jpeg', png: 'image/png', gif: 'image/gif', webp: 'image/webp', avif: 'image/avif', bmp: 'image/bmp', ico: 'image/x-icon', jxl: 'image/jxl' }
const contentTypeOf = (file: string) => TYPES[file.split('.').pop()!.toLowerCase()] ?? 'application/octet-stream'

const rows = (table.files as Expected[]).filter((row) => row.fixture)

describe('corpus conformance (the copies in test/fixtures/corpus)', () => {
  it('has a copy for every row marked fixture, and a row for every copy', () => {
    const copies = Object.keys(COPIES).map((key) => key.replace('../fixtures/corpus/', '')).sort()
    expect(copies).toEqual(rows.map((row) => row.file).sort())
    expect(rows.length).toBeGreaterThan(100)
  })

  for (const row of rows) {
    const outcome = row.status === 200 ? `200 ${row.format} ${row.width}x${row.height}` : `${row.status} ${row.code}`
    it(`${row.file}: ${outcome}`, async () => {
      const res = await compress(bytesOf(row.file), table.query, { contentType: contentTypeOf(row.file) })
      if (row.status === 200) {
        const out = await decode(await okBytes(res))
        expect([out.format, out.image.width, out.image.height]).toEqual([row.format, row.width, row.height])
        expect([res.headers.get('x-output-width'), res.headers.get('x-output-height')]).toEqual([String(row.width), String(row.height)])
      } else {
        const problem = await expectProblem(res, row.code!, row.status)
        if (row.detected !== undefined) expect(problem.detected).toBe(row.detected)
        // The next valid request is served normally.
        const next = await compress(fixture('s01n3p01.png'), undefined, { contentType: 'image/png' })
        expect(next.status).toBe(200)
        await next.arrayBuffer()
      }
    })
  }
})
