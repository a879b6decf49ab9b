import { type FeedListener, type Store, StoreError } from "mcp-yield";

/**
 * How a store operation fails:
 * - `error`: refused at once (`store_unavailable`), nothing written.
 * - `late`: the caller gets `store_unavailable` (its timeout), but the operation still happens a
 *   moment later — what a Redis command that timed out on the client does when it lands.
 * - `pause`: this store stalls for `pauseMs` (past a task's lease) from that operation on — it
 *   and every operation issued meanwhile wait, then happen and answer as usual: a stalled
 *   process, a Redis paused for this client. Its instance is alive but late; another instance
 *   on the same store may have taken its task over meanwhile.
 */
export type FaultKind = "error" | "late" | "pause";

/** Which operations fail: by their 1-based position among all operations, and/or by a predicate. */
export interface FaultPlan {
  kind: FaultKind;
  /** Fail the operation with this position (1 = the first operation after `arm()`). */
  at?: number;
  /** Fail every operation this says yes to (e.g. writes of one key prefix). */
  when?: (op: string, key: string) => boolean;
  /** How long a `pause` lasts. Default 500 ms. */
  pauseMs?: number;
}

const OPERATIONS = ["get", "add", "swap", "set", "delete", "incr", "schedule", "unschedule", "index", "due", "size", "members"] as const;

/**
 * A store for tests that fails chosen operations, and counts them. Unarmed it passes everything
 * through; `arm(plan)` starts counting from 0 and failing by the plan; `disarm()` stops failing.
 * `settled()` resolves once every late operation has landed.
 */
export function faultyStore(
  inner: Store,
): Store & { arm(plan: FaultPlan): void; disarm(): void; readonly count: number; readonly stalledAt: number | undefined; readonly failed: string[]; settled(): Promise<void> } {
  let plan: FaultPlan | undefined;
  let count = 0;
  const failed: string[] = [];
  const landing: Array<Promise<unknown>> = [];
  let stalled: Promise<unknown> | undefined;
  let stalledAt: number | undefined;
  const wrapped = {} as Record<string, unknown>;
  // A swap or an add with its index changes is one operation of the store's: failed as a swap, an add.
  const operations: Array<(typeof OPERATIONS)[number] | "swapIndexed" | "addIndexed" | "getMany"> = [
    ...OPERATIONS,
    ...(inner.getMany !== undefined ? (["getMany"] as const) : []),
    ...(inner.swapIndexed !== undefined ? (["swapIndexed"] as const) : []),
    ...(inner.addIndexed !== undefined ? (["addIndexed"] as const) : []),
  ];
  for (const method of operations) {
    const op = method === "swapIndexed" ? "swap" : method === "addIndexed" ? "add" : method;
    wrapped[method] = async (...args: unknown[]) => {
      const run = () => (inner[method] as (...a: unknown[]) => Promise<unknown>).apply(inner, args);
      if (stalled !== undefined) {
        await stalled;
        return run();
      }
      if (plan === undefined) return run();
      count++;
      const key = String(args[0]);
      const hit = plan.at === count || (plan.when?.(op, key) ?? false);
      if (!hit) return run();
      failed.push(`${op} ${key}`);
      if (plan.kind === "pause") {
        const pauseMs = plan.pauseMs ?? 500;
        stalledAt = performance.now();
        stalled = new Promise((resolve) => setTimeout(resolve, pauseMs)).then(() => (stalled = undefined));
        await stalled;
        return run();
      }
      if (plan.kind === "late") {
        // Lands after the caller gave up on it (a macrotask later: after the caller's reaction).
        landing.push(new Promise((resolve) => setTimeout(resolve, 5)).then(run).catch(() => {}));
      }
      throw new StoreError("store_unavailable", `injected ${plan.kind} fault on ${op} ${key}`);
    };
  }
  const controls = {
    close: () => inner.close(),
    arm(p: FaultPlan) {
      plan = p;
      stalledAt = undefined;
      count = 0;
      failed.length = 0;
    },
    disarm() {
      plan = undefined;
    },
    failed,
    async settled() {
      await Promise.all(landing.splice(0));
    },
  };
  // The store's clock is not an operation the suite fails (a failed measurement keeps the last one).
  if (inner.time !== undefined) wrapped.time = () => inner.time!();
  // Nor is the change feed (best effort by design): notices pass as they come.
  if (inner.listen !== undefined) wrapped.listen = (channel: string, listener: FeedListener) => inner.listen!(channel, listener);
  // `count` and `stalledAt` stay live getters (Object.assign would copy their values once).
  const live = Object.defineProperty(Object.assign(wrapped as unknown as Store, controls), "count", { get: () => count });
  return Object.defineProperty(live, "stalledAt", { get: () => stalledAt }) as Store & typeof controls & { readonly count: number; readonly stalledAt: number | undefined };
}
