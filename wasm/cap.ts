/**
 * A ceiling on one codec instance's linear memory. `reached` records that the codec asked for more,
 * so a failure can be reported as what it is.
 */
export class MemoryCap {
  reached = false
  constructor(readonly maxBytes: number) {}
}

