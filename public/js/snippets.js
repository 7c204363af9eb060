// The tester's last request as JavaScript (fetch, Node 22+) and Python (requests), beside "Copy as curl": the same
// method, URL, headers and body, reading the chosen file and writing the answer to `output`.

const js = (value) => JSON.stringify(value)
const py = (value) => JSON.stringify(value) // a JSON string or object of strings is also a Python literal

/**
 * @example
 * jsSnippet({ method: 'POST', url, headers: { 'Content-Type': 'image/jpeg' }, fileName: 'photo.jpg', output: 'photo.webp' })
 */
export function jsSnippet({ method, url, headers = {}, fileName, form, output }) {
  const lines = []
  const io = [fileName && 'readFile', output && 'writeFile'].filter(Boolean)
  if (io.length) lines.push(`import { ${io.join(', ')} } from 'node:fs/promises'`, '')
  let body = ''
  if (form) {
    lines.push('const form = new FormData()')
    if (fileName) lines.push(`form.append('image', new Blob([await readFile(${js(fileName)})]), ${js(fileName)})`)
    for (const [name, value] of form) lines.push(`form.append(${js(name)}, ${js(value)})`)
    body = ', body: form'
  } else if (fileName) body = `, body: await readFile(${js(fileName)})`
  const init = method === 'GET' && !Object.keys(headers).length ? '' : `, { method: ${js(method)}, headers: ${js(headers)}${body} }`
  lines.push(`const res = await fetch(${js(url)}${init})`)
  lines.push("if (!res.ok) throw new Error(`${res.status}: ${await res.text()}`)")
  lines.push(output ? `await writeFile(${js(output)}, new Uint8Array(await res.arrayBuffer()))` : 'console.log(await res.json())')
  return lines.join('\n')
}

/**
 * @example
 * pythonSnippet({ method: 'POST', url, headers: { 'Content-Type': 'image/jpeg' }, fileName: 'photo.jpg', output: 'photo.webp' })
 */
export function pythonSnippet({ method, url, headers = {}, fileName, form, output }) {
  const call = method === 'GET' ? 'requests.get' : 'requests.post'
  const args = [py(url), `headers=${py(headers)}`]
  const lines = ['import requests', '']
  if (fileName) {
    lines.push(`with open(${py(fileName)}, "rb") as f:`)
    if (form) args.push(`files={"image": (${py(fileName)}, f)}`, `data=${py(Object.fromEntries(form))}`)
    else args.push('data=f')
    lines.push(`    res = ${call}(${args.join(', ')})`)
  } else {
    if (form) args.push(`data=${py(Object.fromEntries(form))}`)
    lines.push(`res = ${call}(${args.join(', ')})`)
  }
  lines.push('res.raise_for_status()')
  lines.push(output ? `open(${py(output)}, "wb").write(res.content)` : 'print(res.json())')
  return lines.join('\n')
}
