import { createHash } from 'node:crypto'
import fs from 'node:fs'
import { expect, test } from 'vitest'
import { LEAN_BUILD } from '../../wasm/build-id'

test('the build id that GET /img keys its answers by is the committed lean.wasm', () => {
  const sha256 = createHash('sha256').update(fs.readFileSync(new URL('../../wasm/lean/lean.wasm', import.meta.url))).digest('hex')
  expect(LEAN_BUILD).toBe(sha256.slice(0, 16))
})
