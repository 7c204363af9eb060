// A minimal HTTP server doing with sharp what POST /api/compress?format=webp does, so scripts/bench.mjs
// can load both with the same tool (autocannon) and compare requests per second. Loopback only.
// Started by bench.mjs with child_process.fork(); tells its parent { port } when it listens.
//
//   node scripts/lib/bench-sharp-server.mjs [ROOT]

import http from 'node:http'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { encodeWith, loadSharp, shapeWith } from './bench-sharp.mjs'

const root = process.argv[2] ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const sharp = loadSharp(root)

const server = http.createServer((req, res) => {
  if (req.method !== 'POST') {
    res.writeHead(405).end()
    return
  }
  const url = new URL(req.url, 'http://127.0.0.1')
  const output = url.searchParams.get('format') ?? 'webp'
  const query = Object.fromEntries(url.searchParams)
  const chunks = []
  req.on('data', (c) => chunks.push(c))
  req.on('end', async () => {
    try {
      const settings = { quality: query.quality ? Number(query.quality) : undefined, effort: query.effort ? Number(query.effort) : 4 }
      const out = await encodeWith(shapeWith(sharp(Buffer.concat(chunks)), output, query), output, settings).toBuffer()
      res.writeHead(200, { 'Content-Type': `image/${output}`, 'Content-Length': out.length }).end(out)
    } catch (error) {
      res.writeHead(500, { 'Content-Type': 'text/plain' }).end(String(error?.message ?? error))
    }
  })
})

server.listen(0, '127.0.0.1', () => process.send?.({ port: server.address().port }))
process.on('disconnect', () => process.exit(0))
