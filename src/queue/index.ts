import { abandonLeanSession, withLeanSession } from '../../wasm'
import { decoderMemoryCap } from '../codecs/types'
import { endBodyBuffer } from '../lib/body-buffer'
import { estimateMs, recordCost } from './cost'
import { ConversionQueue } from './queue'

/** The isolate's conversion queue. A conversion whose request ended mid-way leaves the lean session to the next. */
export const conversionQueue = new ConversionQueue({
  onAbandoned: () => {
    abandonLeanSession()
    endBodyBuffer()
  },
})

export interface TurnOptions {
  /** QUEUE_TIMEOUT_MS. */
  timeoutMs: number
  /** Work no client waits for: after every client's (`ConversionQueue`). */
  background?: boolean
  /** The input's size as declared before it is read (Content-Length, R2's size), for the admission estimate. */
  declaredBytes: number | undefined
}

/**
 * `work` in the isolate's conversion turn, over the isolate's lean session; the input bytes it reports (`inputBytes`
 * of its result, when it converted) teach the queue's cost estimate.
 *
 * @example
 * const out = await inConversionTurn(async () => convertImage(...), { timeoutMs, declaredBytes })
 */
export function inConversionTurn<T>(work: () => Promise<T>, { timeoutMs, declaredBytes, background }: TurnOptions, inputBytes: (result: T) => number | undefined = () => undefined): Promise<T> {
  return conversionQueue.run(async () => {
    const started = Date.now()
    const result = await withLeanSession(decoderMemoryCap(), work).finally(endBodyBuffer)
    const bytes = inputBytes(result)
    if (bytes !== undefined) recordCost(bytes, Date.now() - started)
    return result
  }, { timeoutMs, costMs: estimateMs(declaredBytes), background })
}

export { ConversionQueue } from './queue'
export { SingleFlight, type Shared } from './single-flight'
