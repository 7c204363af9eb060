/**
 * A real origin for GET /img's tests: a Node HTTP server on loopback, started once by vitest (globalSetup), its URL
 * given to the tests in workerd as `inject('originUrl')`. What each path does is what an origin out there can do.
 */
import fs from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestProject } from 'vitest/node'
import type {} from '../helpers/provided'

const photo = fs.readFileSync(new URL('../fixtures/photo.jpg', import.meta.url))
const png = fs.readFileSync(new URL('../fixtures/photo.png', import.meta.url))
const MIB = 1024 * 1024

export default async function setup(project: TestProject) {
  const hits = new Map<string, number>()
  let version = 1
  const server = http.createServer((req, res) => {
    const raw = new URL(req.url ?? '/', 'http://origin').pathname
    let path = raw
    try {
      path = decodeURIComponent(raw)
    } catch {
      /* a name that is not valid percent-encoding is looked up as it came */
    }
    hits.set(path, (hits.get(path) ?? 0) + 1)
    const send = (status: number, body: Uint8Array | string, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'Content-Length': String(Buffer.byteLength(body)), ...headers })
      res.end(body)
    }
    // Any name under /images/burst/ is the photo, so a test can ask for variants nobody asked for before.
    if (path.startsWith('/images/burst/')) return send(200, photo, { 'Content-Type': 'image/jpeg', ETag: `"${path}"` })
    switch (path) {
      case '/hits':
        return send(200, JSON.stringify(Object.fromEntries(hits)), { 'Content-Type': 'application/json' })
      case '/images/photo.jpg':
      case '/images/a b.jpg':
      // cdn-cgi.test.ts's own name, so its fetches never move the counts img-origin.test.ts reads while both run.
      case '/images/cf.jpg':
        return send(200, photo, { 'Content-Type': 'image/jpeg', ETag: '"photo-v1"' })
      case '/images/versioned.png':
        return send(200, png, { 'Content-Type': 'image/png', ETag: `"v${version}"` })
      case '/bump':
        version++
        return send(200, String(version))
      case '/images/no-type.jpg':
        return send(200, photo)
      case '/images/redirect':
        return send(302, '', { Location: '/images/photo.jpg' })
      case '/images/bad-redirect':
        return send(302, '', { Location: 'http://[' })
      case '/images/a%ff.jpg':
        return send(200, photo, { 'Content-Type': 'image/jpeg' })
      case '/images/loop':
        return send(302, '', { Location: '/images/loop' })
      case '/images/elsewhere': {
        const { port } = server.address() as AddressInfo
        return send(302, '', { Location: `http://localhost:${port}/images/photo.jpg` })
      }
      case '/images/gone':
        return send(410, 'gone')
      case '/images/broken':
        return send(500, 'origin failed')
      case '/images/page.html':
        return send(200, '<!doctype html><title>not an image</title>', { 'Content-Type': 'text/html' })
      case '/images/huge.jpg':
        res.writeHead(200, { 'Content-Type': 'image/jpeg', 'Content-Length': String(2 * MIB) })
        res.write(photo.subarray(0, 1024))
        return setTimeout(() => res.destroy(), 2000)
      case '/images/endless.jpg': {
        // Chunked, no length, never ends on its own: the byte limit must stop it.
        res.writeHead(200, { 'Content-Type': 'image/jpeg' })
        res.write(photo)
        const timer = setInterval(() => res.write(Buffer.alloc(64 * 1024)), 5)
        res.on('close', () => clearInterval(timer))
        return
      }
      case '/images/empty.jpg':
        return send(200, '', { 'Content-Type': 'image/jpeg' })
      case '/images/slow.jpg':
        return setTimeout(() => send(200, photo, { 'Content-Type': 'image/jpeg' }), 3000)
      case '/images/stalls.jpg':
        res.writeHead(200, { 'Content-Type': 'image/jpeg', 'Content-Length': String(photo.length) })
        res.write(photo.subarray(0, 1000))
        return setTimeout(() => res.destroy(), 5000)
      default:
        return send(404, 'no such image')
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  project.provide('originUrl', `http://127.0.0.1:${port}`)
  return () => new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  })
}
