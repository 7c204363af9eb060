import { createExecutionContext, env, waitOnExecutionContext } from 'cloudflare:test'
import app from '../../src/index'
import { fixture } from './fixtures'

let clients = 0

/** A client address no other test uses, so each test counts in its own Durable Object. */
export const freshIp = (): string => {
  clients++
  return `198.51.${(clients >> 8) & 255}.${clients & 255}`
}

/**
 * Call the worker's fetch handler with `vars` laid over the test configuration: the real app and the
 * real RATE_LIMITER Durable Object namespace, only the [vars] differ (as `wrangler dev --var` would).
 *
 * @example
 * const res = await callWorker('/api/compress', { method: 'POST', body }, { RATE_LIMIT_ANON_PER_MINUTE: '10' })
 */
export async function callWorker(path: string, init: RequestInit = {}, vars: Record<string, unknown> = {}): Promise<Response> {
  const ctx = createExecutionContext()
  const res = await app.fetch(new Request(`https://imgedge.test${path}`, init), { ...env, ...vars } as Env, ctx)
  await waitOnExecutionContext(ctx)
  return res
}

/** POST a 1x1 PNG from PngSuite (the cheapest real conversion) to /api/compress as client `ip`. */
export function compressTiny(
  ip: string,
  vars: Record<string, unknown>,
  headers: Record<string, string> = {},
  query = '',
): Promise<Response> {
  return callWorker(`/api/compress${query}`, {
    method: 'POST',
    body: fixture('s01n3p01.png'),
    headers: { 'Content-Type': 'image/png', 'CF-Connecting-IP': ip, ...headers },
  }, vars)
}
