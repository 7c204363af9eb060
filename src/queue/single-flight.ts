import { ApiError } from '../errors'
import { heartbeat, type Heartbeat, isStale, POLL_MS, sleep } from './heartbeat'

/**
 * Identical work done once in this isolate: the first request for a key (the leader) does it, and requests for the
 * same key meanwhile (followers) wait for its result instead of queuing the same conversion again. A page's first view
 * asks for each variant once per `<img>`, and without this 30 requests for one uncached variant ran a dozen identical
 * conversions.
 *
 * A follower never depends on the leader's request going on: it watches the leader's heartbeat on its own timer, and
 * if the leader's request ended before a result (its client went away) or failed for a reason of its own (it waited
 * too long), the follower does the work itself. An error that any request would get (the image is corrupt, too large)
 * is shared.
 *
 * @example
 * const { value, collapsed } = await flights.run(cacheKey.url, () => convert(), { maxWaitMs: 20_000 })
 */
interface Flight<T> {
  beat: Heartbeat
  /** Set by the leader; followers look for it on their own timers (no request can wake another). */
  result?: { value: T } | { error: unknown }
}

export interface Shared<T> {
  value: T
  /** True when another request's work gave the value (RFC 9211's `collapsed`). */
  collapsed: boolean
}

/** Far longer than any beat can be held up by a synchronous step, so only a flight whose leader is gone is forgotten. */
const FORGET_MS = 60_000

/** Errors that belong to the leader's request, not to the work: a follower tries itself. */
const ownFailure = (error: unknown) => !(error instanceof ApiError) || error.status >= 500 || error.code === 'body_timeout'

export class SingleFlight<T> {
  private readonly flights = new Map<string, Flight<T>>()

  async run(key: string, work: () => Promise<T>, { maxWaitMs }: { maxWaitMs: number }): Promise<Shared<T>> {
    const since = Date.now()
    this.forget(since)
    for (;;) {
      const flight = this.flights.get(key)
      if (flight === undefined) return { value: await this.lead(key, work), collapsed: false }
      const result = await this.follow(key, flight, since + maxWaitMs)
      if (result && 'value' in result) return { value: result.value, collapsed: true }
      if (result && !ownFailure(result.error)) throw result.error
    }
  }

  /** Flights whose leaders' requests ended long ago, with nobody following them: not kept for ever. */
  private forget(now: number): void {
    for (const [key, flight] of this.flights) if (isStale(flight.beat, now, true, FORGET_MS)) this.flights.delete(key)
  }

  private async lead(key: string, work: () => Promise<T>): Promise<T> {
    const flight: Flight<T> = { beat: heartbeat() }
    this.flights.set(key, flight)
    try {
      const value = await work()
      flight.result = { value }
      return value
    } catch (error) {
      flight.result = { error }
      throw error
    } finally {
      flight.beat.stop()
      if (this.flights.get(key) === flight) this.flights.delete(key)
    }
  }

  /** The leader's result, or undefined once its request has ended without one. */
  private async follow(key: string, flight: Flight<T>, deadline: number): Promise<Flight<T>['result']> {
    let looked = Number.NEGATIVE_INFINITY
    for (;;) {
      if (flight.result) return flight.result
      const now = Date.now()
      if (isStale(flight.beat, now, now - looked < 3 * POLL_MS)) {
        if (this.flights.get(key) === flight) this.flights.delete(key)
        return undefined
      }
      looked = now
      if (now >= deadline) {
        throw new ApiError('busy', 'This worker is busy converting the same image for another request; it did not finish in time. Retry shortly.', {}, { 'Retry-After': '2' })
      }
      await sleep(Math.min(POLL_MS, deadline - now))
    }
  }
}
