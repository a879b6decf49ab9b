import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createMemoryStore, createRuntime, createTaskAdmin, type Runtime, sleep, step, type Store, tool } from "mcp-yield";
import { closedAfterEach, until } from "../support/instances.js";
import { testKey } from "../support/keys.js";
import { sharedStores } from "../support/stores.js";

// Issue 58, point 2 (the part an instance knows itself): a task this instance puts to sleep or
// into a retry delay wakes at its time, not at the next sweep — with nobody polling it. The
// sweep (every 20 s here) stays the backstop for what other instances wrote.

const keys = [testKey("w", 43)];
const open = closedAfterEach("wake-timer");
const kinds = [{ name: "memory", make: async (): Promise<Store> => createMemoryStore(), drop: async () => {} }, ...sharedStores("wake-timer")];
afterAll(async () => {
  for (const k of kinds) await k.drop();
});

const flaky = { failures: 0 };
const durable = tool({
  name: "durable",
  description: "",
  input: z.object({ ms: z.number() }),
  task: "required",
  async *run({ ms }) {
    const first = yield* step(
      "flaky",
      () => {
        if (flaky.failures-- > 0) throw new Error("not yet");
        return 1;
      },
      { retry: { attempts: 3, initialMs: 100 } },
    );
    yield* sleep(ms);
    return `done ${first}`;
  },
});

function instance(store: Store): Runtime {
  // The sweep is far off: what wakes the tasks on time is the instance's own timer.
  const runtime = createRuntime({ state: { keys }, store, onError: () => {}, tasks: { sweepMs: 20_000, leaseMs: 40_000 } });
  runtime.define([durable]);
  open.push(runtime);
  return runtime;
}
const asTask = { clientCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } };

describe.each(kinds)("wake-ups on $name", (kind) => {
  it("a 100 ms retry delay and a 150 ms sleep end on time with nobody polling (the sweep is 20 s away)", async () => {
    const store = await kind.make();
    const runtime = instance(store);
    const admin = createTaskAdmin({ store }); // reads the store only: no tasks/get to wake anything
    flaky.failures = 1;
    const started = performance.now();
    const { taskId } = (await runtime.callTool(durable, { name: "durable", arguments: { ms: 150 } }, asTask)) as { taskId: string };
    await until(async () => ((await admin.show(taskId))?.status === "completed" ? true : undefined), 15_000);
    const took = performance.now() - started;
    expect(took).toBeGreaterThanOrEqual(250);
    expect(took).toBeLessThan(5_000); // at the sweep it would be 20 s
    await store.close();
  }, 30_000);

  it("200 tasks asleep until about the same time all wake with one timer, none left for the sweep", async () => {
    const store = await kind.make();
    const runtime = instance(store);
    const admin = createTaskAdmin({ store });
    flaky.failures = 0;
    const ids = new Set(
      (await Promise.all(Array.from({ length: 200 }, (_, i) => runtime.callTool(durable, { name: "durable", arguments: { ms: 300 + (i % 7) } }, asTask)))).map((t) => (t as { taskId: string }).taskId),
    );
    const started = performance.now();
    const completed = async () => (await admin.list({ status: "completed", limit: 1000 })).filter((t) => ids.has(t.taskId)).length;
    await until(async () => ((await completed()) === 200 ? true : undefined), 15_000).catch(async (e) => {
      throw new Error(`${(e as Error).message}: ${await completed()} of 200 completed`);
    });
    expect(performance.now() - started).toBeLessThan(10_000);
    await store.close();
  }, 40_000);
});
