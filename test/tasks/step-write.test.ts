import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createMemoryStore, createRuntime, type Runtime, type Store, StoreError, step, tool } from "mcp-yield";
import { testKey } from "../support/keys.js";

// A step's result, once its body ran, is written however late in the run's lease that is: the
// write is fenced on the run (a compare-and-swap on who holds the task), so retrying it through
// a failed store operation after the lease's end is safe — it lands if nobody took the task
// over, and is refused if someone did. Giving up at the lease's end instead lost the result of a
// step that had run, and the task's next run ran the step again, though nobody else ever held it.

const keys = [testKey("w", 12)];
const info = { clientCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } };
const LEASE_MS = 300;
const RESULT = "result-7f3a";
const open: Runtime[] = [];
afterEach(async () => {
  for (const r of open.splice(0)) await r.close();
});

async function until<T>(what: () => Promise<T | undefined>, ms = 5_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const got = await what();
    if (got !== undefined) return got;
    if (Date.now() > end) throw new Error(`not reached within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("a step's result written late in the lease", () => {
  it("a write that fails once with the lease nearly out is retried and lands: the step ran once", async () => {
    // The engine's clock is the test's, and stands still unless the test moves it: the step body
    // moves it to 5 ms before the lease's end (what a busy machine does between a step's start
    // and its write: a retry 10 ms later would be past the end), and the store refuses the
    // write once. Nobody takes the task over meanwhile: the retry lands, and the step is done.
    let offset = 0;
    const started = performance.timeOrigin + performance.now();
    const clock = () => started + offset;
    // The store refuses, once, the first write that carries the step's result.
    const failed: string[] = [];
    let failNextWrite = false;
    let landed = false;
    let gaveUp = false;
    const store = new Proxy(createMemoryStore(), {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver) as unknown;
        // A task record's write: a swap, or a swap with its index changes.
        if ((name !== "swap" && name !== "swapIndexed") || typeof value !== "function") return typeof value === "function" ? value.bind(target) : value;
        return async (...args: Parameters<Store["swap"]>) => {
          if (failNextWrite && args[2].includes(RESULT)) {
            failNextWrite = false;
            failed.push(args[0]);
            throw new StoreError("store_unavailable", "injected: the step's write refused");
          }
          const written = await (value as Store["swap"]).apply(target, args);
          if (written && args[2].includes(RESULT)) landed = true;
          return written;
        };
      },
    });
    const runs: number[] = [];
    const job = tool({
      name: "late-write",
      description: "",
      input: z.object({}),
      task: "required",
      async *run() {
        const value = yield* step("work", () => {
          runs.push(clock());
          if (runs.length === 1) {
            offset += LEASE_MS - 5;
            failNextWrite = true;
          }
          return RESULT;
        });
        return `value ${value}`;
      },
    });
    const runtime = createRuntime({
      state: { keys },
      store,
      clock,
      onError: () => {
        gaveUp = true;
      },
      tasks: { leaseMs: LEASE_MS, sweepMs: 20 },
    });
    open.push(runtime);
    runtime.define([job]);
    const { taskId } = (await runtime.callTool(job, { name: "late-write", arguments: {} }, info)) as { taskId: string };
    // Once the result landed, or the run gave its write up (reported): then the lease runs out,
    // and had the result been dropped, the sweeper takes the task over and runs the step again.
    await until(async () => (landed || gaveUp ? true : undefined));
    offset += 2 * LEASE_MS;
    const done = await until(async () => {
      const got = (await runtime.getTask({ taskId }, info)) as unknown as { status: string };
      return got.status === "working" ? undefined : got;
    });
    expect(done.status).toBe("completed");
    expect(failed).toHaveLength(1);
    expect(runs).toHaveLength(1);
  });
});
