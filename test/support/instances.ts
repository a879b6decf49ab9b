import { afterAll, afterEach } from "vitest";
import { createRuntime, type Runtime, type StateCodecOptions, type Store, type ToolDefinition } from "mcp-yield";
import { dropPrefix, redisAvailable } from "./redis.js";

/**
 * What a test file opens (runtimes, stores) is closed after each test, newest first; call at
 * the top level of the file. With a Redis key `prefix`, its keys are dropped after the file.
 */
export function closedAfterEach(prefix?: string): Array<{ close(): Promise<void> }> {
  const open: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const o of open.splice(0).reverse()) await o.close();
  });
  if (prefix !== undefined) {
    afterAll(async () => {
      if (redisAvailable) await dropPrefix(prefix);
    });
  }
  return open;
}

/**
 * `store` as an instance sees it, until `kill()`: from then on no operation answers (a process
 * that died mid-run: no lease renewal, no writes), except `close`, so the test can clean up.
 */
export function killable(store: Store): { store: Store; kill(): void } {
  let dead = false;
  const proxy = new Proxy(store, {
    get: (target, p) => {
      const value = target[p as keyof Store];
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => (dead && p !== "close" ? new Promise(() => {}) : (value as (...a: unknown[]) => unknown).apply(target, args));
    },
  }) as Store;
  return { store: proxy, kill: () => (dead = true) };
}

/**
 * What `what` gives once it gives something (polled every 10 ms), or an error after `ms` — a
 * test waits for the state it needs instead of sleeping a guessed time.
 */
export async function until<T>(what: () => Promise<T | undefined>, ms = 8000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const got = await what();
    if (got !== undefined) return got;
    if (Date.now() > end) throw new Error(`the condition was not reached within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * An instance that runs `tools` as tasks on `store` — leases of 20 s, a sweep every `sweepMs` —
 * closed after the test with the rest of `open`.
 */
export function sweepingInstance(open: Array<{ close(): Promise<void> }>, keys: StateCodecOptions["keys"], tools: ToolDefinition[], store: Store, sweepMs: number): Runtime {
  const runtime = createRuntime({ state: { keys }, store, onError: () => {}, tasks: { sweepMs, leaseMs: 20_000 } });
  runtime.define(tools);
  open.push(runtime);
  return runtime;
}
