import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createMemoryStore, createRuntime, createTaskAdmin, elicit, NonRetryableError, progress, type Runtime, sleep, step, type Store, tool, waitForSignal } from "mcp-yield";
import { createRedisStore } from "mcp-yield/redis";
import { closedAfterEach, killable, until } from "../support/instances.js";
import { REDIS_URL, redisAvailable, testPrefix } from "../support/redis.js";
import { manualClock } from "../support/time.js";
import { testKey } from "../support/keys.js";

// Durable task primitives written as plain generator code: sleep (the task waits in the store,
// held by nobody, woken by any instance's sweeper), step retries with durable backoff, and
// progress visible from every instance — on memory and on a real Redis, across a takeover.

const keys = [testKey("z", 23)];
const TASKS = { extensions: { "io.modelcontextprotocol/tasks": {} } };
const info = { clientCapabilities: { elicitation: {}, ...TASKS } };
const prefix = testPrefix("durable");
const open = closedAfterEach(prefix);

interface Made {
  runtime: Runtime;
  errors: unknown[];
}
function instance(store: Store, options: { clock?: () => number; leaseMs?: number } = {}): Made {
  const errors: unknown[] = [];
  const runtime = createRuntime({
    state: { keys, ...(options.clock ? { clock: options.clock } : {}) },
    store,
    ...(options.clock ? { clock: options.clock } : {}),
    onError: (e) => errors.push(e),
    tasks: { leaseMs: options.leaseMs ?? 400, sweepMs: 20, pollIntervalMs: 100 },
  });
  open.push(runtime);
  return { runtime, errors };
}

type Task = { status: string; statusMessage?: string; result?: { content: Array<{ text: string }>; isError?: boolean } };
const get = async (r: Runtime, taskId: string) => (await r.getTask({ taskId }, info)) as unknown as Task;
const settled = (r: Runtime, taskId: string) =>
  until(async () => {
    const t = await get(r, taskId);
    return ["completed", "failed", "cancelled"].includes(t.status) ? t : undefined;
  });
const start = async (r: Runtime, def: Parameters<Runtime["callTool"]>[0], args: Record<string, unknown> = {}) =>
  ((await r.callTool(def, { name: def.name, arguments: args }, info)) as { taskId: string }).taskId;

describe("sleep", () => {
  it("a sleeping task is held by nobody: no run in flight, no generator kept, working on tasks/get; the sweeper wakes it when due", async () => {
    const time = manualClock(1_900_000_000_000);
    const clock = time.now;
    const store = createMemoryStore({ clock });
    const { runtime } = instance(store, { clock });
    const woke: number[] = [];
    const nap = tool({
      name: "nap",
      description: "",
      input: z.object({ ms: z.number() }),
      task: "required",
      async *run({ ms }) {
        yield* sleep(ms);
        woke.push(time.now());
        return "reminded";
      },
    });
    runtime.define([nap]);
    const taskId = await start(runtime, nap, { ms: 1_800_000 });
    await until(async () => (JSON.parse((await store.get(`task:${taskId}`))!).wake !== undefined ? true : undefined));
    await runtime.idle(); // resolves: nothing runs while the task sleeps
    expect((await get(runtime, taskId)).status).toBe("working");
    const record = JSON.parse((await store.get(`task:${taskId}`))!) as { wake: number; lease?: unknown };
    expect(record.wake).toBe(1_900_000_000_000 + 1_800_000);
    expect(record.lease).toBeUndefined();
    time.advance(1_799_000); // not yet due
    await new Promise((r) => setTimeout(r, 100));
    expect(woke).toEqual([]);
    time.advance(1_000); // due: the next sweep wakes it
    const done = await settled(runtime, taskId);
    expect(done.result!.content[0]!.text).toBe("reminded");
    expect(woke).toEqual([1_900_000_000_000 + 1_800_000]);
  });

  it("a sleep past the task's lifetime ends the task as an author failure, saying so (it would expire asleep)", async () => {
    const { runtime, errors } = instance(createMemoryStore());
    const nap = tool({
      name: "toolong",
      description: "",
      input: z.object({}),
      task: "required",
      async *run() {
        yield* sleep(2 * 3_600_000);
        return "never";
      },
    });
    runtime.define([nap]);
    const done = await settled(runtime, await start(runtime, nap));
    expect(done.result!.isError).toBe(true);
    expect(String((errors[0] as Error).message)).toMatch(/passes the task's lifetime/);
  });

  it("sleep(0) and a Date in the past go straight on; a sleep already waited is not waited again on replay", async () => {
    const store = createMemoryStore();
    const { runtime } = instance(store);
    const nap = tool({
      name: "nap0",
      description: "",
      input: z.object({}),
      task: "required",
      async *run() {
        yield* sleep(0);
        yield* sleep(new Date(0));
        const a = yield* step("a", () => 1);
        yield* sleep(50);
        const b = yield* step("b", () => 2);
        return `${a + b}`;
      },
    });
    runtime.define([nap]);
    const done = await settled(runtime, await start(runtime, nap));
    expect(done.result!.content[0]!.text).toBe("3");
  });

  it("in a foreground call sleep() is an author error: an isError result, onError names it", async () => {
    const { runtime, errors } = instance(createMemoryStore());
    const fg = tool({
      name: "fg",
      description: "",
      input: z.object({}),
      async *run() {
        yield* sleep(10);
        return "never";
      },
    });
    const result = (await runtime.callTool(fg, { name: "fg", arguments: {} }, { clientCapabilities: {} })) as { isError?: boolean };
    expect(result.isError).toBe(true);
    expect(String((errors[0] as Error).message)).toContain("sleep() waits only inside a task");
  });

  it("rejects bad durations at the call", () => {
    expect(() => sleep(-1).next()).toThrow(/finite number of ms/);
    expect(() => sleep(Number.NaN).next()).toThrow(/finite number of ms/);
    expect(() => sleep(new Date("nope")).next()).toThrow(/invalid/);
  });

  it("cancelling a sleeping task ends it at once (nobody runs it)", async () => {
    const { runtime } = instance(createMemoryStore());
    const nap = tool({
      name: "napc",
      description: "",
      input: z.object({}),
      task: "required",
      async *run() {
        yield* sleep(1_800_000);
        return "never";
      },
    });
    runtime.define([nap]);
    const taskId = await start(runtime, nap);
    await until(async () => ((await get(runtime, taskId)).status === "working" ? true : undefined));
    await runtime.idle(); // asleep: nothing runs
    await runtime.cancelTask({ taskId }, info);
    expect((await get(runtime, taskId)).status).toBe("cancelled");
  });
});

describe("step retries", () => {
  it("a step that fails twice then succeeds: three attempts, one idempotency key, durable delays between them", async () => {
    const { runtime, errors } = instance(createMemoryStore());
    const attempts: string[] = [];
    const flaky = tool({
      name: "flaky",
      description: "",
      input: z.object({}),
      task: "required",
      async *run(_i, ctx) {
        const body = yield* step(
          "fetch",
          () => {
            attempts.push(ctx.idempotencyKey("fetch"));
            if (attempts.length < 3) throw new Error(`503 on attempt ${attempts.length}`);
            return "body";
          },
          { retry: { attempts: 5, initialMs: 20, factor: 2 } },
        );
        return `${body} after attempts: ${attempts.length}`;
      },
    });
    runtime.define([flaky]);
    const done = await settled(runtime, await start(runtime, flaky));
    expect(done.result!.content[0]!.text).toBe("body after attempts: 3");
    expect(new Set(attempts).size).toBe(1);
    expect(errors).toEqual([]);
  });

  it("NonRetryableError stops at once; exhausted attempts end the call with the last error (isError, onError)", async () => {
    const { runtime, errors } = instance(createMemoryStore());
    let tries = 0;
    const stop = tool({
      name: "stop",
      description: "",
      input: z.object({ fatal: z.boolean() }),
      task: "required",
      // Ended at once, not held for an operator (test/tasks/hold.test.ts holds them).
      onTaskFailure: "fail",
      async *run({ fatal }) {
        yield* step(
          "call",
          () => {
            tries++;
            throw fatal ? new NonRetryableError("card declined") : new Error("timeout");
          },
          { retry: { attempts: 3, initialMs: 5 } },
        );
        return "never";
      },
    });
    runtime.define([stop]);
    const fatal = await settled(runtime, await start(runtime, stop, { fatal: true }));
    expect(fatal.result!.isError).toBe(true);
    expect(tries).toBe(1);
    expect(String((errors.at(-1) as Error).message)).toBe('step("call") failed after 1 attempt: NonRetryableError: card declined');
    tries = 0;
    const exhausted = await settled(runtime, await start(runtime, stop, { fatal: false }));
    expect(exhausted.result!.isError).toBe(true);
    expect(tries).toBe(3);
    expect(String((errors.at(-1) as Error).message)).toBe('step("call") failed after 3 attempts: Error: timeout');
  });

  it("retryIf decides on the real error, once; its answer is recorded", async () => {
    const { runtime } = instance(createMemoryStore());
    let tries = 0;
    const picky = tool({
      name: "picky",
      description: "",
      input: z.object({}),
      task: "required",
      onTaskFailure: "fail",
      async *run() {
        return yield* step(
          "call",
          () => {
            tries++;
            if (tries === 1) throw Object.assign(new Error("retry me"), { status: 503 });
            if (tries === 2) throw Object.assign(new Error("do not"), { status: 400 });
            return "never";
          },
          { retry: { attempts: 5, initialMs: 5, retryIf: (e) => (e as { status?: number }).status === 503 } },
        );
      },
    });
    runtime.define([picky]);
    const done = await settled(runtime, await start(runtime, picky));
    expect(done.result!.isError).toBe(true);
    expect(tries).toBe(2);
  });

  it("rejects a bad retry policy at the call", () => {
    const run = (retry: Record<string, unknown>) => () => step("x", () => 1, { retry: retry as never }).next();
    expect(run({ attempts: 0 })).toThrow(/attempts must be an integer ≥ 1/);
    expect(run({ jitter: 2 })).toThrow(/jitter must be between 0 and 1/);
    expect(run({ factor: 0.5 })).toThrow(/factor must be a number ≥ 1/);
    expect(run({ retryIf: "yes" })).toThrow(/retryIf must be a function/);
  });
});

describe("progress", () => {
  it("sets the task's statusMessage, seen by tasks/get", async () => {
    const { runtime } = instance(createMemoryStore());
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const work = tool({
      name: "work",
      description: "",
      input: z.object({}),
      task: "required",
      async *run() {
        yield* progress("Indexing", { done: 3, total: 10 });
        yield* step("wait", () => gate);
        return "ok";
      },
    });
    runtime.define([work]);
    const taskId = await start(runtime, work);
    const seen = await until(async () => {
      const t = await get(runtime, taskId);
      return t.statusMessage === "Indexing (3/10)" ? t : undefined;
    });
    expect(seen.status).toBe("working");
    release();
    expect((await settled(runtime, taskId)).result!.content[0]!.text).toBe("ok");
  });
});

describe.skipIf(!redisAvailable)("durable primitives across instances on Redis", () => {
  /** An instance on its own connection; `kill()` makes its store stop answering (a dead process). */
  async function redisInstance(leaseMs = 400) {
    const real = await createRedisStore({ url: REDIS_URL, prefix });
    open.push(real);
    const { store, kill } = killable(real);
    return { ...instance(store, { leaseMs }), kill };
  }

  it("a task asleep when its instance dies is woken by another instance's sweeper", async () => {
    const ran: string[] = [];
    const nap = tool({
      name: "nap-r",
      description: "",
      input: z.object({}),
      task: "required",
      async *run(_i, ctx) {
        yield* step("before", () => ran.push(`before ${ctx.idempotencyKey("x")}`));
        yield* sleep(300);
        yield* step("after", () => ran.push("after"));
        return "reminded";
      },
    });
    const a = await redisInstance();
    const b = await redisInstance();
    a.runtime.define([nap]);
    b.runtime.define([nap]); // b never sees a request for this task: its sweeper finds it
    const taskId = await start(a.runtime, nap);
    // Killed once the task is asleep in the store (its step recorded): killed while the step's
    // result is still on its way, "before" would rightly run again on b (the in-flight step).
    const admin = createTaskAdmin({ store: await createRedisStore({ url: REDIS_URL, prefix }).then((s) => (open.push(s), s)) });
    await until(async () => (/^(asleep until|woke at)/.test((await admin.show(taskId))?.state ?? "") ? true : undefined));
    a.kill();
    const done = await settled(b.runtime, taskId);
    expect(done.result!.content[0]!.text).toBe("reminded");
    expect(ran.map((r) => r.split(" ")[0])).toEqual(["before", "after"]);
  });

  it("retries survive a takeover between attempts; progress is seen from every instance", async () => {
    const attempts: string[] = [];
    const flaky = tool({
      name: "flaky-r",
      description: "",
      input: z.object({}),
      task: "required",
      async *run(_i, ctx) {
        yield* progress("fetching");
        const body = yield* step(
          "fetch",
          () => {
            attempts.push(ctx.idempotencyKey("fetch"));
            if (attempts.length < 3) throw new Error("503");
            return "body";
          },
          { retry: { attempts: 4, initialMs: 200, factor: 1 } },
        );
        yield* progress("fetched");
        return `${body} attempts: ${attempts.length}`;
      },
    });
    const a = await redisInstance();
    const b = await redisInstance();
    for (const x of [a, b]) x.runtime.define([flaky]);
    const taskId = await start(a.runtime, flaky);
    await until(async () => ((await get(b.runtime, taskId)).statusMessage === "fetching" ? true : undefined));
    await until(async () => (attempts.length >= 1 ? true : undefined));
    a.kill(); // dies during the first backoff
    const done = await settled(b.runtime, taskId);
    expect(done.result!.content[0]!.text).toBe("body attempts: 3");
    expect(done.statusMessage).toBeUndefined();
    expect(new Set(attempts).size).toBe(1);
  });
});

describe("exact on every path", () => {
  it("a task with an ask, a retried step, a sleep and a signal gives the same result resumed on one instance and replayed on another", async () => {
    const runs = new Map<string, number>();
    const count = (key: string) => runs.set(key, (runs.get(key) ?? 0) + 1);
    const mixed = tool({
      name: "mixed",
      description: "",
      input: z.object({}),
      task: "required",
      async *run(_i, ctx) {
        const id = yield* step("id", () => (count(`${ctx.idempotencyKey("id")}`), "X"));
        const ok = yield* elicit("Go?", z.object({ ok: z.boolean() }), { key: "go" });
        const fetched = yield* step(
          "fetch",
          (_s, attempt) => {
            count(`${ctx.idempotencyKey("fetch")}#${attempt}`);
            if (attempt < 2) throw new Error("503");
            return attempt;
          },
          { retry: { attempts: 3, initialMs: 10 } },
        );
        yield* sleep(20);
        yield* progress(ctx.signalToken("go"));
        const got = yield* waitForSignal("go", z.number());
        return `${id} ${ok.action} ${fetched} ${got.status === "received" ? got.value : "-"}`;
      },
    });
    const store = createMemoryStore();
    const a = instance(store).runtime;
    const b = instance(store).runtime;
    for (const r of [a, b]) r.define([mixed]);
    const answer = { go: { action: "accept", content: { ok: true } } };
    const once = async (updateOn: Runtime) => {
      const taskId = await start(a, mixed);
      await until(async () => ((await get(a, taskId)).status === "input_required" ? true : undefined));
      await updateOn.updateTask({ taskId, inputResponses: answer }, { clientCapabilities: { elicitation: {}, ...TASKS } });
      const token = await until(async () => {
        const t = await get(b, taskId);
        return t.status === "working" && t.statusMessage !== undefined && JSON.parse((await store.get(`task:${taskId}`))!).awaits ? t.statusMessage : undefined;
      });
      await b.signal(token, 7);
      return (await settled(b, taskId)).result!.content[0]!.text;
    };
    const resumed = await once(a); // the parked generator on a goes on
    const replayed = await once(b); // b never held it: it replays the journal
    expect(replayed).toBe(resumed);
    expect(resumed).toBe("X accept 2 7");
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
  });
});
