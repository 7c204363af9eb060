// The animation phase of `npm run bench` (and `npm run bench -- --animation` alone): animated GIFs and WebPs to an
// animated WebP through POST /api/compress?format=webp at the default settings, against sharp's
// `sharp(input, { animated: true }).webp({ quality: 80, effort: 4 })` in this process, on the inputs of
// scripts/lib/animations.mjs (a photo pan, a cartoon, a screen recording, 100 frames of 720p, the test fixtures).
//
// The goals of issue 20, per input:
//   (a) a GIF's answer at most 0.25x its bytes; every frame at least 29.5 dB PSNR against the input's frame as a viewer
//       shows it (the composited canvas, decoded by sharp); the frame count, delays and loop count as a browser plays
//       the input (read from the answer's ANIM and ANMF chunks, against the input's own blocks);
//   (b) peak memory under the 120 MiB budget for 100 frames of 1280x720: measured by `npm run memory` (gifanim cases,
//       each in a fresh workerd), whose last figures are shown here beside the answer's X-Memory-Estimate;
//   (c) time per frame at most 1.5x sharp's (whole request / frames, against sharp's conversion / frames).
//
// PSNR is over the premultiplied R, G and B of every pixel (so a transparent pixel's colour does not count, and an
// alpha difference does), 100 dB for identical frames.
import fs from 'node:fs'
import path from 'node:path'
import { animationTiming, animations, expectedWebpTiming } from './animations.mjs'
import { dur, fmt, kib, max, median, min, ratio, spread, table } from './bench-report.mjs'

const GOAL = { bytes: 0.25, psnr: 29.5, time: 1.5, memoryMiB: 120 }
const SHARP_SETTINGS = { quality: 80, effort: 4 }

/** Every frame of an animation as a viewer shows it, RGBA: { data, width, height, frames }. */
async function compositedFrames(sharp, bytes) {
  const { data, info } = await sharp(bytes, { animated: true, limitInputPixels: false }).ensureAlpha().raw().toBuffer({ resolveWithObject: true })
  const height = info.pageHeight ?? info.height
  return { data, width: info.width, height, frames: Math.round(info.height / height) }
}

/** PSNR (dB) of frame `i` of `a` against frame `i` of `b`, over premultiplied RGB; 100 when identical. */
function framePsnr(a, b, i) {
  const size = a.width * a.height * 4
  const [pa, pb] = [a.data.subarray(i * size, (i + 1) * size), b.data.subarray(i * size, (i + 1) * size)]
  let sum = 0
  for (let p = 0; p < size; p += 4) {
    const [wa, wb] = [pa[p + 3] / 255, pb[p + 3] / 255]
    for (let c = 0; c < 3; c++) {
      const d = pa[p + c] * wa - pb[p + c] * wb
      sum += d * d
    }
  }
  const mse = sum / (a.width * a.height * 3)
  return mse === 0 ? 100 : 10 * Math.log10((255 * 255) / mse)
}

/** An answer against the input: bytes, frames, PSNR of each frame, and whether delays and loop count are what is expected. */
async function judge(sharp, out, reference, expected, input) {
  const timing = animationTiming(out)
  const decoded = await compositedFrames(sharp, out)
  const sameSize = decoded.width === reference.width && decoded.height === reference.height
  const compared = sameSize ? Math.min(decoded.frames, reference.frames) : 0
  const psnr = Array.from({ length: compared }, (_, i) => framePsnr(reference, decoded, i))
  const wrongDelays = expected.delays.map((d, i) => [i, d, timing.delays[i]]).filter(([, d, got]) => d !== got)
  return {
    bytes: out.byteLength,
    // (an answer no smaller than the input may be the input itself)
    sameAsInput: Buffer.from(out.buffer, out.byteOffset, out.byteLength).equals(input),
    frames: timing.frames,
    width: decoded.width,
    height: decoded.height,
    psnr,
    delays: timing.delays,
    loop: timing.loop,
    framesKept: timing.frames === expected.frames,
    delaysKept: timing.delays.length === expected.delays.length && !wrongDelays.length,
    loopKept: timing.loop === expected.loop,
    wrongDelays: wrongDelays.slice(0, 5).map(([i, want, got]) => `frame ${i}: ${got ?? 'none'} ms, not ${want}`),
  }
}

/** Peak memory of the animation cases in the last `npm run memory` (.cache/memory-results.json), if any. */
function lastMemoryFigures(root) {
  const file = path.join(root, '.cache', 'memory-results.json')
  if (!fs.existsSync(file)) return null
  try {
    const m = JSON.parse(fs.readFileSync(file, 'utf8'))
    const rows = m.results.filter((r) => r.case.animation).map((r) => ({ key: r.case.key, frames: r.case.frames, width: r.case.width, height: r.case.height, inputBytes: r.input.bytes, status: r.result.status, growthMiB: r.result.growthMiB, estimateMiB: r.result.estimateMiB, refusedByDefault: r.result.refusedByDefault ?? false, wallMs: r.result.wallMs }))
    return rows.length ? { date: m.date, rows } : null
  } catch {
    return null
  }
}

/**
 * @example
 * data.animation = await animationPhase({ root, server, post, sharp, corpusDir, timeoutMs, log })
 */
export async function animationPhase({ root, server, post, sharp, corpusDir, timeoutMs, log, quick = false, runs: runsAsked = null }) {
  // (--quick: the small animations and the fixtures, one run each; the 100-frame 720p one takes about a minute a run)
  const inputs = await animations({ root, corpusDir, names: quick ? ['pan', 'cartoon', 'screen'] : undefined, log: (m) => log(`  ${m}`) })
  const sharpConvert = async (bytes) => {
    const t0 = performance.now()
    const out = await sharp(bytes, { animated: true, limitInputPixels: false }).webp(SHARP_SETTINGS).toBuffer()
    return { ms: performance.now() - t0, out }
  }
  // Warm-up on the smallest input: the worker's first conversion compiles its codecs; sharp loads libwebp.
  const smallest = inputs.reduce((a, b) => (b.bytes.length < a.bytes.length ? b : a))
  await post(server, { mime: smallest.mime, body: smallest.bytes }, { format: 'webp' }, { timeoutMs })
  await sharpConvert(smallest.bytes)

  const rows = []
  for (const input of inputs) {
    const source = animationTiming(input.bytes)
    const expected = expectedWebpTiming(source)
    const pixels = input.frames * input.width * input.height
    const runs = runsAsked ?? (quick ? 1 : pixels > 20e6 ? 2 : 3)
    const row = { name: input.name, kind: input.kind, width: input.width, height: input.height, frames: source.frames, inputBytes: input.bytes.length, format: source.format, inputDelays: source.delays, inputLoop: source.loop, expected, runs, ours: { ms: [], timings: [] }, sharp: { ms: [] }, pairs: [] }
    log(`- ${input.name} (${input.kind}, ${input.width}x${input.height}, ${source.frames} frames, ${kib(input.bytes.length)}): ${runs} run(s)`)
    let last = null
    let sharpOut = null
    for (let i = 0; i < runs; i++) {
      const w = await post(server, { mime: input.mime, body: input.bytes }, { format: 'webp' }, { timeoutMs })
      if (w.status !== 200) {
        row.status = `${w.status} ${w.code ?? ''}`.trim()
        row.detail = w.detail
        row.estimateMiB = w.estimateMiB
        break
      }
      last = w
      row.ours.ms.push(w.ms)
      row.ours.timings.push(w.timings)
      const s = await sharpConvert(input.bytes)
      row.sharp.ms.push(s.ms)
      sharpOut = s.out
      row.pairs.push(w.ms / s.ms)
    }
    if (!last) {
      log(`  the API answered ${row.status}: ${row.detail}`)
      rows.push(row)
      continue
    }
    row.status = 'ok'
    row.framesHeader = last.frames
    row.estimateMiB = last.estimateMiB
    const reference = await compositedFrames(sharp, input.bytes)
    row.ours = { ...row.ours, ...(await judge(sharp, last.bytes, reference, expected, input.bytes)) }
    row.sharp = { ...row.sharp, ...(await judge(sharp, sharpOut, reference, expected, input.bytes)) }
    const o = row.ours
    log(`  ours ${kib(o.bytes)} (${ratio(o.bytes / row.inputBytes)} of the input), ${o.frames} frames, PSNR min ${fmt(min(o.psnr), 1)} dB, delays ${o.delaysKept ? 'kept' : `CHANGED (${o.wrongDelays.join('; ')})`}, loop ${o.loop} (${o.loopKept ? 'kept' : `expected ${expected.loop}`}); ${fmt(median(o.ms) / row.frames, 1)} ms/frame`)
    log(`  sharp ${kib(row.sharp.bytes)} (${ratio(row.sharp.bytes / row.inputBytes)}), PSNR min ${fmt(min(row.sharp.psnr), 1)} dB; ${fmt(median(row.sharp.ms) / row.frames, 1)} ms/frame; time ours / sharp ${ratio(median(row.pairs))}`)
    rows.push(row)
  }
  return { date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), sharpSettings: SHARP_SETTINGS, rows, memory: lastMemoryFigures(root) }
}

const psnrText = (xs) => (xs?.length ? `${fmt(min(xs), 1)} / ${fmt(median(xs), 1)}` : '–')
const perFrame = (list, frames) => list.map((x) => x / frames)
/** A ratio to the input, with three decimals near the goal's 0.25 where two would round across it. */
const bytesRatio = (r, x) => {
  const v = x.bytes / r.inputBytes
  return `${v < 1 ? v.toFixed(3) : ratio(v).replace('×', '')}×${x.sameAsInput ? ', the input itself' : ''}`
}
/** "median (min–max)" of a list of ratios; the median alone for one. */
const ratios = (xs) => (xs.length > 1 ? `**${ratio(median(xs))}** (${ratio(min(xs))}–${ratio(max(xs))})` : `**${ratio(median(xs))}**`)

/** Whether a row meets goal (a): bytes (GIF input only), PSNR and timing kept. */
function goalA(r) {
  const o = r.ours
  const misses = [
    r.format === 'gif' && o.bytes > GOAL.bytes * r.inputBytes ? `bytes ${(o.bytes / r.inputBytes).toFixed(3)}×` : null,
    min(o.psnr) === null || min(o.psnr) < GOAL.psnr ? `PSNR ${fmt(min(o.psnr), 1)} dB` : null,
    o.framesKept ? null : `${o.frames} frames of ${r.expected.frames}`,
    o.delaysKept ? null : 'delays',
    o.loopKept ? null : `loop ${o.loop} (expected ${r.expected.loop})`,
  ].filter(Boolean)
  return misses.length ? `not met: ${misses.join(', ')}` : 'met'
}

/** The section of docs/results/benchmarks.md for the phase's results. */
export function animationSection(anim) {
  const out = []
  const ok = anim.rows.filter((r) => r.status === 'ok')
  out.push('## Animation: GIF and animated WebP → animated WebP')
  out.push('')
  out.push(`\`POST /api/compress?format=webp\` at the default settings (quality 80, effort 4), against sharp's \`sharp(input, { animated: true }).webp({ quality: ${anim.sharpSettings.quality}, effort: ${anim.sharpSettings.effort} })\` in this process (\`scripts/lib/bench-animation.mjs\`). Inputs from \`scripts/lib/animations.mjs\`: GIFs written by sharp (256 colours a frame, dithered), and the test fixtures. PSNR: each frame of the answer against the input's frame as a viewer shows it (composited, decoded by sharp), over premultiplied RGB. *Timing* compares the answer's ANIM/ANMF chunks with what a browser plays: a GIF's delays of 10 ms or less as 100 ms, its NETSCAPE count N as N + 1 plays (none: 1, 0: forever).`)
  out.push('')
  out.push(table(['input', 'frames, size', 'input bytes', 'imgedge bytes (× input)', 'imgedge PSNR min / median (dB)', 'imgedge frames, delays, loop', 'sharp bytes (× input)', 'sharp PSNR min / median (dB)', 'sharp frames, delays, loop', `goal (a): GIF bytes ≤ ${GOAL.bytes}×, every frame ≥ ${GOAL.psnr} dB, timing kept`], anim.rows.map((r) => {
    if (r.status !== 'ok') return [`${r.name} (${r.kind})`, `${r.frames} × ${r.width}×${r.height}`, kib(r.inputBytes), `${r.status}${r.detail ? `: ${r.detail}` : ''}`, '', '', '', '', '', 'not measured']
    const timingText = (x) => `${x.frames}${x.framesKept ? '' : ' ✗'}, ${x.delaysKept ? 'kept' : `changed (${x.wrongDelays.join('; ')})`}, ${x.loop ?? 'none'}${x.loopKept ? '' : ` ✗ (expected ${r.expected.loop})`}`
    return [
      `${r.name} (${r.kind})`,
      `${r.frames} × ${r.width}×${r.height}`,
      kib(r.inputBytes),
      `${kib(r.ours.bytes)} (**${bytesRatio(r, r.ours)}**)`,
      psnrText(r.ours.psnr),
      timingText(r.ours),
      `${kib(r.sharp.bytes)} (${bytesRatio(r, r.sharp)})`,
      psnrText(r.sharp.psnr),
      timingText(r.sharp),
      goalA(r),
    ]
  })))
  out.push('')
  out.push(`Time per frame: the whole request (client-side, to the answer's last byte) over the frames, and the answer's \`Server-Timing\` encode (everything after opening the input: each frame's decode, transforms and encode) over the frames; sharp's whole conversion over the frames. Median of ${[...new Set(ok.map((r) => r.runs))].join(' or ')} run(s) alternating the two, after one warm-up of each on the smallest input; the ratios are per pair of runs. For the small fixtures the request's own cost (about 20-40 ms through \`wrangler dev\`) weighs on the whole-request figure: the encode column shows the conversion alone.`)
  out.push('')
  out.push(table(['input', 'imgedge ms per frame (whole request)', 'imgedge encode ms per frame', 'sharp ms per frame', 'imgedge / sharp (whole request)', 'imgedge encode / sharp', 'X-Frames', 'X-Memory-Estimate (MiB)', `goal (c): ≤ ${GOAL.time}× sharp per frame`], ok.map((r) => [
    r.name,
    spread(perFrame(r.ours.ms, r.frames), (x) => fmt(x, 1)),
    fmt(median(r.ours.timings.map((t) => t.encode)) / r.frames, 1),
    spread(perFrame(r.sharp.ms, r.frames), (x) => fmt(x, 1)),
    ratios(r.pairs),
    ratio(median(r.ours.timings.map((t) => t.encode)) / median(r.sharp.ms)),
    r.framesHeader ?? '–',
    fmt(r.estimateMiB),
    median(r.pairs) <= GOAL.time ? 'met' : 'not met',
  ])))
  out.push('')
  if (anim.memory) {
    out.push(`Peak memory (goal (b): under the ${GOAL.memoryMiB} MiB budget for 100 frames of 1280×720), from \`npm run memory\` (docs/results/memory.md: each case the first request of a fresh \`wrangler dev\`, peak RSS growth of its workerd):`)
    out.push('')
    out.push(table(['case', 'animation', 'input bytes', 'peak RSS growth (MiB)', 'X-Memory-Estimate (MiB)', 'wall time', 'goal (b)'], anim.memory.rows.map((m) => [
      `\`${m.key}\``,
      `${m.frames} × ${m.width}×${m.height}`,
      kib(m.inputBytes),
      m.status === 'ok' ? `**${fmt(m.growthMiB, 1)}**` : m.status,
      `${fmt(m.estimateMiB)}${m.refusedByDefault ? ' (refused by the default budget)' : ''}`,
      dur(m.wallMs),
      m.status !== 'ok' ? 'not measured' : m.growthMiB <= GOAL.memoryMiB && !m.refusedByDefault ? 'met' : 'not met',
    ])))
  } else {
    out.push('Peak memory (goal (b)): not measured yet; `npm run memory -- --only gifanim>webp:pan720,gifanim>webp:pan720@width=640,gifanim>webp:pan` measures it (docs/results/memory.md).')
  }
  out.push('')
  return out.join('\n')
}

/** Rows for the Targets table of docs/results/benchmarks.md: the animation goals. */
export function animationTargets(anim) {
  const ok = anim.rows.filter((r) => r.status === 'ok')
  if (!ok.length) return []
  const gifs = ok.filter((r) => r.format === 'gif')
  const bytes = gifs.map((r) => r.ours.bytes / r.inputBytes)
  const worstPsnr = min(ok.map((r) => min(r.ours.psnr)))
  const kept = ok.filter((r) => r.ours.framesKept && r.ours.delaysKept && r.ours.loopKept)
  const times = ok.map((r) => median(r.pairs))
  const rows = [
    [`Animated WebP from a GIF ≤ ${GOAL.bytes}× its bytes`, max(bytes) <= GOAL.bytes ? 'met' : '**not met**', gifs.map((r, i) => `${r.name} ${bytes[i].toFixed(3)}×`).join(', ')],
    [`Animated WebP: every frame ≥ ${GOAL.psnr} dB PSNR against the input's`, worstPsnr >= GOAL.psnr ? 'met' : '**not met**', ok.map((r) => `${r.name} ${fmt(min(r.ours.psnr), 1)}`).join(', ') + ' dB (lowest frame)'],
    ['Animated WebP: frames, delays and loop count as browsers play the input', kept.length === ok.length ? 'met' : '**not met**', `${kept.length} of ${ok.length} inputs${kept.length < ok.length ? `; not: ${ok.filter((r) => !kept.includes(r)).map((r) => r.name).join(', ')}` : ''}`],
    [`Animated WebP: time per frame ≤ ${GOAL.time}× sharp`, max(times) <= GOAL.time ? 'met' : median(times) <= GOAL.time ? '**not met** on every input (met on the median)' : '**not met**', ok.map((r, i) => `${r.name} ${ratio(times[i])}`).join(', ')],
  ]
  const big = anim.memory?.rows.filter((m) => m.frames >= 100 && m.width * m.height >= 1280 * 720 && m.status === 'ok') ?? []
  if (big.length) rows.push([`Animated WebP: 100 frames of 1280×720 within the ${GOAL.memoryMiB} MiB budget`, big.every((m) => m.growthMiB <= GOAL.memoryMiB && !m.refusedByDefault) ? 'met' : '**not met**', big.map((m) => `\`${m.key}\` ${fmt(m.growthMiB, 1)} MiB (estimate ${fmt(m.estimateMiB)})`).join(', ')])
  return rows
}
