// A typed client: the types are generated from /api/openapi.json (imgedge-api.d.ts, by `npm run openapi:types`),
// the calls made by openapi-fetch, so option names, their values and the JSON answer are checked by TypeScript.
// Usage: node typed-client.ts photo.jpg photo.webp   (Node 23.6 or later; npm install openapi-fetch)
import { readFile, writeFile } from 'node:fs/promises'
import createClient from 'openapi-fetch'
import type { paths } from './imgedge-api.d.ts'

const [input = 'photo.jpg', output = 'photo.webp'] = process.argv.slice(2)
// `${string}/${string}json`: answers typed as JSON (the response=json answer, problem+json errors), not as images.
const api = createClient<paths, `${string}/${string}json`>({ baseUrl: process.env.IMGEDGE_URL ?? 'http://localhost:8787' })

const { data: formats } = await api.GET('/api/formats')
console.log(`formats: ${formats?.formats.length}`)

const { data, error } = await api.POST('/api/compress', {
  params: { query: { format: 'webp', width: 320, quality: 75, response: 'json' } },
  body: new Blob([await readFile(input)]),
  bodySerializer: (body) => body,
  headers: { 'Content-Type': 'application/octet-stream' },
})
if (error) throw new Error(`${error.status} ${error.code}: ${error.detail}`)
console.log(`${data.input.format} ${data.input.width}x${data.input.height} -> ${data.format} ${data.output.width}x${data.output.height}, ${data.output.bytes} bytes`)
await writeFile(output, Buffer.from(data.image, 'base64'))
console.log(`wrote ${output}`)
