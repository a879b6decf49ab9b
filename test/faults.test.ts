import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createMemoryStore, createRuntime, type Runtime, type Store } from "mcp-yield";
import { createRedisStore } from "mcp-yield/redis";
import { drive, SHAPES, type Shape, type StepRuns } from "./support/fault-shapes.js";
import { type FaultKind, faultyStore } from "./support/faulty-store.js";
import { dropPrefix, REDIS_URL, redisAvailable, testPrefix } from "./support/redis.js";

// The fault-injection suite: for every tool shape, fail the k-th store operation of a call for
// every k in turn — refused at once, or timed out on the client and landing later — and check
// after each run that no step body ran twice under one key, that the client reached the
// fault-free run's result (retrying only as the errors say), and that nothing was left stuck.

const keys = [{ id: "f", secret: new Uint8Array(32).fill(33) }];
const KINDS: FaultKind[] = ["error", "late"];
const prefix = testPrefix("faults");
const stores: Array<[string, () => Promise<Store>]> = [["memory", async () => createMemoryStore()]];
let next = 0;
if (redisAvailable) stores.push(["redis", () => createRedisStore({ url: REDIS_URL, prefix: `${prefix}${next++}:` })]);
const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});
afterAll(async () => {
  if (redisAvailable) await dropPrefix(prefix);
});

/** Counts of every run of this suite, for the README's reliability section. */
export const tally = { runs: 0, violations: 0 };

async function runOnce(makeStore: () => Promise<Store>, shape: Shape, fault?: { kind: FaultKind; at: number }) {
  const store = faultyStore(await makeStore());
  const options = shape.options ?? {};
  const { state, ...rest } = options as { state?: Record<string, unknown> };
  const runtime: Runtime = createRuntime({ state: { keys, ...state }, store, onError: () => {}, tasks: { leaseMs: 300, sweepMs: 50, pollIntervalMs: 100 }, ...rest });
  open.push(store, runtime);
  const runs: StepRuns = new Map();
  const def = shape.def(runs);
  runtime.define([def]);
  store.arm(fault ? { kind: fault.kind, at: fault.at } : { kind: "error" });
  const result = await drive(runtime, def, shape);
  const operations = store.count;
  store.disarm();
  await store.settled();
  await runtime.idle();
  return { result, runs, operations, failed: [...store.failed] };
}

describe.each(stores)("fault injection on the %s store", (_name, makeStore) => {
  it.each(SHAPES.map((s) => [s.name, s] as const))("%s: every operation failed in turn, every way", async (_n, shape) => {
    const clean = await runOnce(makeStore, shape);
    expect(clean.result.outcome).toHaveProperty("text");
    expect(clean.operations).toBeGreaterThan(2); // the store is really in the call's path
    expect([...clean.runs.values()].every((n) => n === 1)).toBe(true);
    const violations: string[] = [];
    for (const kind of KINDS) {
      for (let at = 1; at <= clean.operations; at++) {
        const run = await runOnce(makeStore, shape, { kind, at });
        tally.runs++;
        const where = `${kind} fault at operation ${at}/${clean.operations} (${run.failed.join(", ") || "not reached"})`;
        const twice = [...run.runs].filter(([, n]) => n > 1).map(([k, n]) => `${k} ran ${n} times`);
        if (twice.length > 0) violations.push(`${where}: ${twice.join("; ")}`);
        if (!("text" in run.result.outcome)) violations.push(`${where}: the client was left with ${run.result.outcome.error}`);
        else if (run.result.outcome.text !== (clean.result.outcome as { text: string }).text) violations.push(`${where}: result ${JSON.stringify(run.result.outcome.text)}, fault-free ${JSON.stringify((clean.result.outcome as { text: string }).text)}`);
      }
    }
    tally.violations += violations.length;
    console.log(`${_name} / ${shape.name}: ${clean.operations} operations × ${KINDS.length} fault kinds = ${clean.operations * KINDS.length} runs, ${violations.length} violations`);
    expect(violations).toEqual([]);
  }, 120_000);
});
