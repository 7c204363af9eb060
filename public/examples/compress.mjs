// Compress an image to WebP at quality 75, scaled down to 320 px wide, and print what the server reports.
// Usage: node compress.mjs photo.jpg [out.webp]    (Node 22 or newer)
import { readFile, writeFile } from 'node:fs/promises'

const base = process.env.IMGEDGE_URL ?? 'http://127.0.0.1:8787'
// The default output name is never the input's (photo.webp in gives photo.imgedge.webp out, not an overwrite).
const [input, output = input.replace(/\.[^./]*$/, '') + '.imgedge.webp'] = process.argv.slice(2)

const params = new URLSearchParams({ format: 'webp', quality: '75', width: '320' })
const res = await fetch(`${base}/api/compress?${params}`, {
  method: 'POST',
  headers: { 'Content-Type': 'application/octet-stream' },
  body: await readFile(input),
})
if (!res.ok) {
  // Errors are application/problem+json with a stable `code`.
  const problem = await res.json()
  console.error(`${res.status} ${problem.code}: ${problem.detail}`)
  process.exit(1)
}

await writeFile(output, new Uint8Array(await res.arrayBuffer()))
const h = (name) => res.headers.get(name)
console.log(`${h('x-input-format')} ${h('x-input-width')}x${h('x-input-height')}, ${h('x-input-size')} bytes`)
console.log(`-> ${h('x-output-format')} ${h('x-output-width')}x${h('x-output-height')}, ${h('x-output-size')} bytes`)
console.log(`ratio ${h('x-compression-ratio')}; ${h('server-timing')}`)
// An unlimited policy is not counted, and its answers carry no rate-limit headers.
console.log(h('x-ratelimit-limit') === null ? 'rate limit: not counted' : `rate limit: ${h('x-ratelimit-remaining')} of ${h('x-ratelimit-limit')} calls left`)
console.log(`wrote ${output}`)
