/**
 * The conformance run over the shared test corpus (../shared/corpus): which files it covers, how one
 * file is sent, and how an answer is compared with its row in test/conformance/expected.json.
 *
 * Used by test/http/robustness.test.ts (every file against a live wrangler dev) and by
 * scripts/conformance.mjs (which prints the observed table, to review changes to expected.json), so
 * only erasable TypeScript and no local imports but type-only ones: Node runs this file directly.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { Expected, ExpectedTable } from '../conformance/table'

export type { Expected, ExpectedTable }

/** What one answer showed, in the table's terms, plus what the table does not record. */
export interface Observed extends Omit<Expected, 'fixture' | 'note'> {
  contentType: string | null
  ms: number
}

/** The corpus: $CORPUS_DIR, else ../shared/corpus beside the repository. */
export function corpusDir(root: string): string {
  return path.resolve(process.env.CORPUS_DIR ?? path.join(root, '..', 'shared', 'corpus'))
}

/** The folders the conformance run covers. */
export const CORPUS_FOLDERS = ['pngsuite', 'bad', 'exif', 'formats', 'photos'] as const

/** Every image file under the covered folders (licences and READMEs left out), corpus-relative, sorted. */
export function corpusFiles(dir: string): string[] {
  const found: string[] = []
  const walk = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const child = path.posix.join(rel, entry.name)
      if (entry.isDirectory()) walk(child)
      else if (!/(^|\.)(LICENSE|README)(\.|$)|\.md$|\.txt$/i.test(entry.name)) found.push(child)
    }
  }
  for (const folder of CORPUS_FOLDERS) if (fs.existsSync(path.join(dir, folder))) walk(folder)
  return found.sort()
}

const TYPES: Record<string, string> = {
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  png: 'image/png',
  gif: 'image/gif',
  webp: 'image/webp',
  avif: 'image/avif',
  bmp: 'image/bmp',
  ico: 'image/x-icon',
  tiff: 'image/tiff',
  jxl: 'image/jxl',
}

/** The Content-Type a client would send for this file name (the API ignores it and sniffs the bytes). */
export function contentTypeOf(file: string): string {
  return TYPES[path.extname(file).slice(1).toLowerCase()] ?? 'application/octet-stream'
}

/** POST one file to /api/compress (with the table's query) and read what matters of the answer. */
export async function observe(base: string, file: string, bytes: Uint8Array<ArrayBuffer>, query = '', timeoutMs = 60_000): Promise<Observed> {
  const started = performance.now()
  const res = await fetch(`${base}/api/compress${query ? `?${query}` : ''}`, {
    method: 'POST',
    headers: { 'Content-Type': contentTypeOf(file) },
    body: bytes,
    signal: AbortSignal.timeout(timeoutMs),
  })
  const observed: Observed = { file, status: res.status, contentType: res.headers.get('content-type'), ms: 0 }
  if (res.status === 200) {
    await res.arrayBuffer()
    observed.format = res.headers.get('x-output-format') ?? undefined
    observed.width = Number(res.headers.get('x-output-width'))
    observed.height = Number(res.headers.get('x-output-height'))
  } else {
    const text = await res.text()
    try {
      const problem = JSON.parse(text) as { code?: string; detected?: string }
      observed.code = problem.code
      if (problem.detected !== undefined) observed.detected = problem.detected
    } catch {
      observed.code = `(not JSON: ${text.slice(0, 60)})`
    }
  }
  observed.ms = Math.round(performance.now() - started)
  return observed
}

/** Differences between an expected row and an answer, as readable strings (empty when they agree). */
export function differences(expected: Expected, observed: Omit<Observed, 'ms' | 'file'>): string[] {
  const out: string[] = []
  const check = (name: string, want: unknown, got: unknown) => {
    if (want !== undefined && want !== got) out.push(`${name}: expected ${String(want)}, got ${String(got)}`)
  }
  check('status', expected.status, observed.status)
  if (expected.status === 200) {
    check('format', expected.format, observed.format)
    check('width', expected.width, observed.width)
    check('height', expected.height, observed.height)
  } else {
    check('content-type', 'application/problem+json', observed.contentType)
    check('code', expected.code, observed.code)
    check('detected', expected.detected, observed.detected)
  }
  return out
}

/** The row an answer would be, to paste into expected.json after review. */
export function asRow(observed: Observed): Expected {
  const { file, status, code, detected, format, width, height } = observed
  return status === 200 ? { file, status, format, width, height } : { file, status, code, ...(detected ? { detected } : {}) }
}
