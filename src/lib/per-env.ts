/**
 * A configuration read from `env` once per env object (workerd passes the same one to every request of an isolate,
 * a test its own), not on every request.
 *
 * @example
 * export const limitsOf = perEnv((env) => toLimits(ConfigSchema.parse(env)))
 */
export function perEnv<E extends object, T>(read: (env: E) => T): (env: E) => T {
  const cache = new WeakMap<E, T>()
  return (env) => {
    let value = cache.get(env)
    if (value === undefined) {
      value = read(env)
      cache.set(env, value)
    }
    return value
  }
}
