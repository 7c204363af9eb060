#!/usr/bin/env node
// Sign a GET /img (or /cdn-cgi/image) path with the SIGNING_KEY secret, as the worker checks it (signers/js/imgedge-sign.mjs, which the worker imports).
//
//   SIGNING_KEY=... npm run sign -- '/img/width=800,format=auto/photo.jpg'             # never expires
//   SIGNING_KEY=... npm run sign -- '/img/width=800/photo.jpg' --expires-in 3600       # valid for an hour
//
// Prints the path as it will be requested (spaces and non-ASCII percent-encoded, as a URL parser writes them) with its
// exp and sig parameters.

import { signPath } from '../signers/js/imgedge-sign.mjs'

const args = process.argv.slice(2)
const at = args.indexOf('--expires-in')
const expiresIn = at >= 0 ? Number(args.splice(at, 2)[1]) : undefined
const [path, ...rest] = args
const secret = process.env.SIGNING_KEY
if (!secret || !path || rest.length > 0 || !/^\/(img|cdn-cgi\/image)\//.test(path) || (expiresIn !== undefined && !(Number.isInteger(expiresIn) && expiresIn > 0))) {
  console.error("usage: SIGNING_KEY=... npm run sign -- '/img/<options>/<key>' (or '/cdn-cgi/image/<options>/<key>') [--expires-in SECONDS]")
  process.exit(2)
}
const exp = expiresIn === undefined ? undefined : Math.floor(Date.now() / 1000) + expiresIn
try {
  console.log(await signPath(path, secret, exp))
} catch (error) {
  console.error(`sign: ${error.message}`)
  process.exit(2)
}
