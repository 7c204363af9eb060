/** GET /api/health?memory=1: what the isolate holds, answered only when the DEBUG_MEMORY var is set. */
import { describe, expect, it } from 'vitest'
import type { IsolateMemory } from '../../src/lib/isolate-memory'
import { callWorker, compressTiny, freshIp } from '../helpers/worker'

const health = async (vars: Record<string, string>) => (await (await callWorker('/api/health?memory=1', {}, vars)).json()) as { status: string; memory?: IsolateMemory }

describe('the isolate memory view', () => {
  it('is not served without DEBUG_MEMORY: the answer is the plain health check', async () => {
    const body = await health({})
    expect(body.status).toBe('ok')
    expect(body.memory).toBeUndefined()
    expect((await health({ DEBUG_MEMORY: '0' })).memory).toBeUndefined()
  })

  it('reports the shared lean memory and the body buffer after a conversion', async () => {
    expect((await compressTiny(freshIp(), { RATE_LIMIT_ANON_PER_MINUTE: '0' })).status).toBe(200)
    const { memory } = await health({ DEBUG_MEMORY: '1' })
    expect(memory).toBeDefined()
    expect(memory!.lean.sharedMiB).toBeGreaterThanOrEqual(2) // at least the module's initial 2 MiB
    expect(memory!.lean.instances).toBeGreaterThanOrEqual(1)
    expect(memory!.lean.instancesMiB).toBeGreaterThanOrEqual(memory!.lean.sharedMiB)
    expect(memory!.bodyBufferMiB).toBeGreaterThan(0)
    expect(memory!.queue).toBe(0)
  })
})
