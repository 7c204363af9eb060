import { ApiError } from '../errors'
import { heartbeat, type Heartbeat, isStale, POLL_MS, sleep } from './heartbeat'

/**
 * The isolate's conversion queue: one conversion at a time (two 12 MP conversions side by side would need twice the
 * memory of a 128 MB isolate), the others waiting in arrival order.
 *
 * Nothing in it waits on another request's continuation. workerd never runs the continuations of a request that has
 * ended, so a queue that hands the turn on from one request's `.then` to the next wedges for good the first time a
 * request ends early; and resolving a promise of another request is refused as I/O across requests. So no request
 * wakes another: each waiter decides for itself, on its own timer (every `pollMs`), whether its turn has come: the
 * slot is free (or its holder's heartbeat stopped) and no live waiter is ahead.
 *
 * Admission is honest: a request whose expected wait (what is queued and running, at the cost each was estimated to
 * take) is over its timeout is refused at once with 503 and a Retry-After of that wait, instead of after the timeout.
 *
 * @example
 * const queue = new ConversionQueue({ onAbandoned: abandonLeanSession })
 * const out = await queue.run(() => convert(bytes), { timeoutMs: 20_000, costMs: 800 })
 */
export interface QueueOptions {
  /** How often a waiter looks whether its turn has come, when nothing woke it. */
  pollMs?: number
  /** Called when a holder's heartbeat stopped (its request ended mid-conversion), before the next one starts. */
  onAbandoned?: () => void
}

export interface RunOptions {
  /** Longest wait for the turn before 503 busy. */
  timeoutMs: number
  /** The conversion's estimated time, for the admission of those behind it (src/queue/cost.ts). */
  costMs: number
  /** Work no client waits for (a better variant made after the answer): it runs only when no client's conversion waits. */
  background?: boolean
}

export interface QueueStats {
  /** Conversions waiting. */
  waiting: number
  /** Of those, conversions a client waits for (not background work). */
  waitingForClients: number
  /** 1 while a conversion runs. */
  running: number
  /** How long the oldest waiter has waited, in ms. */
  oldestWaitMs: number
  /** When a conversion last started or ended (Date.now()). */
  movedAt: number
  /** The wait a request arriving now can expect, in ms. */
  expectedWaitMs: number
}

interface Ticket {
  readonly costMs: number
  readonly since: number
  readonly beat: Heartbeat
  readonly background: boolean
  started?: number
}

function busy(waitMs: number, detail: string): ApiError {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000))
  return new ApiError('busy', `This worker is busy with other conversions: ${detail}. Retry in about ${seconds} s.`, { retryAfter: seconds }, { 'Retry-After': String(seconds) })
}

export class ConversionQueue {
  private readonly pollMs: number
  private readonly onAbandoned: () => void
  private readonly waiting: Ticket[] = []
  private holder: Ticket | undefined
  private movedAt = Date.now()

  constructor({ pollMs = POLL_MS, onAbandoned = () => {} }: QueueOptions = {}) {
    this.pollMs = pollMs
    this.onAbandoned = onAbandoned
  }

  stats(now = Date.now()): QueueStats {
    const oldest = this.waiting[0]
    return {
      waiting: this.waiting.length,
      waitingForClients: this.waiting.filter((ticket) => !ticket.background).length,
      running: this.holder ? 1 : 0,
      oldestWaitMs: oldest ? now - oldest.since : 0,
      movedAt: this.movedAt,
      expectedWaitMs: this.expectedWait(now),
    }
  }

  async run<T>(work: () => Promise<T>, { timeoutMs, costMs, background = false }: RunOptions): Promise<T> {
    const now = Date.now()
    const expected = this.expectedWait(now)
    if (expected > timeoutMs) throw busy(expected, `the conversions before this one are expected to take ${Math.round(expected)} ms, over QUEUE_TIMEOUT_MS (${timeoutMs} ms)`)
    const ticket: Ticket = { costMs, since: now, beat: heartbeat(), background }
    this.waiting.push(ticket)
    try {
      await this.turn(ticket, timeoutMs)
      try {
        return await work()
      } finally {
        this.release(ticket)
      }
    } finally {
      this.remove(ticket)
      ticket.beat.stop()
    }
  }

  /** Until this ticket holds the slot, each waiter on its own timer; 503 once `timeoutMs` has passed. */
  private async turn(ticket: Ticket, timeoutMs: number): Promise<void> {
    const deadline = ticket.since + timeoutMs
    // No judging of others on the first look: this request may have arrived right after a long synchronous step,
    // before the holder's overdue beat has run.
    let looked = Number.NEGATIVE_INFINITY
    for (;;) {
      const now = Date.now()
      this.prune(now, now - looked < 3 * this.pollMs)
      looked = now
      if (this.holder === undefined && this.next() === ticket) {
        this.remove(ticket)
        ticket.started = now
        this.holder = ticket
        this.movedAt = now
        return
      }
      if (now >= deadline) {
        // Out of the queue first, so the Retry-After counts only the conversions before it.
        this.remove(ticket)
        throw busy(Math.max(1000, this.expectedWait(now)), `waited ${timeoutMs} ms (QUEUE_TIMEOUT_MS) for the conversions before this one`)
      }
      await sleep(Math.min(this.pollMs, deadline - now))
    }
  }

  /** Whose turn it is: the first client's conversion, else the first background one. */
  private next(): Ticket | undefined {
    return this.waiting.find((ticket) => !ticket.background) ?? this.waiting[0]
  }

  private release(ticket: Ticket): void {
    if (this.holder !== ticket) return
    this.holder = undefined
    this.movedAt = Date.now()
  }

  private remove(ticket: Ticket): void {
    const at = this.waiting.indexOf(ticket)
    if (at >= 0) this.waiting.splice(at, 1)
  }

  /** Drops the waiters and the holder whose requests have ended (their heartbeats stopped). */
  private prune(now: number, smooth: boolean): void {
    for (let i = this.waiting.length - 1; i >= 0; i--) {
      if (isStale(this.waiting[i]!.beat, now, smooth)) this.waiting.splice(i, 1)
    }
    if (this.holder && isStale(this.holder.beat, now, smooth)) {
      this.holder = undefined
      this.movedAt = now
      this.onAbandoned()
    }
  }

  private expectedWait(now: number): number {
    const running = this.holder ? Math.max(0, this.holder.costMs - (now - (this.holder.started ?? now))) : 0
    return this.waiting.reduce((sum, ticket) => sum + (ticket.background ? 0 : ticket.costMs), running)
  }
}
