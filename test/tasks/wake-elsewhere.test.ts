import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createRuntime, createTaskAdmin, type Runtime, sleep, step, type Store, tool } from "mcp-yield";
import { closedAfterEach, killable, until } from "../support/instances.js";
import { testKey } from "../support/keys.js";
import { instanceStores } from "../support/stores.js";

// Issue 58, point 2 across instances: what one instance put to sleep, or held under a lease when
// it died, another instance wakes or takes over at its time — from the store's change feed and
// the due index it re-reads within a second — not at its periodic sweep (20 s away here).

const keys = [testKey("e", 44)];
const open = closedAfterEach("wake-elsewhere");
const kinds = instanceStores("wake-elsewhere", { cluster: true });

const LEASE_MS = 1_500;
const ranBy: string[] = [];
const durable = (by: string) =>
  tool({
    name: "durable",
    description: "",
    input: z.object({ ms: z.number(), block: z.boolean() }),
    task: "required",
    async *run({ ms, block }) {
      yield* sleep(ms);
      // A step that never ends on its own (its run is stopped: a shutdown, a lost lease).
      const where = yield* step("work", (signal) => {
        ranBy.push(by);
        return block ? new Promise<string>((_, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true })) : by;
      });
      return `done by ${where}`;
    },
  });

function instance(store: Store, by: string): Runtime {
  // The periodic sweep is far off: only the feed and the due index can wake these tasks on time.
  const runtime = createRuntime({ state: { keys }, store, onError: () => {}, tasks: { sweepMs: 20_000, leaseMs: LEASE_MS } });
  runtime.define([durable(by)]);
  open.push(runtime);
  return runtime;
}
const asTask = { clientCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } };

describe.each(kinds)("wake-ups across instances on $name", (kind) => {
  it("a task put to sleep by an instance that then shut down wakes on another at its time", async () => {
    ranBy.length = 0;
    const first = instance(await kind.make(), "first");
    const other = instance(await kind.make(), "other");
    const admin = createTaskAdmin({ store: await kind.make() });
    const { taskId } = (await first.callTool(durable("first"), { name: "durable", arguments: { ms: 600, block: false } }, asTask)) as { taskId: string };
    await until(async () => ((await admin.show(taskId))?.state.startsWith("asleep") ? true : undefined), 5_000);
    await first.close();
    const asleep = performance.now();
    const done = await until(async () => {
      const task = await admin.show(taskId);
      return task?.status === "completed" ? task : undefined;
    }, 10_000);
    expect(done.result).toMatchObject({ content: [{ type: "text", text: "done by other" }] });
    expect(ranBy).toEqual(["other"]);
    expect(performance.now() - asleep).toBeLessThan(5_000); // the sweep would take 20 s
    await other.close();
  }, 30_000);

  it("a task whose instance died mid-step is taken over by another within its lease and a second or two", async () => {
    ranBy.length = 0;
    const dying = killable(await kind.make());
    const first = instance(dying.store, "first");
    const other = instance(await kind.make(), "other");
    const admin = createTaskAdmin({ store: await kind.make() });
    const { taskId } = (await first.callTool(durable("first"), { name: "durable", arguments: { ms: 0, block: true } }, asTask)) as { taskId: string };
    await until(async () => (ranBy.includes("first") ? true : undefined), 5_000);
    dying.kill(); // from now on its store answers nothing: no renewal, no write
    const died = performance.now();
    await until(async () => (ranBy.includes("other") ? true : undefined), 15_000);
    const tookOver = performance.now() - died;
    expect(ranBy).toEqual(["first", "other"]); // the step in flight runs again: the documented exception
    // The lease (renewed up to its half before the death) plus the due index's re-read (≤ 1 s);
    // the slack is for a loaded machine's timers. The periodic sweep would be 20 s.
    expect(tookOver).toBeLessThan(LEASE_MS + 2_000);
    expect((await admin.show(taskId))?.status).toBe("working");
    await other.close();
  }, 30_000);
});
