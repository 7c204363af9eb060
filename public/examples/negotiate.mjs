// format=auto: the server picks AVIF or WebP from the Accept header, as it would for a browser, and
// otherwise keeps the input's family. The answer carries Vary: Accept, so caches keep one copy per Accept.
// Usage: node negotiate.mjs photo.jpg    (Node 22 or newer)
import { readFile } from 'node:fs/promises'

const base = process.env.IMGEDGE_URL ?? 'http://127.0.0.1:8787'
const image = await readFile(process.argv[2])

for (const accept of ['image/avif,image/webp,*/*', 'image/webp,*/*', '*/*']) {
  const res = await fetch(`${base}/api/compress?format=auto&width=320`, {
    method: 'POST',
    headers: { Accept: accept, 'Content-Type': 'application/octet-stream' },
    body: image,
  })
  if (!res.ok) throw new Error(`${res.status}: ${await res.text()}`)
  const bytes = (await res.arrayBuffer()).byteLength
  console.log(`Accept: ${accept} -> ${res.headers.get('content-type')}, ${bytes} bytes, Vary: ${res.headers.get('vary')}`)
}
