// "Copy as curl": the request the tester just made, as a command that makes the same request.

/** Quote for a POSIX shell: single quotes, with any ' written as '\''. */
export const shellQuote = (text) => `'${String(text).replaceAll("'", `'\\''`)}'`

/**
 * @example
 * curlCommand({ method: 'POST', url: 'http://127.0.0.1:8787/api/compress?format=webp',
 *   headers: { 'Content-Type': 'image/jpeg' }, fileName: 'photo.jpg', output: 'photo.webp' })
 * curlCommand({ method: 'POST', url: 'http://127.0.0.1:8787/api/compress', fileName: 'photo.jpg',
 *   form: [['format', 'webp']], output: 'photo.webp' }) // curl ... -F 'image=@photo.jpg' -F 'format=webp' ...
 */
export function curlCommand({ method, url, headers = {}, fileName, form, output }) {
  // --fail-with-body: a 4xx/5xx exits non-zero (the problem JSON still goes to the output file, and the headers show it).
  const parts = ['curl -sS --fail-with-body -D -']
  if (method !== 'GET' && !fileName) parts.push(`-X ${method}`)
  for (const [name, value] of Object.entries(headers)) parts.push(`-H ${shellQuote(`${name}: ${value}`)}`)
  if (form) {
    // multipart/form-data: -F writes the Content-Type and boundary itself.
    if (fileName) parts.push(`-F ${shellQuote(`image=@${fileName}`)}`)
    for (const [name, value] of form) parts.push(`-F ${shellQuote(`${name}=${value}`)}`)
  } else if (fileName) parts.push(`--data-binary ${shellQuote(`@${fileName}`)}`)
  if (output) parts.push(`-o ${shellQuote(output)}`)
  parts.push(shellQuote(url))
  return parts.join(' \\\n  ')
}
