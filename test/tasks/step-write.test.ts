import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createMemoryStore, createRuntime, type Runtime, type Store, StoreError, step, tool } from "mcp-yield";
import { testKey } from "../support/keys.js";

// A step's result, once its body ran, is written however late in the run's lease that is: the
// write is fenced on the run (a compare-and-swap on who holds the task), so retrying it through
// a failed store operation after the lease's end is safe — it lands if nobody took the task
// over, and is refused if someone did. Giving up at the lease's end instead lost the result of a
// step that had run, and the task's next run ran the step again, though nobody else ever held it.
//
// An instance never starts a second run of a task its own run is still driving. The run's lease
// can end while the run is alive — its step's write held up by a slow store, the process starved
// of CPU — and another instance then takes the task over, as it must (it cannot tell a slow run
// from a dead one). This instance can: a second run here, started by its sweeper or by a
// tasks/get, replayed the journal and ran the step again while the first run's write was still
// on its way (the fault suite saw one step run twice by one instance on a busy machine).

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

/** A task of one step, which notes each run of its body (on `clock`), does `during`, and returns RESULT. */
function oneStep(name: string, runs: number[], clock: () => number, during: () => void) {
  return tool({
    name,
    description: "",
    input: z.object({}),
    task: "required",
    async *run() {
      const value = yield* step("work", () => {
        runs.push(clock());
        during();
        return RESULT;
      });
      return `value ${value}`;
    },
  });
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
    const job = oneStep("late-write", runs, clock, () => {
      if (runs.length === 1) {
        offset += LEASE_MS - 5;
        failNextWrite = true;
      }
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

  it("its lease ended while the run here is alive: not taken over by this instance, the step runs once, the held write lands", async () => {
    // The engine's clock is the test's: the step body moves it past the lease's end, and the
    // store holds the write of the step's result until the test lets it go.
    let offset = 0;
    const started = performance.timeOrigin + performance.now();
    const clock = () => started + offset;
    let release: (() => void) | undefined;
    const held = new Promise<void>((r) => {
      release = r;
    });
    let holding = false;
    let sweeps = 0;
    const store = new Proxy(createMemoryStore(), {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver) as unknown;
        if (typeof value !== "function") return value;
        if (name === "due")
          return (...args: unknown[]) => {
            sweeps++;
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        if (name !== "swap" && name !== "swapIndexed") return value.bind(target);
        return async (...args: Parameters<Store["swap"]>) => {
          if (args[2].includes(RESULT) && release !== undefined) {
            holding = true;
            await held;
          }
          return (value as Store["swap"]).apply(target, args);
        };
      },
    });
    const runs: number[] = [];
    const job = oneStep("slow-write", runs, clock, () => {
      offset += 2 * LEASE_MS;
    });
    const runtime = createRuntime({ state: { keys }, store, clock, onError: () => {}, tasks: { leaseMs: LEASE_MS, sweepMs: 20 } });
    open.push(runtime);
    runtime.define([job]);
    const { taskId } = (await runtime.callTool(job, { name: "slow-write", arguments: {} }, info)) as { taskId: string };
    await until(async () => (holding ? true : undefined));
    // The lease has ended by the store's clock: a tasks/get and three sweeps, each of which would
    // take a due task over.
    expect(((await runtime.getTask({ taskId }, info)) as unknown as { status: string }).status).toBe("working");
    const seen = sweeps;
    await until(async () => (sweeps >= seen + 3 ? true : undefined));
    expect(runs).toHaveLength(1);
    release!();
    const done = await until(async () => {
      const got = (await runtime.getTask({ taskId }, info)) as unknown as { status: string; result?: { content: Array<{ text: string }> } };
      return got.status === "working" ? undefined : got;
    });
    expect(done.status).toBe("completed");
    expect(done.result?.content[0]?.text).toBe(`value ${RESULT}`);
    expect(runs).toHaveLength(1);
  });
});
