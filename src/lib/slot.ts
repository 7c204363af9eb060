import { ApiError } from '../errors'
import { withinMs } from './deadline'

/**
 * A one-at-a-time gate for heavy work in this isolate. Concurrent requests share one 128 MB isolate,
 * and two 12 MP conversions side by side would need twice the memory, so they queue instead; a
 * request that waits longer than `timeoutMs` gets 503 with Retry-After.
 *
 * @example
 * const slot = new Slot()
 * const result = await slot.run(() => convert(image), 20_000)
 */
export class Slot {
  private tail: Promise<void> = Promise.resolve()
  private waiting = 0

  /** Requests queued or running now. */
  get depth(): number {
    return this.waiting
  }

  async run<T>(work: () => Promise<T>, timeoutMs: number): Promise<T> {
    const previous = this.tail
    let release!: () => void
    this.tail = new Promise((resolve) => (release = resolve))
    this.waiting++
    try {
      await withinMs(previous, timeoutMs, () => new ApiError(
        'busy',
        `This worker is busy with other conversions; waited ${timeoutMs} ms. Retry shortly.`,
        {},
        { 'Retry-After': '2' },
      ))
      return await work()
    } finally {
      this.waiting--
      // Our successor may start once both we and everything before us are done.
      void previous.then(release, release)
    }
  }
}

/** The isolate's conversion slot. */
export const conversionSlot = new Slot()
