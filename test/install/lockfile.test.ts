import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

/**
 * package-lock.json must install on every machine people run the project on. npm writes a lock with
 * whatever platform packages the registry served when it ran, and `npm install` with such a lock does not
 * add the missing ones later (npm/cli#4828), so a lock written where a platform's build was missing leaves
 * that platform unable to start workerd, esbuild or sharp. These tests read the lock as committed.
 */
const root = join(import.meta.dirname, '..', '..')

/** The platforms laptops, CI runners and deploy pipelines use: npm's `os` and `cpu` names. */
const PLATFORMS = [
  { os: 'darwin', cpu: 'x64' },
  { os: 'darwin', cpu: 'arm64' },
  { os: 'linux', cpu: 'x64' },
  { os: 'linux', cpu: 'arm64' },
  { os: 'win32', cpu: 'x64' },
] as const

/** Packages that run a native binary from a per-platform optional dependency. */
const NATIVE = ['workerd', 'esbuild', 'sharp'] as const

interface LockEntry {
  version?: string
  os?: string[]
  cpu?: string[]
  libc?: string[]
  dependencies?: Record<string, string>
  devDependencies?: Record<string, string>
  optionalDependencies?: Record<string, string>
}

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as LockEntry
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
  lockfileVersion: number
  packages: Record<string, LockEntry>
}
const entries = lock.packages

/** Where Node would find `name` when required from the package installed at `from`. */
function resolve(from: string, name: string): string | undefined {
  let dir = from
  for (;;) {
    const candidate = dir ? `${dir}/node_modules/${name}` : `node_modules/${name}`
    if (entries[candidate]) return candidate
    if (!dir) return undefined
    const cut = dir.lastIndexOf('/node_modules/')
    dir = cut < 0 ? '' : dir.slice(0, cut)
  }
}

/** Every installed copy of a package (a dependency pinned to another version is nested). */
function copiesOf(name: string): string[] {
  return Object.keys(entries).filter((path) => path === `node_modules/${name}` || path.endsWith(`/node_modules/${name}`))
}

const matches = (entry: LockEntry, platform: (typeof PLATFORMS)[number]): boolean =>
  !!entry.os?.includes(platform.os) && !!entry.cpu?.includes(platform.cpu) && (!entry.libc || entry.libc.includes('glibc'))

describe('package-lock.json', () => {
  it('is a lockfileVersion 3 lock whose root entry matches package.json, so npm ci accepts it', () => {
    expect(lock.lockfileVersion).toBe(3)
    const rootEntry = entries['']
    expect(rootEntry?.dependencies ?? {}).toEqual(pkg.dependencies ?? {})
    expect(rootEntry?.devDependencies ?? {}).toEqual(pkg.devDependencies ?? {})
  })

  for (const name of NATIVE) {
    it(`holds every optional platform package that ${name} declares, at the declared version`, () => {
      const copies = copiesOf(name)
      expect(copies.length, `${name} is not in the lock`).toBeGreaterThan(0)
      const missing: string[] = []
      const seen = new Set<string>()
      const walk = (path: string) => {
        if (seen.has(path)) return
        seen.add(path)
        for (const [dep, spec] of Object.entries(entries[path]?.optionalDependencies ?? {})) {
          const at = resolve(path, dep)
          if (!at) missing.push(`${dep}@${spec} (for ${path})`)
          else if (/^\d+\.\d+\.\d+$/.test(spec) && entries[at]?.version !== spec) {
            missing.push(`${dep}@${spec} (lock has ${entries[at]?.version}, for ${path})`)
          } else walk(at)
        }
      }
      copies.forEach(walk)
      expect(missing).toEqual([])
    })

    for (const platform of PLATFORMS) {
      it(`has ${name}'s binary for ${platform.os}-${platform.cpu}`, () => {
        for (const path of copiesOf(name)) {
          const binaries = Object.keys(entries[path]?.optionalDependencies ?? {})
            .map((dep) => resolve(path, dep))
            .filter((at): at is string => at !== undefined && matches(entries[at]!, platform))
          expect(binaries, `${path}@${entries[path]?.version}`).not.toEqual([])
        }
      })
    }
  }

  it('installs one workerd (each build is about 100 MB)', () => {
    const versions = new Set(copiesOf('workerd').map((path) => entries[path]?.version))
    expect([...versions]).toHaveLength(1)
  })

  it('is accepted by npm ci (a dry run in a copy, so node_modules is untouched)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'imgedge-lock-'))
    try {
      copyFileSync(join(root, 'package.json'), join(dir, 'package.json'))
      copyFileSync(join(root, 'package-lock.json'), join(dir, 'package-lock.json'))
      // Under `npm test`, npm_execpath is the npm that runs us; npm ci checks the lock against
      // package.json before it resolves anything, so a dry run fails exactly when a real one would.
      const npm = process.env.npm_execpath
      const run = npm
        ? spawnSync(process.execPath, [npm, 'ci', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: dir, encoding: 'utf8' })
        : spawnSync('npm', ['ci', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: dir, encoding: 'utf8', shell: true })
      expect(run.status, run.stderr).toBe(0)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})
