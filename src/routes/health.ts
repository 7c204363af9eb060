import { Hono } from 'hono'
import pkg from '../../package.json'
import { CODECS } from '../codecs/registry'
import type { FormatId, OutputFormat } from '../codecs/types'
import { readHeader } from '../pipeline/sniff'
import { limitsOf } from '../env'
import { isolateMemory, memoryDebugOn } from '../lib/isolate-memory'
import { conversionQueue } from '../queue'

/** A 1x1 GIF, the smallest input that exercises the GIF decoder. */
const TINY_GIF = Uint8Array.from(atob('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw=='), (ch) => ch.charCodeAt(0))

function gradient(size: number): ImageData {
  const data = new Uint8ClampedArray(size * size * 4)
  for (let i = 0; i < size * size; i++) {
    data.set([(i % size) * 16, Math.floor(i / size) * 16, 128, 255], i * 4)
  }
  return new ImageData(data, size, size)
}

interface Check {
  ok: boolean
  ms: number
  bytes?: number
  error?: string
}

/** Encode a 16x16 gradient with every encoder and decode each result (GIF: a 1x1 file) with its decoder. */
async function roundTrip(id: FormatId): Promise<Check> {
  const start = performance.now()
  try {
    const codec = CODECS[id]
    const bytes = codec.encode
      ? (await codec.encode(gradient(16), { quality: 80, lossless: false, effort: 0 })).bytes
      : TINY_GIF
    const image = await codec.decode!(bytes, readHeader(bytes))
    const expected = codec.encode ? 16 : 1
    if (image.width !== expected || image.height !== expected) throw new Error(`decoded ${image.width}x${image.height}`)
    await new Promise((resolve) => setTimeout(resolve, 0))
    return { ok: true, ms: Number((performance.now() - start).toFixed(1)), bytes: bytes.length }
  } catch (error) {
    return { ok: false, ms: Number((performance.now() - start).toFixed(1)), error: (error as Error).message }
  }
}

/**
 * The conversion queue now: `queue` is the conversions waiting or running; `stalled` when some wait and none has
 * started or ended for longer than one conversion may take (its CPU limit and its body's time together).
 */
function queueState(env: Env) {
  const { cpuLimitMs, bodyTimeoutMs } = limitsOf(env)
  const now = Date.now()
  const stats = conversionQueue.stats(now)
  const stalled = stats.waiting > 0 && now - stats.movedAt > cpuLimitMs + bodyTimeoutMs
  return {
    queue: stats.waiting + stats.running,
    queueWaiting: stats.waiting,
    queueOldestWaitMs: stats.oldestWaitMs,
    queueExpectedWaitMs: Math.round(stats.expectedWaitMs),
    stalled,
  }
}

/**
 * GET /api/health: liveness with version, codecs and the conversion queue (503 `degraded` when it has not moved for
 * longer than a conversion can take); `?deep=1` round-trips a tiny image through every codec (503 if any fails);
 * `?memory=1`, with the DEBUG_MEMORY var set, adds what the isolate holds (isolate-memory.ts).
 */
export const health = new Hono<{ Bindings: Env }>().get('/', async (c) => {
  const codecs = Object.fromEntries(
    Object.values(CODECS).map((codec) => [codec.id, { decode: Boolean(codec.decode), encode: Boolean(codec.encode) }]),
  )
  const { stalled, ...queue } = queueState(c.env)
  const base = { status: stalled ? 'degraded' : 'ok', version: pkg.version, codecs, ...queue }
  if (c.req.query('memory') === '1' && memoryDebugOn(c.env)) return c.json({ ...base, memory: isolateMemory() }, 200, { 'Cache-Control': 'no-store' })
  if (!['1', 'true'].includes(c.req.query('deep') ?? '')) return c.json(base, stalled ? 503 : 200, { 'Cache-Control': 'no-store' })

  const checks: Record<string, Check> = {}
  for (const id of Object.keys(CODECS) as FormatId[]) checks[id] = await roundTrip(id)
  const ok = !stalled && Object.values(checks).every((check) => check.ok)
  return c.json({ ...base, status: ok ? 'ok' : 'degraded', checks }, ok ? 200 : 503, { 'Cache-Control': 'no-store' })
})

export type { OutputFormat }
