import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createTaskAdmin, type Runtime, sleep, step, type Store, tool } from "mcp-yield";
import { closedAfterEach, sweepingInstance, until } from "../support/instances.js";
import { TASKS_INFO } from "../support/signal-tasks.js";
import { testKey } from "../support/keys.js";
import { instanceStores } from "../support/stores.js";

// An instance closed while its sweep is taking tasks over: once `runtime.close()` resolves,
// nothing of that instance touches the store (a run it launched kept writing and kept the
// process from exiting — seen in bench:wakeups on PostgreSQL), and the tasks its sweep took
// over while it closed are handed back, so another instance runs them at once rather than at
// the end of their lease. Each step runs once.

const keys = [testKey("c", 45)];
const open = closedAfterEach("close-mid-sweep");
const kinds = instanceStores("close-mid-sweep");

const ran = new Map<string, number>();
const count = (key: string) => ran.set(key, (ran.get(key) ?? 0) + 1);
const napping = tool({
  name: "napping",
  description: "",
  input: z.object({ n: z.number(), until: z.number() }),
  task: "required",
  async *run({ n, until }) {
    yield* step("before", () => void count(`before ${n}`));
    yield* sleep(new Date(until));
    yield* step("after", () => void count(`after ${n}`));
    return `woke ${n}`;
  },
});

const instance = (store: Store, sweepMs: number): Runtime => sweepingInstance(open, keys, [napping], store, sweepMs);
const asTask = TASKS_INFO;

/**
 * `store` with its compare-and-swaps held until `release()` once `hold()` was called, and every
 * operation after `close()` was said to have resolved (`closed()`) noted.
 */
function gated(store: Store) {
  let holding = false;
  let held = 0;
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let closed = false;
  const after: string[] = [];
  const view = new Proxy(store, {
    get: (target, p) => {
      const value = target[p as keyof Store];
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        if (closed && p !== "close") after.push(String(p));
        const call = () => (value as (...a: unknown[]) => unknown).apply(target, args);
        if (holding && (p === "swap" || p === "swapIndexed")) {
          held++;
          return released.then(call);
        }
        return call();
      };
    },
  }) as Store;
  return { view, after, held: () => held, hold: () => (holding = true), release, closed: () => (closed = true) };
}

describe.each(kinds)("closing an instance mid-sweep on $name", (kind) => {
  it("close resolves once nothing of the instance runs; the tasks its sweep took over meanwhile go to another instance at once, each step run once", async () => {
    ran.clear();
    const store = await kind.make();
    const due = Date.now() + 3_000;
    const starter = instance(store, 60_000);
    await Promise.all(Array.from({ length: 40 }, (_, n) => starter.callTool(napping, { name: "napping", arguments: { n, until: due } }, asTask)));
    await until(async () => (ran.size === 40 ? true : undefined), 15_000).catch((e) => {
      throw new Error(`${(e as Error).message}: ${ran.size} of 40 tasks started their first step`);
    });
    // All 40 asleep before the starter closes: a run whose sleep was not written yet is handed
    // back due now, and the closing instance's sweep would wait on that one held take-over alone.
    const asleep = async () => (await createTaskAdmin({ store }).list({ status: "working", limit: 100 })).filter((t) => t.state.startsWith("asleep")).length;
    await until(async () => ((await asleep()) === 40 ? true : undefined), 15_000).catch(async (e) => {
      throw new Error(`${(e as Error).message}: ${await asleep()} of 40 tasks asleep`);
    });
    await starter.close();
    expect(Date.now()).toBeLessThan(due); // else the starter may have woken some itself

    // The closing instance: its take-overs are held in flight, then it is closed, then they land.
    const closing = await kind.make(); // memory: the same store object (one process)
    const gate = gated(closing);
    gate.hold();
    const leaving = instance(gate.view, 50);
    try {
      await until(async () => (gate.held() >= 2 ? true : undefined), 15_000).catch((e) => {
        throw new Error(`${(e as Error).message}: the closing instance's sweep took ${gate.held()} tasks over`);
      });
      const closed = leaving.close();
      gate.release();
      await closed;
      gate.closed();
    } finally {
      gate.release();
    }

    // Another instance finds them due now (handed back), not in 20 s (the lease's end).
    const admin = createTaskAdmin({ store });
    const completed = async () => (await admin.list({ status: "completed", limit: 100 })).length;
    instance(store, 50);
    await until(async () => ((await completed()) === 40 ? true : undefined), 10_000).catch(async (e) => {
      throw new Error(`${(e as Error).message}: ${await completed()} of 40 completed; steps ${JSON.stringify([...ran])}`);
    });
    expect(gate.after).toEqual([]);
    for (let n = 0; n < 40; n++) {
      expect(ran.get(`before ${n}`), `task ${n}`).toBe(1);
      expect(ran.get(`after ${n}`), `task ${n}`).toBe(1);
    }
    if (closing !== store) await closing.close();
    await store.close();
  }, 60_000);
});
