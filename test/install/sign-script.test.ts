import { execFileSync } from 'node:child_process'
import { createHmac } from 'node:crypto'
import { expect, test } from 'vitest'

const sign = (args: string[]) =>
  execFileSync(process.execPath, ['scripts/sign.mjs', ...args], { env: { ...process.env, SIGNING_KEY: 'k3y' }, encoding: 'utf8' }).trim()
const hmac = (message: string) => createHmac('sha256', 'k3y').update(message).digest('base64url')

test('npm run sign prints the path with the HMAC-SHA256 of the path (and exp) that GET /img checks', () => {
  expect(sign(['/img/width=800/photo.jpg'])).toBe(`/img/width=800/photo.jpg?sig=${hmac('/img/width=800/photo.jpg')}`)
  const expiring = new URL(sign(['/img/_/a.png', '--expires-in', '60']), 'https://x')
  const exp = Number(expiring.searchParams.get('exp'))
  expect(Math.abs(exp - (Date.now() / 1000 + 60))).toBeLessThan(5)
  expect(expiring.searchParams.get('sig')).toBe(hmac(`/img/_/a.png?exp=${exp}`))
})
