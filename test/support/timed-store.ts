import type { Store } from "mcp-yield";

/** A store operation that took longer than the threshold: which instance asked, which operation, when it began (performance.now()) and how long it took. */
export interface SlowOperation {
  by: string;
  op: string;
  at: number;
  ms: number;
}

/**
 * `inner` as seen by one instance (`by`), every operation slower than `slowMs` noted in `slow`:
 * on a loaded machine a store that answers late stalls a task run as surely as an injected
 * pause does, and the fault suite needs to know when one did.
 */
export function timedStore(inner: Store, by: string, slowMs: number, slow: SlowOperation[]): Store {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      // The change feed's subscription and close are not operations a run waits on.
      if (typeof value !== "function" || prop === "listen" || prop === "close") return typeof value === "function" ? value.bind(target) : value;
      return (...args: unknown[]) => {
        const at = performance.now();
        const result: unknown = value.apply(target, args);
        if (!(result instanceof Promise)) return result;
        return result.finally(() => {
          const ms = performance.now() - at;
          if (ms > slowMs) slow.push({ by, op: `${String(prop)} ${String(args[0])}`, at, ms: Math.round(ms) });
        });
      };
    },
  });
}

/** How long, in all, at least one of `intervals` was going on (overlaps counted once). */
export function coveredMs(intervals: ReadonlyArray<{ at: number; ms: number }>): number {
  let total = 0;
  let end = -Infinity;
  for (const { at, ms } of [...intervals].sort((a, b) => a.at - b.at)) {
    const from = Math.max(at, end);
    if (at + ms > from) total += at + ms - from;
    end = Math.max(end, at + ms);
  }
  return total;
}
