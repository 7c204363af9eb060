/**
 * A CPU budget for repeated tries (quality=auto's trial encodes, max_bytes' lower qualities): a try is started only if
 * the time spent so far plus the longest try so far stays within `limitMs`. Workers kill a request past `limits.cpu_ms`,
 * and a try costs about what the tries before it did, so the longest of them is the estimate for the next.
 *
 * @example
 * const budget = new TryBudget(0.8 * cpuLimitMs, searchMs)
 * while (!budget.exhausted()) budget.record(await oneTry())
 */
export class TryBudget {
  private readonly limitMs: number
  private spentMs: number
  private longest = 0

  /** `spentMs`: what the request spent before the first try. */
  constructor(limitMs: number, spentMs = 0) {
    this.limitMs = limitMs
    this.spentMs = spentMs
  }

  /** Count a try that took `ms`. */
  record(ms: number): void {
    this.spentMs += ms
    this.longest = Math.max(this.longest, ms)
  }

  /** Whether another try, as long as the longest so far, would pass the limit. */
  exhausted(): boolean {
    return this.spentMs + this.longest > this.limitMs
  }
}
