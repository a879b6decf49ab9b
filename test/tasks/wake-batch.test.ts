import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createTaskAdmin, type Runtime, sleep, step, type Store, tool } from "mcp-yield";
import { closedAfterEach, sweepingInstance, until } from "../support/instances.js";
import { TASKS_INFO } from "../support/signal-tasks.js";
import { testKey } from "../support/keys.js";
import { instanceStores } from "../support/stores.js";

// Issue 58, point 2 (wake-ups at volume): a sweep that finds many tasks due reads their records
// together — one store operation for a batch (`getMany`: one statement on PostgreSQL, one MGET
// on Redis), not one read per task before its take-over. Tasks another instance put to sleep
// are the case: an instance keeps no record of a task nobody holds.

const keys = [testKey("b", 44)];
const open = closedAfterEach("wake-batch");
const kinds = instanceStores("wake-batch", { cluster: true });

const runs = new Map<string, number>();
const napping = tool({
  name: "napping",
  description: "",
  input: z.object({ n: z.number(), until: z.number() }),
  task: "required",
  async *run({ n, until }) {
    yield* step("before", () => void runs.set(`${n}`, (runs.get(`${n}`) ?? 0) + 1));
    yield* sleep(new Date(until));
    return `woke ${n}`;
  },
});

/** `store` with its reads counted: single reads of task records, and batched reads. */
function counted(store: Store) {
  const reads = { single: 0, batched: 0, batchedKeys: 0 };
  const view = Object.create(store) as Store;
  view.get = (key) => {
    if (key.startsWith("task")) reads.single++;
    return store.get(key);
  };
  view.getMany = (ks) => {
    reads.batched++;
    reads.batchedKeys += ks.length;
    return store.getMany!(ks);
  };
  return { view, reads };
}

const instance = (store: Store, sweepMs: number): Runtime => sweepingInstance(open, keys, [napping], store, sweepMs);
const asTask = TASKS_INFO;

describe.each(kinds)("a batch of due tasks on $name", (kind) => {
  it("120 tasks another instance put to sleep are woken by a sweep that reads their records in batches, each step run once", async () => {
    const store = await kind.make();
    expect(store.getMany).toBeTypeOf("function");
    runs.clear();
    // All asleep until one moment, far enough off for a loaded machine to start them all; the
    // instance that starts them is closed before it, and the one that wakes them starts after it,
    // so its sweep finds all 120 due at once (not a few at a time as they come due).
    const due = Date.now() + 5_000;
    const starter = instance(store, 60_000);
    const ids = await Promise.all(Array.from({ length: 120 }, (_, n) => starter.callTool(napping, { name: "napping", arguments: { n, until: due } }, asTask)));
    const admin = createTaskAdmin({ store });
    const asleep = async () => (await admin.list({ status: "working", limit: 1000 })).length;
    await until(async () => ((await asleep()) === 120 && runs.size === 120 ? true : undefined), 15_000);
    await starter.close();
    expect(Date.now()).toBeLessThan(due); // else the starter may have woken some itself
    await new Promise((r) => setTimeout(r, due + 200 - Date.now()));
    const { view, reads } = counted(store);
    instance(view, 50);
    const completed = async () => (await admin.list({ status: "completed", limit: 1000 })).length;
    await until(async () => ((await completed()) === 120 ? true : undefined), 20_000).catch(async (e) => {
      throw new Error(`${(e as Error).message}: ${await completed()} of 120 completed; reads ${JSON.stringify(reads)}`);
    });
    expect(ids).toHaveLength(120);
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
    // Every task read in a batch of up to 50 (three or so batches), not one read each before its
    // take-over (120 single reads before); the single reads left are the runs' own (a heartbeat
    // on a loaded machine, say).
    expect(reads.batchedKeys).toBeGreaterThanOrEqual(120);
    expect(reads.batched).toBeLessThanOrEqual(10);
    expect(reads.single).toBeLessThan(120);
    await store.close();
  }, 60_000);
});
