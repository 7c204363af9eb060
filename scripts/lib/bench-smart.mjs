// The smarter-compression phase of `npm run bench` (and `npm run bench -- --smart` alone): the goals of quality=auto,
// palette PNG and max_bytes, measured through the API against what a user would otherwise get.
//
// - quality=auto against each format's default fixed quality (JPEG, WebP, AVIF) on the bench photos at about 1 MP (the
//   matched-quality set: the grained Wood photo and five corpus photos, sent as PNG) and at 12 MP (the timing cases'
//   grained Wood JPEG and two corpus photos enlarged to 4032x3024 with grain, sent as JPEG quality 90, as a phone
//   stores them): total bytes, and the score of every answer against the pixels sent: mean, spread, worst.
// - Palette PNG (`format=png&quality=N`) against sharp's palette PNG at the same quality (libimagequant with quality
//   0-N, what `pngquant --quality=0-N` does) on the bench PNGs: bytes, score, time.
// - max_bytes: half the default quality's bytes asked for; the answer must be <= N and >= 0.8 N.
//
// Scores are SSIMULACRA 2 as the API computes it (wasm/lean/score.c, run here in Node on the worker's lean.wasm;
// within 0.5 of libjxl's tool on photos, docs/notes/benchmarks.md item 27), on the whole answer, alpha over a dark and a
// light background where the image has it.
import fs from 'node:fs'
import path from 'node:path'
import { kib, fmt, median, ratio, scoreStats, table } from './bench-report.mjs'
import { filmGrain } from './check-images.mjs'
import { createLeanScorer } from './lean-score.mjs'

const FORMATS = ['jpeg', 'webp', 'avif']
const PALETTE_QUALITIES = [60, 80, 100]
/** Requests (and sharp encodes) a palette row is timed over, the median kept. */
const PALETTE_RUNS = 3
/** Corpus photos enlarged to 12 MP for the second set, beside the timing cases' 12 MP Wood. */
const TWELVE_MP_EXTRA = ['Dune.jpg', 'Storm.jpg']

/** A corpus photo enlarged (cover) to 4032x3024 with mild film grain (sigma 3), as a JPEG at quality 90; cached. */
async function twelveMp(sharp, corpusDir, cacheDir, name) {
  const file = path.join(cacheDir, `${path.basename(name, path.extname(name)).toLowerCase()}-4032x3024-grain-s2.jpg`)
  if (!fs.existsSync(file)) {
    const enlarged = await sharp(path.join(corpusDir, name)).rotate().resize(4032, 3024, { fit: 'cover', kernel: 'lanczos3' }).png({ compressionLevel: 1 }).toBuffer()
    fs.writeFileSync(file, await sharp(await filmGrain(enlarged, 3)).jpeg({ quality: 90 }).toBuffer())
  }
  return { file, width: 4032, height: 3024, mime: 'image/jpeg', name: `${name} (12 MP, grain)` }
}

/**
 * The photos quality=auto is measured on: `1 MP` (the matched-quality set) and, unless `quick`, `12 MP` (the timing
 * cases' Wood and the corpus photos of TWELVE_MP_EXTRA that exist); with `quick`, two of the first.
 *
 * @example
 * for (const { set, photos } of await smartPhotoSets({ root, sharp, inputs, corpusDir })) ...
 */
export async function smartPhotoSets({ root, sharp, inputs, corpusDir, quick = false }) {
  const sets = [{ set: '1 MP', photos: await inputs.photoSet({ limit: quick ? 2 : Infinity }) }]
  if (quick) return sets
  const cacheDir = path.join(root, '.cache', 'bench-inputs')
  fs.mkdirSync(cacheDir, { recursive: true })
  const big = [await inputs.get('jpeg:12')]
  if (corpusDir) for (const name of TWELVE_MP_EXTRA) if (fs.existsSync(path.join(corpusDir, name))) big.push(await twelveMp(sharp, corpusDir, cacheDir, name))
  return [...sets, { set: '12 MP', photos: big }]
}

/**
 * @example
 * data.smart = await smartPhase({ root, server, post, sharp, inputs, corpusDir, timeoutMs, log })
 */
export async function smartPhase({ root, server, post, sharp, inputs, corpusDir, timeoutMs, log, quick = false, paletteOnly = false }) {
  const scorer = await createLeanScorer(root, sharp)
  const defaults = Object.fromEntries((await (await fetch(`${server.base}/api/formats`)).json()).formats.map((f) => [f.id, f.options?.quality?.default]))
  // (--quick: two photos at 1 MP in JPEG and WebP, and the screenshot's palette only)
  const sets = paletteOnly ? [] : await smartPhotoSets({ root, sharp, inputs, corpusDir, quick })
  // A request that fails is logged and left out of the tables, rather than ending the bench run.
  const send = async (input, query) => {
    const r = await post(server, input, query, { timeoutMs })
    if (r.status !== 200) log(`  ${JSON.stringify(query)} on ${input.name ?? input.file}: ${r.status} ${r.code} ${r.detail}`)
    return r.status === 200 ? r : null
  }

  const auto = []
  const maxBytes = []
  for (const { set, photos } of sets) {
    for (const photo of photos) {
      photo.body ??= fs.readFileSync(photo.file)
      const reference = await scorer.rgba(photo.body)
      const name = photo.name ?? `${path.basename(photo.source ?? photo.file)} (${set})`
      for (const format of quick ? ['jpeg', 'webp'] : FORMATS) {
        const fixed = await send(photo, { format })
        const chosen = fixed && (await send(photo, { format, quality: 'auto' }))
        if (!chosen) continue
        const row = {
          set, photo: name, format,
          fixed: { quality: defaults[format], bytes: fixed.bytes.length, score: await scorer.score(reference, fixed.bytes), ms: fixed.ms },
          auto: { quality: chosen.quality, bytes: chosen.bytes.length, score: await scorer.score(reference, chosen.bytes), ms: chosen.ms, reported: chosen.score },
        }
        auto.push(row)
        log(`- ${set} ${name} ${format}: fixed ${row.fixed.bytes} B, ${row.fixed.score.toFixed(1)}; auto q${row.auto.quality} ${row.auto.bytes} B, ${row.auto.score.toFixed(1)} (${fmt(row.auto.ms)} ms)`)
        if (format === 'avif' && set === '12 MP') continue // seven 12 MP AVIF encodes for one row
        const limit = Math.round(fixed.bytes.length / 2)
        const fit = await post(server, photo, { format, max_bytes: limit }, { timeoutMs })
        maxBytes.push({ set, photo: name, format, limit, status: fit.status, code: fit.code, bytes: fit.bytes?.length ?? null, quality: fit.quality, ms: fit.ms })
      }
    }
  }

  const palette = []
  // (alone, the palette rows would time the worker's first conversion: one untimed request first)
  if (paletteOnly) {
    const warm = await inputs.get('screenshot')
    warm.body ??= fs.readFileSync(warm.file)
    await send(warm, { format: 'png', quality: 80 })
  }
  for (const key of quick ? ['screenshot'] : ['screenshot', 'graphic', 'alpha']) {
    const input = await inputs.get(key)
    if (!input) continue // the corpus graphics need ../shared
    input.body ??= fs.readFileSync(input.file)
    const reference = await scorer.rgba(input.body)
    const alpha = key === 'alpha'
    for (const quality of PALETTE_QUALITIES) {
      // (PALETTE_RUNS of each, the median time: one request of 0.1-0.2 s varies by half on this machine)
      const tries = []
      for (let i = 0; i < PALETTE_RUNS; i++) tries.push(await send(input, { format: 'png', quality }))
      if (tries.some((t) => !t)) continue
      const ours = { ...tries[0], ms: median(tries.map((t) => t.ms)) }
      let theirs = null
      const sharpMs = []
      for (let i = 0; i < PALETTE_RUNS; i++) {
        const t0 = performance.now()
        theirs = await sharp(input.body).png({ palette: true, quality }).toBuffer()
        sharpMs.push(performance.now() - t0)
      }
      const row = {
        image: input.label ?? key, width: input.width, height: input.height, quality,
        ours: { bytes: ours.bytes.length, score: await scorer.score(reference, ours.bytes, alpha), colors: ours.colors, ms: ours.ms },
        sharp: { bytes: theirs.length, score: await scorer.score(reference, theirs, alpha), ms: median(sharpMs) },
      }
      palette.push(row)
      log(`- palette ${key} q${quality}: ours ${row.ours.bytes} B ${row.ours.score.toFixed(1)} ${fmt(row.ours.ms)} ms; sharp ${row.sharp.bytes} B ${row.sharp.score.toFixed(1)} ${fmt(row.sharp.ms)} ms`)
    }
  }
  return { scorer: 'SSIMULACRA 2, the lean codec (wasm/lean/score.c)', auto, palette, maxBytes }
}

/** The section of docs/results/benchmarks.md for the phase's results. */
export function smartSection(smart) {
  const out = []
  out.push('## Smarter compression: quality=auto, palette PNG, max_bytes')
  out.push('')
  out.push(`Scores are ${smart.scorer} of each whole answer against the pixels sent (higher is better; 90 visually lossless, 70 high quality). quality=auto uses each format's default target (\`/api/formats\`).`)
  out.push('')
  const groups = []
  for (const row of smart.auto) {
    let g = groups.find((x) => x.set === row.set && x.format === row.format)
    if (!g) groups.push((g = { set: row.set, format: row.format, rows: [] }))
    g.rows.push(row)
  }
  out.push(table(['photos', 'format', 'n', 'bytes auto / fixed', 'fixed: score mean, sd, worst', 'auto: score mean, sd, worst', 'qualities chosen', 'time auto / fixed (median)', 'goal (bytes <=, sd narrower, worst no lower)'], groups.map((g) => {
    const fixedBytes = g.rows.reduce((s, r) => s + r.fixed.bytes, 0)
    const autoBytes = g.rows.reduce((s, r) => s + r.auto.bytes, 0)
    const f = scoreStats(g.rows.map((r) => r.fixed.score))
    const a = scoreStats(g.rows.map((r) => r.auto.score))
    const qs = g.rows.map((r) => r.auto.quality)
    // (a spread needs two photos or more)
    const met = [autoBytes <= fixedBytes ? null : 'bytes', g.rows.length < 2 || a.sd < f.sd ? null : 'spread', a.worst >= f.worst ? null : 'worst case'].filter(Boolean)
    return [g.set, g.format.toUpperCase(), g.rows.length, ratio(autoBytes / fixedBytes), `${fmt(f.mean, 1)}, ${fmt(f.sd, 1)}, ${fmt(f.worst, 1)}`, `${fmt(a.mean, 1)}, ${fmt(a.sd, 1)}, ${fmt(a.worst, 1)}`, `${Math.min(...qs)}-${Math.max(...qs)}`, ratio(median(g.rows.map((r) => r.auto.ms)) / median(g.rows.map((r) => r.fixed.ms))), met.length ? `not met: ${met.join(', ')}` : 'met']
  })))
  out.push('')
  out.push(table(['photo', 'format', 'fixed: bytes, score', 'auto: quality, bytes, score (reported)'], smart.auto.map((r) => [r.photo, r.format.toUpperCase(), `${kib(r.fixed.bytes)}, ${fmt(r.fixed.score, 1)}`, `${r.auto.quality}, ${kib(r.auto.bytes)}, ${fmt(r.auto.score, 1)} (${fmt(r.auto.reported, 1)})`])))
  out.push('')
  out.push('Palette PNG against sharp\'s (`png({ palette: true, quality: N })`: libimagequant with quality 0-N, as `pngquant --quality=0-N`, in this process; imgedge\'s time is the whole request; times are medians of three):')
  out.push('')
  out.push(table(['image', 'quality', 'imgedge: bytes, score, colours', 'sharp: bytes, score', 'bytes imgedge / sharp', 'score imgedge / sharp', 'time imgedge / sharp'], smart.palette.map((r) => [`${r.image} ${r.width}x${r.height}`, r.quality, `${kib(r.ours.bytes)}, ${fmt(r.ours.score, 1)}, ${r.ours.colors ?? '–'}`, `${kib(r.sharp.bytes)}, ${fmt(r.sharp.score, 1)}`, ratio(r.ours.bytes / r.sharp.bytes), fmt(r.ours.score / r.sharp.score, 2), ratio(r.ours.ms / r.sharp.ms)])))
  out.push('')
  out.push('max_bytes set to half the default quality\'s bytes (not for 12 MP AVIF: up to eight 12 MP AVIF encodes); the goal: the answer <= N and >= 0.8 N:')
  out.push('')
  out.push(table(['photo', 'format', 'N', 'answer', 'answer / N', 'quality', 'time', 'goal'], smart.maxBytes.map((r) => [r.photo, r.format.toUpperCase(), kib(r.limit), r.status === 200 ? kib(r.bytes) : `${r.status} ${r.code}`, r.bytes ? fmt(r.bytes / r.limit, 3) : '–', r.quality ?? '–', `${fmt(r.ms)} ms`, r.bytes && r.bytes <= r.limit && r.bytes >= 0.8 * r.limit ? 'met' : 'not met'])))
  out.push('')
  return out.join('\n')
}
