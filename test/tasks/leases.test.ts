import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createMemoryStore, createRuntime, elicit, type Runtime, type Store, step, tool } from "mcp-yield";
import { createRedisStore } from "mcp-yield/redis";
import { closedAfterEach, killable } from "../support/instances.js";
import { REDIS_URL, redisAvailable, testPrefix } from "../support/redis.js";
import { testKey } from "../support/keys.js";

// Who runs a task is decided on one clock every instance shares (the store's), and a run that
// lost its lease never starts another step: two machines whose clocks disagree by an hour
// neither steal a live task nor leave a dead one, and an owner that stalled past its lease
// stops before its next step instead of running it beside its successor.

const keys = [testKey("l", 9)];
const info = { clientCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } };
const HOUR = 60 * 60 * 1000;
const prefix = testPrefix("leases");
const open = closedAfterEach(prefix);

function instance(store: Store, clock: () => number, leaseMs: number): Runtime {
  const runtime = createRuntime({ state: { keys }, store, clock, onError: () => {}, tasks: { leaseMs, sweepMs: 50 } });
  open.push(runtime);
  return runtime;
}

/** `what()` until it gives a value, `tries` times 10 ms apart; on giving up, says what `seen()` last was. */
async function until<T>(what: () => Promise<T | undefined>, tries = 400, seen: () => unknown = () => undefined): Promise<T> {
  const started = Date.now();
  for (let i = 0; i < tries; i++) {
    const got = await what();
    if (got !== undefined) return got;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`the condition was not reached in ${tries} tries (${Date.now() - started} ms); last seen: ${JSON.stringify(seen())}`);
}

const statusOf = async (r: Runtime, taskId: string) => (await r.getTask({ taskId }, info)) as unknown as { status: string; result?: { content: Array<{ text: string }> } };

describe.skipIf(!redisAvailable)("leases judged on the store's clock (Redis TIME)", () => {
  /** A store on its own connection; `dead = true` makes it stop answering (a process gone). */
  async function redis() {
    const real = await createRedisStore({ url: REDIS_URL, prefix });
    open.push(real);
    return killable(real);
  }

  it("an owner whose clock is an hour behind keeps its task while it lives: a successor an hour ahead does not take it", async () => {
    const runs: string[] = [];
    const job = tool({
      name: "slow",
      description: "",
      input: z.object({}),
      task: "required",
      async *run(_i, ctx) {
        // Three leases long, the owner alive and renewing throughout.
        yield* step("work", async () => {
          runs.push(ctx.idempotencyKey("work"));
          await new Promise((r) => setTimeout(r, 900));
          return "done";
        });
        return "ok";
      },
    });
    const behind = instance((await redis()).store, () => Date.now() - HOUR, 300);
    const ahead = instance((await redis()).store, () => Date.now() + HOUR, 300);
    ahead.define([job]);
    const { taskId } = (await behind.callTool(job, { name: "slow", arguments: {} }, info)) as { taskId: string };
    // The successor looks at the task throughout (tasks/get also takes over an expired lease).
    const done = await until(async () => {
      const t = await statusOf(ahead, taskId);
      return t.status === "completed" ? t : undefined;
    });
    expect(done.result!.content[0]!.text).toBe("ok");
    await behind.idle();
    await ahead.idle();
    expect(runs).toHaveLength(1);
  });

  it("an owner whose clock is an hour ahead dies: a successor an hour behind takes the task over within the lease", async () => {
    const runs: string[] = [];
    let hang = true;
    const job = tool({
      name: "dies",
      description: "",
      input: z.object({}),
      task: "required",
      async *run(_i, ctx) {
        yield* step("work", async () => {
          runs.push(ctx.idempotencyKey("work"));
          if (hang) await new Promise(() => {});
          return "done";
        });
        return "ok";
      },
    });
    const first = await redis();
    const ahead = instance(first.store, () => Date.now() + HOUR, 300);
    const behind = instance((await redis()).store, () => Date.now() - HOUR, 300);
    behind.define([job]);
    const { taskId } = (await ahead.callTool(job, { name: "dies", arguments: {} }, info)) as { taskId: string };
    await until(async () => (runs.length > 0 ? true : undefined));
    first.kill();
    hang = false;
    const killed = Date.now();
    let last: unknown;
    const done = await until(
      async () => {
        const t = await statusOf(behind, taskId);
        last = t;
        return t.status === "completed" ? t : undefined;
      },
      600,
      () => ({ task: last, stepRuns: runs.length }),
    );
    expect(Date.now() - killed).toBeLessThan(300 + 50 + 1500); // lease + sweep + slack, not an hour
    expect(done.result!.content[0]!.text).toBe("ok");
    expect(runs).toHaveLength(2); // the step in flight at the death runs again…
    expect(new Set(runs).size).toBe(1); // …under the same key
  });

  it("a round's claim (single use) written by a machine an hour behind is not taken for a dead one by a machine an hour ahead", async () => {
    const runs: string[] = [];
    const pay = tool({
      name: "pay",
      description: "",
      input: z.object({}),
      async *run(_i, ctx) {
        yield* elicit("Pay?", z.object({ ok: z.boolean() }), { key: "ok" });
        yield* step("charge", async () => {
          runs.push(ctx.idempotencyKey("charge"));
          await new Promise((r) => setTimeout(r, 400));
        });
        return "paid";
      },
    });
    const caps = { clientCapabilities: { elicitation: {} } };
    const behind = createRuntime({ state: { keys }, store: (await redis()).store, clock: () => Date.now() - HOUR, onError: () => {} });
    const ahead = createRuntime({ state: { keys }, store: (await redis()).store, clock: () => Date.now() + HOUR, onError: () => {} });
    open.push(behind, ahead);
    const first = (await behind.callTool(pay, { name: "pay", arguments: {} }, caps)) as { requestState: string };
    const answer = { name: "pay", arguments: {}, requestState: first.requestState, inputResponses: { ok: { action: "accept", content: { ok: true } } } };
    const one = behind.callTool(pay, answer, caps);
    await until(async () => (runs.length > 0 ? true : undefined));
    // The client's retry of the same request reaches the other machine while the first runs.
    const repeat = await ahead.callTool(pay, answer, caps);
    expect(await one).toEqual(repeat);
    expect(runs).toHaveLength(1);
  });
});

describe("a run that stalled past its lease", () => {
  it("does not start its next step once a successor holds the task; the successor runs it, once", async () => {
    // One clock both instances read, moved by the test: the owner's code stalls "two leases"
    // between two steps (as a long synchronous computation would), and its heartbeat cannot
    // notice in time (a long lease: its first beat is 500 ms away).
    let skew = 0;
    const clock = () => Date.now() + skew;
    const shared = createMemoryStore({ clock });
    const leaseMs = 60_000;
    const a = instance(shared, clock, leaseMs);
    const b = instance(shared, clock, leaseMs);
    const ran: Array<[string, "a" | "b"]> = [];
    let stalled = false;
    let taskId = "";
    const make = (self: "a" | "b") =>
      tool({
        name: "stall",
        description: "",
        input: z.object({}),
        task: "required",
        async *run() {
          yield* step("first", () => (ran.push(["first", self]), 1));
          if (!stalled) {
            stalled = true;
            await until(async () => (taskId !== "" ? true : undefined));
            const runOf = async () => (JSON.parse((await shared.get(`task:${taskId}`))!) as { lease?: { run?: string } }).lease?.run;
            const mine = await runOf();
            skew += 2 * leaseMs;
            // The successor finds the lease run out and takes the task over meanwhile.
            await b.getTask({ taskId }, info);
            await until(async () => ((await runOf()) !== mine ? true : undefined));
          }
          yield* step("second", () => (ran.push(["second", self]), 2));
          return "ok";
        },
      });
    a.define([make("a")]);
    b.define([make("b")]);
    const started = (await a.callTool(make("a"), { name: "stall", arguments: {} }, info)) as { taskId: string };
    taskId = started.taskId;
    const done = await until(async () => {
      const t = await statusOf(b, taskId);
      return t.status === "completed" ? t : undefined;
    });
    await a.idle();
    await b.idle();
    expect(done.result!.content[0]!.text).toBe("ok");
    // "first" was recorded by the owner before it stalled: the successor replays it.
    expect(ran).toEqual([
      ["first", "a"],
      ["second", "b"],
    ]);
  });
});
