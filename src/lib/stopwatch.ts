/**
 * Elapsed wall time between laps, for Server-Timing.
 *
 * Workers advance their clock only across I/O (a Spectre mitigation), so a lap first yields to the
 * event loop once; without that, time spent inside synchronous WebAssembly reads as 0 ms.
 *
 * @example
 * const clock = new Stopwatch(); decode(); const ms = await clock.lap()
 */
export class Stopwatch {
  private last = performance.now()

  async lap(): Promise<number> {
    await new Promise((resolve) => setTimeout(resolve, 0))
    const now = performance.now()
    const elapsed = now - this.last
    this.last = now
    return elapsed
  }
}
