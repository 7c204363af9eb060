// A Next.js image loader in Cloudflare's URL form, pointed at imgedge's GET /cdn-cgi/image: the loader a site moving
// from Cloudflare Images already has, with the host changed. In next.config.js:
//
//   images: { loader: 'custom', loaderFile: './cloudflare-loader.mjs' }
//
// and set NEXT_PUBLIC_IMGEDGE_URL to the worker's address. `src` is a key in the IMAGES bucket (or a path under
// ORIGIN_URL); an absolute https:// src is passed on as it is, for hosts on ALLOWED_SOURCES.
const BASE = process.env.NEXT_PUBLIC_IMGEDGE_URL ?? 'http://127.0.0.1:8787'

export default function cloudflareLoader({ src, width, quality }) {
  const options = [`width=${width}`, `quality=${quality || 75}`, 'format=auto'].join(',')
  const source = /^https?:\/\//i.test(src) ? src : src.replace(/^\/+/, '').split('/').map(encodeURIComponent).join('/')
  return `${BASE}/cdn-cgi/image/${options}/${source}`
}
