/// <reference types="vite/client" />
/**
 * Fixture bytes inside workerd, which has no host filesystem.
 *
 * Vite resolves these globs at transform time, on the host: every binary fixture is imported with
 * `?inline` (a base64 `data:` URL baked into the test bundle), the two text fixtures with `?raw`
 * (Vite inlines SVG as a URL-encoded, not base64, data URL, so `?raw` is simpler). The maps are
 * static, so a typo in a fixture name fails loudly instead of fetching something else.
 */
const INLINE = import.meta.glob<string>('../fixtures/{*,colour/*,score/*,subject/*,transform/*}.{jpg,png,webp,avif,gif}', {
  query: '?inline',
  import: 'default',
  eager: true,
})
const RAW = import.meta.glob<string>('../fixtures/*.{svg,txt}', { query: '?raw', import: 'default', eager: true })

function fromDataUrl(url: string): Uint8Array {
  const comma = url.indexOf(',')
  if (!url.startsWith('data:') || comma < 0) throw new Error(`not a data URL: ${url.slice(0, 40)}`)
  if (!url.slice(0, comma).endsWith(';base64')) return new TextEncoder().encode(decodeURIComponent(url.slice(comma + 1)))
  const binary = atob(url.slice(comma + 1))
  const bytes = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
  return bytes
}

const cache = new Map<string, Uint8Array>()

/** The bytes of `test/fixtures/<name>` (a fresh copy each call, so a test may modify it). */
export function fixture(name: string): Uint8Array {
  let bytes = cache.get(name)
  if (!bytes) {
    const key = `../fixtures/${name}`
    if (key in INLINE) bytes = fromDataUrl(INLINE[key]!)
    else if (key in RAW) bytes = new TextEncoder().encode(RAW[key]!)
    else throw new Error(`no fixture named ${name} (known: ${fixtureNames().join(', ')})`)
    cache.set(name, bytes)
  }
  return bytes.slice()
}

export function fixtureNames(): string[] {
  return [...Object.keys(INLINE), ...Object.keys(RAW)].map((key) => key.replace('../fixtures/', '')).sort()
}
