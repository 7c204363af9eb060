// A responsive <img> for imgedge with unpic's Cloudflare provider (npm install unpic): the srcset of an image in
// Cloudflare's URL form, which imgedge answers at /cdn-cgi/image, and its placeholder from format=json.
// Usage: node unpic-srcset.mjs photos/cat.jpg    (Node 22 or newer; IMGEDGE_URL the worker's address)
import { generate } from 'unpic/providers/cloudflare'

const base = process.env.IMGEDGE_URL ?? 'http://127.0.0.1:8787'
const source = process.argv[2]
const at = (width) => `${base}${generate(source, { width, format: 'auto', fit: 'scale-down' })}`

const facts = await (await fetch(`${base}/cdn-cgi/image/format=json/${source}`)).json()
const srcset = [320, 640, 1280].map((width) => `${at(width)} ${width}w`).join(', ')
console.log(`<img src="${at(640)}" srcset="${srcset}" sizes="100vw" width="${facts.original.width}" height="${facts.original.height}"`)
console.log(`     style="background: ${facts.dominant_colour} url(${facts.placeholder.data_url.slice(0, 40)}...) center / cover" alt="">`)
