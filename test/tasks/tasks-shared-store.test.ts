import { afterAll, afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createRuntime, elicit, type Runtime, type Store, StoreError, step, tool } from "mcp-yield";
import { sharedStores } from "../support/stores.js";
import { testKey } from "../support/keys.js";
import { taskTextOf } from "../support/results.js";
import { quickTask } from "../support/quick-task.js";

// Tasks shared by several instances through a real Redis and a real PostgreSQL: any instance
// answers any tasks/* request, transitions are atomic, and a task whose instance dies is taken over.

const keys = [testKey("r", 11)];
const TASKS = { extensions: { "io.modelcontextprotocol/tasks": {} } };
const info = { clientCapabilities: { elicitation: {}, ...TASKS } };
const kinds = sharedStores("tasks");
const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});
afterAll(async () => {
  for (const kind of kinds) await kind.drop();
});

async function settled(runtime: Runtime, taskId: string, want: (s: string) => boolean = (s) => ["completed", "failed", "cancelled"].includes(s)): Promise<Record<string, unknown>> {
  for (let i = 0; i < 300; i++) {
    const t = (await runtime.getTask({ taskId }, info)) as unknown as Record<string, unknown>;
    if (want(String(t.status))) return t;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`task ${taskId} did not settle`);
}

describe.each(kinds)("tasks across instances on $name", (kind) => {
  /** An instance: a runtime on its own connection to the shared store. */
  async function instance(options: { store?: Store; tasks?: Parameters<typeof createRuntime>[0]["tasks"] } = {}): Promise<Runtime> {
    const store = options.store ?? (await kind.make());
    const runtime = createRuntime({ state: { keys }, store, onError: () => {}, tasks: { leaseMs: 600, sweepMs: 100, ...options.tasks } });
    open.push(store, runtime);
    return runtime;
  }

  it("created on one instance, read and answered on others, completed once", async () => {
    const runs = { before: 0, after: 0 };
    const ask = tool({
      name: "ask",
      description: "",
      input: z.object({}),
      task: "required",
      *run() {
        yield* step("before", () => ++runs.before);
        const a = yield* elicit("go?", z.object({ go: z.boolean() }), { key: "go" });
        const n = yield* step("after", () => ++runs.after);
        return `${a.action} ${n}`;
      },
    });
    const [a, b, c] = [await instance(), await instance(), await instance()];
    for (const r of [a, b, c]) r.define([ask]);
    const { taskId } = (await a.callTool(ask, { name: "ask", arguments: {} }, info)) as { taskId: string };
    expect((await b.getTask({ taskId }, info)).taskId).toBe(taskId); // at once, on another instance
    await settled(c, taskId, (s) => s === "input_required");
    await b.updateTask({ taskId, inputResponses: { go: { action: "accept", content: { go: true } } } }, info);
    const done = await settled(c, taskId);
    expect(taskTextOf(done)).toBe("accept 1");
    expect(runs).toEqual({ before: 1, after: 1 });
  });

  it("two instances receiving the same tasks/update at once never both resume the task", async () => {
    let resumed = 0;
    const once = tool({
      name: "once",
      description: "",
      input: z.object({}),
      task: "required",
      *run() {
        yield* elicit("go?", z.object({ go: z.boolean() }), { key: "go" });
        yield* step("resume", () => ++resumed);
        return "done";
      },
    });
    const runtimes = [await instance(), await instance(), await instance(), await instance()];
    for (const r of runtimes) r.define([once]);
    for (let trial = 0; trial < 10; trial++) {
      const { taskId } = (await runtimes[0]!.callTool(once, { name: "once", arguments: {} }, info)) as { taskId: string };
      await settled(runtimes[0]!, taskId, (s) => s === "input_required");
      const answer = { taskId, inputResponses: { go: { action: "accept", content: { go: true } } } };
      await Promise.all(runtimes.map((r) => r.updateTask(answer, info)));
      expect((await settled(runtimes[1]!, taskId)).status).toBe("completed");
    }
    for (const r of runtimes) await r.idle();
    expect(resumed).toBe(10);
  });

  it("an instance that dies mid-step: another takes over within the lease; recorded steps do not run again, the step in flight runs again with the same idempotency key", async () => {
    const ran: Array<[string, string]> = [];
    let hang = true;
    const job = tool({
      name: "job",
      description: "",
      input: z.object({}),
      task: "required",
      async *run(_i, ctx) {
        const first = yield* step("first", () => (ran.push(["first", ctx.idempotencyKey("pay")]), "1"));
        const second = yield* step("second", async () => {
          ran.push(["second", ctx.idempotencyKey("pay")]);
          if (hang) await new Promise(() => {}); // the instance dies in here
          return "2";
        });
        return `${first}${second}`;
      },
    });
    // The dying instance: once killed, its store never answers again (no lease renewal, no writes).
    const real = await kind.make();
    let dead = false;
    const dying: Store = new Proxy(real, {
      get: (t, p) =>
        typeof t[p as keyof Store] === "function" ? (...args: unknown[]) => (dead ? new Promise(() => {}) : (t[p as keyof Store] as (...a: unknown[]) => unknown)(...args)) : t[p as keyof Store],
    });
    const a = await instance({ store: dying });
    const b = await instance();
    b.define([job]);
    const { taskId } = (await a.callTool(job, { name: "job", arguments: {} }, info)) as { taskId: string };
    for (let i = 0; i < 100 && !ran.some(([s]) => s === "second"); i++) await new Promise((r) => setTimeout(r, 10));
    dead = true;
    hang = false;
    const killed = Date.now();
    const done = await settled(b, taskId);
    expect(taskTextOf(done)).toBe("12");
    expect(Date.now() - killed).toBeLessThan(600 + 100 + 1000); // lease + sweep + slack
    expect(ran.map(([s]) => s)).toEqual(["first", "second", "second"]);
    expect(new Set(ran.map(([, k]) => k)).size).toBe(1);
    dead = false; // let the test clean up its connections
  });

  it("tasks/cancel on another instance stops a running task within the heartbeat", async () => {
    const job = tool({
      name: "long",
      description: "",
      input: z.object({}),
      task: "required",
      async *run() {
        yield* step("wait", (signal) => new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason))));
        return "never";
      },
    });
    const [a, b] = [await instance(), await instance()];
    const { taskId } = (await a.callTool(job, { name: "long", arguments: {} }, info)) as { taskId: string };
    const started = Date.now();
    await b.cancelTask({ taskId }, info);
    expect((await settled(b, taskId)).status).toBe("cancelled");
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("records expire with the task's time to live", async () => {
    const quick = quickTask;
    const a = await instance({ tasks: { ttlMs: 400 } });
    const { taskId } = (await a.callTool(quick, { name: "quick", arguments: {} }, info)) as { taskId: string };
    expect((await settled(a, taskId)).status).toBe("completed");
    // The store expires it on its own clock: wait for that (bounded) rather than assume a sleep is enough.
    let gone: unknown;
    for (let i = 0; i < 200 && gone === undefined; i++) {
      gone = await a.getTask({ taskId }, info).then(
        () => undefined,
        (e: unknown) => e,
      );
      if (gone === undefined) await new Promise((r) => setTimeout(r, 25));
    }
    expect(gone).toMatchObject({ code: -32602, data: { reason: "unknown_task" } });
  });

  it("the store unreachable: task requests get a clear -32603 store_unavailable within the time limit", async () => {
    const store = await kind.make({ timeoutMs: 200 });
    const frozen: Store = { ...store, get: () => new Promise(() => {}), add: () => new Promise(() => {}) };
    const runtime = createRuntime({ state: { keys }, store: timeoutStore(frozen, 200), onError: () => {} });
    open.push(store, runtime);
    const t = tool({
      name: "t",
      description: "",
      input: z.object({}),
      task: "required",
      *run() {
        return "x";
      },
    });
    const started = Date.now();
    await expect(runtime.callTool(t, { name: "t", arguments: {} }, info)).rejects.toMatchObject({ code: -32603, data: { reason: "store_unavailable" } });
    await expect(runtime.getTask({ taskId: "x" }, info)).rejects.toMatchObject({ code: -32603, data: { reason: "store_unavailable" } });
    expect(Date.now() - started).toBeLessThan(1500);
  });
});

/** A store whose operations fail with store_unavailable after `ms` (what the Redis store does itself). */
function timeoutStore(store: Store, ms: number): Store {
  return new Proxy(store, {
    get: (t, p) => {
      const v = t[p as keyof Store];
      if (typeof v !== "function") return v;
      return (...args: unknown[]) =>
        Promise.race([(v as (...a: unknown[]) => Promise<unknown>).apply(t, args), new Promise((_, reject) => setTimeout(() => reject(new StoreError("store_unavailable", "timed out")), ms))]);
    },
  });
}
