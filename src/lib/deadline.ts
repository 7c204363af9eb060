/**
 * `work`, or a rejection with `onTimeout()` if it has not settled within `timeoutMs` (no timer for an
 * infinite one). The timer is cleared either way, so nothing is left pending.
 *
 * @example
 * await withinMs(reader.read(), 5_000, () => new ApiError('body_timeout', 'too slow'))
 */
export async function withinMs<T>(work: Promise<T>, timeoutMs: number, onTimeout: () => Error): Promise<T> {
  if (!Number.isFinite(timeoutMs)) return work
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), Math.max(0, timeoutMs))
  })
  try {
    return await Promise.race([work, timeout])
  } finally {
    clearTimeout(timer)
  }
}
