import { SELF } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'

describe('smoke', () => {
  it('answers health', async () => {
    const res = await SELF.fetch('https://imgedge.test/api/health')
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ status: 'ok' })
  })
})
