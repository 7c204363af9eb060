import type {} from 'vitest'
/** What vitest's globalSetup gives the workerd tests (`inject`): the loopback origin of test/origin/server.ts. */
declare module 'vitest' {
  export interface ProvidedContext {
    originUrl: string
  }
}

export {}
