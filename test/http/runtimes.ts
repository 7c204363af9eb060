import { execFileSync } from 'node:child_process'

/**
 * True when `command args` runs here and exits 0: tests of examples in other languages skip, saying so, where the
 * runtime is missing.
 *
 * @example
 * it.skipIf(!has('php', ['--version']))('the PHP signer ...', ...)
 */
export const has = (command: string, args: string[]): boolean => {
  try {
    execFileSync(command, args, { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}
