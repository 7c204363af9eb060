// The JSON answer: the statistics and the image, base64-encoded, in one body.
// Accept: application/json asks for it (response=json in the query does too).
// Usage: node json-answer.mjs photo.jpg [out]    (Node 22 or newer)
import { readFile, writeFile } from 'node:fs/promises'

const base = process.env.IMGEDGE_URL ?? 'http://127.0.0.1:8787'
const [input, output] = process.argv.slice(2)

const res = await fetch(`${base}/api/compress?format=webp&width=320`, {
  method: 'POST',
  headers: { Accept: 'application/json', 'Content-Type': 'application/octet-stream' },
  body: await readFile(input),
})
const answer = await res.json()
if (!res.ok) {
  console.error(`${res.status} ${answer.code}: ${answer.detail}`)
  process.exit(1)
}

const { image, ...stats } = answer
console.log(JSON.stringify(stats, null, 2))
// The answer's filename has the input's stem: .imgedge keeps it from overwriting the input.
const file = output ?? answer.filename.replace(/(\.[^.]*)$/, '.imgedge$1')
await writeFile(file, Buffer.from(image, 'base64'))
console.log(`wrote ${file}`)
