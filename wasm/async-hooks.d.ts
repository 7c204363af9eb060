// workerd implements node:async_hooks under the nodejs_compat flag (wrangler.toml); the worker's
// types do not include Node's, so this declares the one class the codecs use.
declare module 'node:async_hooks' {
  export class AsyncLocalStorage<T> {
    run<R>(store: T, callback: () => R): R
    getStore(): T | undefined
  }
}
