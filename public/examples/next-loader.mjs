// A custom image loader for Next.js: every <Image> is delivered by imgedge's GET /img at the width Next asks for, in
// the format the browser's Accept header allows. Copy this file into your app as next-loader.mjs; in next.config.js:
//
//   images: { loader: 'custom', loaderFile: './next-loader.mjs' }
//
// and set NEXT_PUBLIC_IMGEDGE_URL to the worker's address. `src` is a key in the IMAGES bucket (or a path under
// ORIGIN_URL); an absolute https:// src is passed on as it is, for hosts on ALLOWED_SOURCES.
//
// The loader also runs in the browser, where no signing key can be: deploy the worker with UNSIGNED_URLS=presets.
// Its URLs then pass unsigned as long as Next's widths are on UNSIGNED_WIDTHS and its qualities on UNSIGNED_QUALITIES
// (the defaults are Next's own deviceSizes, imageSizes and quality 75; change both sides together).
const BASE = process.env.NEXT_PUBLIC_IMGEDGE_URL ?? 'http://127.0.0.1:8787'

export default function imgedgeLoader({ src, width, quality }) {
  const options = [`width=${width}`, 'format=auto', ...(quality ? [`quality=${quality}`] : [])].join(',')
  const source = /^https?:\/\//i.test(src) ? src : src.replace(/^\/+/, '').split('/').map(encodeURIComponent).join('/')
  return `${BASE}/img/${options}/${source}`
}
