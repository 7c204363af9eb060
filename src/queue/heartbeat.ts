/**
 * A request's sign of life, beaten by a timer of its own. When workerd ends a request (its client went away, its
 * time ran out) it runs none of that request's timers or continuations again, so a heartbeat that stops is how the
 * other requests learn that a request they wait for will never finish, without needing anything from it.
 *
 * @example
 * const beat = heartbeat()
 * try { await work() } finally { beat.stop() }
 */
export interface Heartbeat {
  /** When the request last showed it was alive (Date.now()). */
  readonly seen: number
  stop(): void
}

/** How often a waiting or converting request beats; a request silent for STALE_MS is taken for gone. */
export const BEAT_MS = 200

/**
 * Ten beats: long enough that a beat delayed by a conversion's synchronous work in this isolate is not taken for a
 * death (the judge's own timers were delayed as much, see `isStale`).
 */
export const STALE_MS = 2_000

/**
 * How often a waiting request looks whether what it waits for is done. No request can wake another (a promise of
 * another request is I/O across requests, which workerd refuses), so this is the hand-over's latency.
 */
export const POLL_MS = 20

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export function heartbeat(every = BEAT_MS): Heartbeat {
  const beat = { seen: Date.now(), stop: () => clearInterval(timer) }
  const timer = setInterval(() => (beat.seen = Date.now()), every)
  return beat
}

/**
 * A heartbeat is stale when it has been silent for `staleMs` although the judge's own clock kept running: `smooth` is
 * false when the judge itself was held up (synchronous codec work blocks every timer of the isolate alike).
 */
export const isStale = (beat: Heartbeat, now: number, smooth: boolean, staleMs = STALE_MS): boolean => smooth && now - beat.seen > staleMs
