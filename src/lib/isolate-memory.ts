import { leanInstances, leanResidentMiB } from '../../wasm'
import { bodyBufferBytes } from './body-buffer'
import { conversionQueue } from '../queue'

/** What the isolate holds in module scope, as it sees it itself (workerd gives a Worker no heap figures of V8's). */
export interface IsolateMemory {
  lean: {
    /** MiB of the one lean memory conversions share (wasm/session.ts); it never shrinks. */
    sharedMiB: number
    /** Lean instances not yet collected (the shared one, and any fresh ones made outside a conversion). */
    instances: number
    /** MiB of those instances' memories, each counted once. */
    instancesMiB: number
  }
  /** MiB of the request-body buffer kept for the next conversion (src/lib/body-buffer.ts). */
  bodyBufferMiB: number
  /** Requests queued or converting now. */
  queue: number
}

const mib = (bytes: number) => Math.round((bytes / 2 ** 20) * 100) / 100

/**
 * The isolate's own view of its memory, for `npm run memory:steady -- --rounds N`; served by GET
 * /api/health?memory=1 only when the DEBUG_MEMORY var is set (a few counters and sizes, nothing from requests).
 *
 * @example
 * if (memoryDebugOn(c.env)) return c.json({ memory: isolateMemory() })
 */
export function isolateMemory(): IsolateMemory {
  const lean = leanInstances()
  const { waiting, running } = conversionQueue.stats()
  return {
    lean: { sharedMiB: Math.round(leanResidentMiB() * 100) / 100, instances: lean.count, instancesMiB: mib(lean.memoryBytes) },
    bodyBufferMiB: mib(bodyBufferBytes()),
    queue: waiting + running,
  }
}

/** DEBUG_MEMORY set to 1 or true (not in wrangler.toml: `wrangler dev --var DEBUG_MEMORY:1`). */
export const memoryDebugOn = (env: object): boolean => ['1', 'true'].includes((env as { DEBUG_MEMORY?: string }).DEBUG_MEMORY ?? '')
