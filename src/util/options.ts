// Integer options, checked one way everywhere: a limit, a size, a duration in ms. A bad value
// fails where the option is given (at construction), never later in a request.

/**
 * An integer option: `fallback` when not given, else a safe integer of at least `min`; anything
 * else throws `fail(message)` naming the option (a `TypeError` unless the caller has its own).
 */
export function integerOption(name: string, value: number | undefined, fallback: number, min: 0 | 1 = 1, fail: (message: string) => Error = (m) => new TypeError(m)): number {
  const v = value ?? fallback;
  if (!Number.isSafeInteger(v) || v < min) throw fail(`${name} must be ${min === 0 ? "a non-negative" : "a positive"} integer, got ${String(value)}`);
  return v;
}
