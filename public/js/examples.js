// The examples area: shows the files under /examples/ as they are (the same files the tests run).
import { $, copyText, h } from './dom.js'

const TOPICS = [
  {
    id: 'compress',
    title: 'Compress with options',
    text: 'WebP at quality 75, scaled down to 320 px wide. The answer is the image; its headers carry the sizes, dimensions, ratio and timings.',
  },
  {
    id: 'negotiate',
    title: 'Format negotiation',
    text: 'With format=auto the server reads the Accept header: AVIF if listed, else WebP, else the input\'s own family, skipping one that would be over the memory budget. The same call sent with three Accept headers gets three formats, each with Vary: Accept.',
  },
  {
    id: 'json-answer',
    title: 'JSON answer',
    text: 'Accept: application/json (or response=json) returns the statistics and the image, base64-encoded, in one JSON body; the example decodes the image to a file.',
  },
]

const LANGUAGES = {
  sh: { run: (file) => `sh ${file} photo.jpg`, label: 'curl' },
  mjs: { run: (file) => `node ${file} photo.jpg`, label: 'JavaScript' },
  py: { run: (file) => `python3 ${file} photo.jpg`, label: 'Python' },
}

const cache = new Map()
async function source(file) {
  if (!cache.has(file)) {
    cache.set(
      file,
      fetch(`/examples/${file}`).then((res) => (res.ok ? res.text() : Promise.reject(new Error(`HTTP ${res.status}`)))),
    )
  }
  return cache.get(file)
}

/** One example block: heading, explanation, how to run it, the file itself, download and copy. */
function block({ id, title, text, file, run }) {
  const code = h('pre', { class: 'code', tabindex: 0 }, 'Loading…')
  const status = h('span', { role: 'status' })
  source(file).then(
    (body) => (code.textContent = body),
    (error) => (code.textContent = `Could not load /examples/${file}: ${error.message}`),
  )
  return h(
    'article',
    { class: 'example', id: `example-${id}`, 'aria-labelledby': `example-${id}-title` },
    h(
      'div',
      { class: 'example-head' },
      h('h3', { id: `example-${id}-title` }, title),
      h(
        'div',
        { class: 'example-tools' },
        h('a', { class: 'button', href: `/examples/${file}`, download: file }, `Download ${file}`),
        h('button', { type: 'button', 'aria-label': `Copy ${file}`, onclick: async () => (status.textContent = await copyText(code.textContent, code)) }, 'Copy'),
        status,
      ),
    ),
    h('p', {}, text),
    run && h('p', { class: 'run' }, 'Run: ', h('code', {}, `IMGEDGE_URL=${location.origin} ${run}`)),
    code,
  )
}

function render(lang) {
  const { run } = LANGUAGES[lang] ?? LANGUAGES.sh
  $('#examples-body').replaceChildren(
    ...TOPICS.map((topic) => block({ ...topic, file: `${topic.id}.${lang}`, run: run(`${topic.id}.${lang}`) })),
    block({
      id: 'typed-client',
      title: 'A typed client (TypeScript)',
      text: 'Types generated from /api/openapi.json by openapi-typescript (npm run openapi:types writes imgedge-api.d.ts, served beside this file), calls made by openapi-fetch: option names and values, the JSON answer and the problem codes are checked by the compiler. Needs npm install openapi-fetch.',
      file: 'typed-client.ts',
      run: 'node typed-client.ts photo.jpg',
    }),
    h('p', {}, h('a', { href: '/examples/imgedge-api.d.ts', download: 'imgedge-api.d.ts' }, 'Download imgedge-api.d.ts'), ', the generated types it imports.'),
    block({
      id: 'form',
      title: 'An HTML form',
      text: 'No script: a multipart form with the file in field image and the options as fields. The browser shows the converted image as the answer.',
      file: 'form.html',
    }),
    h('p', {}, h('a', { href: '/examples/form.html' }, 'Open the form'), ' to try it.'),
  )
}

export function setupExamples() {
  for (const radio of document.querySelectorAll('input[name="lang"]')) {
    radio.addEventListener('change', () => render(radio.value))
  }
  render($('input[name="lang"]:checked').value)
}
