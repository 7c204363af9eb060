/**
 * The documentation agrees with the code and with itself: every option of the validating schema has an entry in the
 * options guide, every error code a row in the errors guide, every relative link a file to land on, and the user
 * documentation no dates, session, issue or commit references (those belong in commit bodies and docs/notes/).
 */
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { ERRORS } from '../../src/errors'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const read = (file: string): string => fs.readFileSync(path.join(ROOT, file), 'utf8')
const readIfThere = (file: string): string => (fs.existsSync(path.join(ROOT, file)) ? read(file) : '')

/** Every Markdown file under `dir` (repo-relative), recursively. */
function markdownUnder(dir: string): string[] {
  if (!fs.existsSync(path.join(ROOT, dir))) return []
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const child = path.posix.join(dir, entry.name)
    if (entry.isDirectory()) return markdownUnder(child)
    return entry.name.endsWith('.md') ? [child] : []
  })
}

/** The top-level keys of `z.strictObject({ ... })` in a schema file: the option names, two spaces in. */
function schemaKeys(file: string): string[] {
  const text = read(file)
  const body = text.slice(text.indexOf('z.strictObject({'), text.indexOf('\n})', text.indexOf('z.strictObject({')))
  return [...body.matchAll(/^ {2}(\w+):/gm)].map((m) => m[1]!)
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
const slug = (heading: string): string =>
  heading.trim().toLowerCase().replace(/`/g, '').replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-')

/** The anchors a Markdown file's headings make. */
const anchorsOf = (text: string): Set<string> => new Set([...outsideCode(text).matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!)))

/** Text outside fenced code blocks, where Markdown links are links. */
const outsideCode = (text: string): string => text.replace(/^```[\s\S]*?^```/gm, '')

describe('options guide', () => {
  const options = read('docs/guide/options.md')
  const transformations = readIfThere('docs/guide/transformations.md')
  const names = schemaKeys('src/pipeline/options.ts')

  it('reads the option names from the schema', () => {
    expect(names).toEqual(expect.arrayContaining(['format', 'quality', 'width', 'metadata']))
  })

  it.each(names)('has an entry for %s (or the transformations guide names it)', (name) => {
    const heading = new RegExp(`^#{2,4} \`${name}\`\\s*$`, 'm')
    expect(heading.test(options) || transformations.includes(`\`${name}\``), `docs/guide/options.md has no "### \`${name}\`"`).toBe(true)
  })

  it('has an entry for /img path option onerror', () => {
    expect(read('src/delivery/url.ts')).toContain('onerror')
    expect(options).toMatch(/^#{2,4} `onerror`\s*$/m)
  })
})

describe('errors guide', () => {
  const guide = read('docs/guide/limits-errors.md')

  it.each(Object.entries(ERRORS))('has a row for %s with its status', (code, { status }) => {
    expect(guide).toMatch(new RegExp(`^\\| \`${code}\` \\| ${status} \\|`, 'm'))
  })

  it('knows every code the source throws', () => {
    const thrown = new Set<string>()
    for (const file of fs.readdirSync(path.join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })) {
      if (!file.endsWith('.ts')) continue
      for (const m of read(path.join('src', file)).matchAll(/new ApiError\(\s*'(\w+)'/g)) thrown.add(m[1]!)
    }
    expect(thrown.size).toBeGreaterThan(10)
    for (const code of thrown) expect(Object.keys(ERRORS), `src throws ${code}`).toContain(code)
  })
})

const USER_DOCS = ['README.md', ...markdownUnder('docs/guide'), ...markdownUnder('docs/design'), ...markdownUnder('docs/results')]
const ALL_DOCS = ['README.md', ...markdownUnder('docs')]

describe('links', () => {
  it.each(ALL_DOCS)('%s: every relative link lands on a file and heading', (file) => {
    const broken: string[] = []
    for (const m of outsideCode(read(file)).matchAll(/\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1]!
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue
      const [linked, anchor] = target.split('#') as [string, string | undefined]
      const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(file), decodeURIComponent(linked)))
      if (fs.existsSync(path.join(ROOT, resolved))) {
        if (anchor && resolved.endsWith('.md') && !anchorsOf(read(resolved)).has(anchor)) broken.push(`${target} (no heading #${anchor})`)
        continue
      }
      broken.push(`${target} (${resolved})`)
    }
    expect(broken, `${file} links to files that do not exist`).toEqual([])
  })

})

describe('user documentation', () => {
  const HISTORY: Array<[string, RegExp]> = [
    ['a date', /\b20\d\d-[01]\d-[0-3]\d\b/],
    ['a session', /\b(?:session \d+|(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth) session)\b/i],
    ['an issue number', /\bissues? #?\d+|(?:^|\s)#\d+\b/i],
    ['a commit hash', /\bcommit [0-9a-f]{7,40}\b/i],
  ]

  it.each(USER_DOCS)('%s has no dates, sessions, issue numbers or commit hashes', (file) => {
    const text = read(file)
    for (const [what, pattern] of HISTORY) {
      const found = pattern.exec(text)
      expect(found?.[0], `${file} has ${what}: move it to a commit body or docs/notes/`).toBeUndefined()
    }
  })

  it('README.md stays under 15 KB and keeps the commands CI and hooks look for', () => {
    const readme = read('README.md')
    expect(Buffer.byteLength(readme)).toBeLessThan(15 * 1024)
    expect(readme).toContain('npm install && npm test')
    expect(readme).toContain('npm run dev')
    expect(readme).toContain('docs/reference-page.png')
  })
})
