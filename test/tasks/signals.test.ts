import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createMemoryStore, createRuntime, createSignalHandler, progress, type Runtime, step, type Store, StoreError, tool, waitForSignal } from "mcp-yield";
import { createRedisStore } from "mcp-yield/redis";
import { closedAfterEach, killable, until } from "../support/instances.js";
import { REDIS_URL, redisAvailable, testPrefix } from "../support/redis.js";
import { manualClock } from "../support/time.js";
import { testKey } from "../support/keys.js";
import { approval } from "../support/signal-tasks.js";

// Signals into tasks: a task waits (in the store, held by nobody) until a value comes from
// outside — runtime.signal(token, value) or a POST to the wait's URL — validated by the wait's
// schema; a timeout ends the wait with a typed value; tokens are signed, single use, and expire
// with their task; any instance sharing the store takes the signal.

const keys = [testKey("s", 29)];
const BASE = "https://example.test/signals/";
const info = { clientCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } };
const prefix = testPrefix("signals");
const open = closedAfterEach(prefix);

function instance(store: Store, options: { clock?: () => number; keyRing?: typeof keys } = {}) {
  const errors: unknown[] = [];
  const clock = options.clock;
  const runtime = createRuntime({
    state: { keys: options.keyRing ?? keys, ...(clock ? { clock } : {}) },
    store,
    ...(clock ? { clock } : {}),
    signals: { baseUrl: BASE },
    onError: (e) => errors.push(e),
    tasks: { leaseMs: 400, sweepMs: 20 },
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
/** Start the approval task and wait until it is parked on the signal; its URL and token. */
async function waiting(runtime: Runtime, store: Store, args: Record<string, unknown> = {}) {
  const { taskId } = (await runtime.callTool(approval, { name: "approve", arguments: args }, info)) as { taskId: string };
  await until(async () => (JSON.parse((await store.get(`task:${taskId}`)) ?? "{}").awaits !== undefined && (await get(runtime, taskId)).statusMessage?.startsWith("Approve at") ? true : undefined));
  await runtime.idle();
  const url = (await get(runtime, taskId)).statusMessage!.slice("Approve at ".length);
  return { taskId, url, token: url.slice(BASE.length) };
}
const reason = (e: unknown) => (e as { data?: { reason?: string } }).data?.reason;

describe("signals", () => {
  it("a value sent with runtime.signal completes the wait; the token is then used up", async () => {
    const store = createMemoryStore();
    const { runtime } = instance(store);
    runtime.define([approval]);
    const { taskId, url, token } = await waiting(runtime, store);
    expect(url.startsWith(BASE)).toBe(true);
    expect((await get(runtime, taskId)).status).toBe("working");
    expect(await runtime.signal(token, { approved: true })).toEqual({ status: "delivered" });
    expect((await settled(runtime, taskId)).result!.content[0]!.text).toBe("approved");
    expect(reason(await runtime.signal(token, { approved: false }).catch((e: unknown) => e))).toBe("signal_used"); // taken (the task has ended since)
  });

  it("a delivery whose write landed but whose answer was lost: sent again, it is used (not 'send it again'), and the task takes the value once", async () => {
    const inner = createMemoryStore();
    let loseNext = false;
    // The next swap of a task record lands, and then fails as a timed-out command does.
    const lost = (key: string, landed: boolean) => {
      if (loseNext && key.startsWith("task:")) {
        loseNext = false;
        throw new StoreError("store_unavailable", "the answer to this write was lost");
      }
      return landed;
    };
    const store: Store = {
      ...inner,
      swap: async (key, expected, value, ttlMs) => lost(key, await inner.swap(key, expected, value, ttlMs)),
      swapIndexed: async (key, expected, value, ttlMs, notice, changes) => lost(key, await inner.swapIndexed!(key, expected, value, ttlMs, notice, changes)),
    };
    const { runtime } = instance(store);
    runtime.define([approval]);
    const { taskId, token } = await waiting(runtime, store);
    loseNext = true;
    expect(reason(await runtime.signal(token, { approved: true }).catch((e: unknown) => e))).toBe("store_unavailable");
    expect(JSON.parse((await inner.get(`task:${taskId}`))!).arrived).toMatchObject({ name: "approval", value: { approved: true } });
    expect(reason(await runtime.signal(token, { approved: false }).catch((e: unknown) => e))).toBe("signal_used");
    // The run that wrote the value never started here: its lease lapses and the sweeper runs it.
    expect((await settled(runtime, taskId)).result!.content[0]!.text).toBe("approved");
  });

  it("a value the schema refuses is refused, and the task waits on; then a valid one is taken", async () => {
    const store = createMemoryStore();
    const { runtime } = instance(store);
    runtime.define([approval]);
    const { taskId, token } = await waiting(runtime, store);
    const refused = await runtime.signal(token, { approved: "yes" }).catch((e: unknown) => e);
    expect(reason(refused)).toBe("signal_invalid_value");
    expect(String((refused as Error).message)).toMatch(/approved/);
    await runtime.idle();
    expect((await get(runtime, taskId)).status).toBe("working");
    await runtime.signal(token, { approved: false });
    expect((await settled(runtime, taskId)).result!.content[0]!.text).toBe("rejected");
  });

  it("forged, altered, other-ring and reused tokens are refused; a wait not reached yet says so", async () => {
    const store = createMemoryStore();
    const { runtime } = instance(store);
    runtime.define([approval]);
    const { token } = await waiting(runtime, store);
    const flip = token.slice(0, -3) + (token.at(-3) === "A" ? "B" : "A") + token.slice(-2);
    for (const bad of [flip, "x", "", `${token}.x`, token.replace(/^[^.]+/, "zz")]) expect(reason(await runtime.signal(bad, { approved: true }).catch((e: unknown) => e))).toBe("signal_invalid_token");
    const other = instance(createMemoryStore(), { keyRing: [testKey("s", 30)] });
    expect(reason(await other.runtime.signal(token, { approved: true }).catch((e: unknown) => e))).toBe("signal_invalid_token");

    // Two waits on one name: each has its own token; the first cannot open the second.
    const twice = tool({
      name: "twice",
      description: "",
      input: z.object({}),
      task: "required",
      async *run(_i, ctx) {
        yield* progress(ctx.signalToken("go"));
        yield* waitForSignal("go", z.number());
        yield* progress(ctx.signalToken("go"));
        const b = yield* waitForSignal("go", z.number());
        return `second ${b.status === "received" ? b.value : "-"}`;
      },
    });
    runtime.define([twice]);
    const { taskId } = (await runtime.callTool(twice, { name: "twice", arguments: {} }, info)) as { taskId: string };
    const first = await until(async () => {
      const t = await get(runtime, taskId);
      return JSON.parse((await store.get(`task:${taskId}`))!).awaits ? t.statusMessage : undefined;
    });
    await runtime.signal(first!, 1);
    const second = await until(async () => {
      const t = await get(runtime, taskId);
      return t.statusMessage !== first && JSON.parse((await store.get(`task:${taskId}`))!).awaits ? t.statusMessage : undefined;
    });
    expect(second).not.toBe(first);
    expect(reason(await runtime.signal(first!, 9).catch((e: unknown) => e))).toBe("signal_used");
    await runtime.signal(second!, 2);
    expect((await settled(runtime, taskId)).result!.content[0]!.text).toBe("second 2");
  });

  it("a signal for a wait the task has not reached yet is kept (accepted) and taken when the task gets there", async () => {
    const store = createMemoryStore();
    const { runtime } = instance(store);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const early = tool({
      name: "early",
      description: "",
      input: z.object({}),
      task: "required",
      async *run(_i, ctx) {
        yield* progress(ctx.signalToken("go"));
        yield* step("slow", () => gate);
        const v = yield* waitForSignal("go", z.string());
        return v.status === "received" ? v.value : "timeout";
      },
    });
    runtime.define([early]);
    const { taskId } = (await runtime.callTool(early, { name: "early", arguments: {} }, info)) as { taskId: string };
    const token = await until(async () => (await get(runtime, taskId)).statusMessage);
    expect(await runtime.signal(token!, "hi")).toEqual({ status: "accepted" });
    // Kept single use: another value for the same wait is told it was used.
    expect(reason(await runtime.signal(token!, "other").catch((e: unknown) => e))).toBe("signal_used");
    release();
    expect((await settled(runtime, taskId)).result!.content[0]!.text).toBe("hi");
    expect(reason(await runtime.signal(token!, "again").catch((e: unknown) => e))).toBe("signal_used");
  });

  it("a timeout ends the wait with { status: 'timeout' } (the sweeper wakes the task at its deadline); its token is then used up", async () => {
    const time = manualClock(1_900_000_000_000);
    const clock = time.now;
    const store = createMemoryStore({ clock });
    const { runtime } = instance(store, { clock });
    runtime.define([approval]);
    const { taskId, token } = await waiting(runtime, store, { timeoutMs: 60_000 });
    time.advance(59_000);
    await new Promise((r) => setTimeout(r, 80));
    expect((await get(runtime, taskId)).status).toBe("working");
    time.advance(1_000);
    expect((await settled(runtime, taskId)).result!.content[0]!.text).toBe("timed out");
    expect(reason(await runtime.signal(token, { approved: true }).catch((e: unknown) => e))).toBe("signal_used");
  });

  it("in a foreground call waitForSignal() is an author error, and bad names are refused at the call", async () => {
    const { runtime, errors } = instance(createMemoryStore());
    const fg = tool({
      name: "fgw",
      description: "",
      input: z.object({}),
      async *run() {
        yield* waitForSignal("x", z.string());
        return "never";
      },
    });
    expect(await runtime.callTool(fg, { name: "fgw", arguments: {} }, { clientCapabilities: {} })).toMatchObject({ isError: true });
    expect(String((errors[0] as Error).message)).toMatch(/waitForSignal\(\) waits only inside a task/);
    expect(() => waitForSignal("bad name", z.string()).next()).toThrow(/signal name/);
    expect(() => waitForSignal("ok", z.string(), { timeoutMs: -1 }).next()).toThrow(/timeoutMs/);
  });
});

describe("the webhook route (createSignalHandler)", () => {
  it("answers every case with a precise status: 200, 400, 404, 405, 409, 410, 413", async () => {
    const store = createMemoryStore();
    const { runtime } = instance(store);
    runtime.define([approval]);
    const handler = createSignalHandler(runtime, { maxBodyBytes: 1024 });
    const post = (url: string, body: string, method = "POST") => handler(new Request(url, method === "POST" ? { method, body, headers: { "content-type": "application/json" } } : { method }));
    const { taskId, url } = await waiting(runtime, store);
    expect((await post(url, "", "GET")).status).toBe(405);
    expect((await post(url, "{not json")).status).toBe(400);
    expect((await post(url, JSON.stringify({ approved: 1 }))).status).toBe(400);
    expect((await post(url, JSON.stringify({ pad: "x".repeat(2000) }))).status).toBe(413);
    expect((await post(`${BASE}not-a-token`, "{}")).status).toBe(404);
    const ok = await post(url, JSON.stringify({ approved: true }));
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ status: "delivered" });
    await settled(runtime, taskId);
    expect((await post(url, JSON.stringify({ approved: true }))).status).toBe(409); // used
    const cancelled = await waiting(runtime, store);
    await runtime.cancelTask({ taskId: cancelled.taskId }, info);
    expect((await post(cancelled.url, JSON.stringify({ approved: true }))).status).toBe(410); // ended before its wait was passed
  });
});

describe("the webhook route's limit per URL", () => {
  it("whoever holds a signal URL gets perToken POSTs a minute to it, then 429 with Retry-After until the minute is over", async () => {
    const store = createMemoryStore();
    const { runtime } = instance(store);
    runtime.define([approval]);
    let now = 1_000_000;
    const handler = createSignalHandler(runtime, { perToken: 3, clock: () => now });
    const post = (url: string, body: unknown) => handler(new Request(url, { method: "POST", body: JSON.stringify(body) }));
    const { taskId, url } = await waiting(runtime, store);
    for (let i = 0; i < 3; i++) expect((await post(url, { approved: "no" })).status).toBe(400);
    now += 20_000;
    const limited = await post(url, { approved: true });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("40");
    // Another URL has its own count; the same one goes on after the minute.
    expect((await post(`${BASE}other-token`, {})).status).toBe(404);
    now += 40_000;
    expect((await post(url, { approved: true })).status).toBe(200);
    expect((await settled(runtime, taskId)).result!.content[0]!.text).toBe("approved");
    expect(() => createSignalHandler(runtime, { perToken: 0 })).toThrow(/perToken must be a positive integer/);
  });
});

describe("the webhook route under hostile input (property)", () => {
  it("any token (mutated, truncated, random) and any body gets a 4xx or the one 200; the task takes one value, once", async () => {
    const store = createMemoryStore();
    const { runtime, errors } = instance(store);
    runtime.define([approval]);
    const handler = createSignalHandler(runtime, { maxBodyBytes: 512, perToken: 1_000_000 }); // the limit per URL has its own test;
    const { taskId, token } = await waiting(runtime, store);
    const mutated = fc.tuple(fc.nat({ max: token.length - 1 }), fc.constantFrom(..."AZaz09-_.~%")).map(([at, c]) => token.slice(0, at) + c + token.slice(at + 1));
    const tokens = fc.oneof(
      mutated,
      fc.nat({ max: token.length }).map((n) => token.slice(0, n)),
      fc.string({ maxLength: 80 }),
      fc.constant(`${token}.x`),
    );
    const bodies = fc.oneof(fc.json({ maxDepth: 3 }), fc.string({ maxLength: 600 }), fc.constant(JSON.stringify({ approved: "no" })));
    const statuses = new Set<number>();
    await fc.assert(
      fc.asyncProperty(tokens, bodies, async (t, body) => {
        fc.pre(t !== token); // a mutation that changed nothing is the real token
        const response = await handler(new Request(`${BASE}${encodeURIComponent(t)}`, { method: "POST", body }));
        statuses.add(response.status);
        // Only the real token with a valid body may deliver, and nothing here is one.
        expect([400, 404, 409, 410, 413]).toContain(response.status);
      }),
      { numRuns: 300 },
    );
    expect((await get(runtime, taskId)).status).toBe("working"); // still waiting: nothing got through
    const ok = await handler(new Request(`${BASE}${token}`, { method: "POST", body: JSON.stringify({ approved: true }) }));
    expect(ok.status).toBe(200);
    expect((await settled(runtime, taskId)).result!.content[0]!.text).toBe("approved");
    expect(errors).toEqual([]);
    expect(statuses.has(404)).toBe(true);
  });
});

describe.skipIf(!redisAvailable)("signals across instances on Redis", () => {
  /** Instances A (whose store `a.kill()` silences: a process gone) and B, on their own connections to one Redis, both able to run the approval tool. */
  async function twoInstances() {
    const aStore = await createRedisStore({ url: REDIS_URL, prefix });
    const bStore = await createRedisStore({ url: REDIS_URL, prefix });
    open.push(aStore, bStore);
    const a = killable(aStore);
    const A = instance(a.store);
    const B = instance(bStore);
    A.runtime.define([approval]);
    B.runtime.define([approval]);
    return { a, A, B };
  }

  it("a signal sent to instance B reaches a task started on A, after A died mid-wait", async () => {
    const { a, A, B } = await twoInstances();
    const { taskId, token } = await waiting(A.runtime, a.store);
    a.kill();
    expect(await B.runtime.signal(token, { approved: true })).toEqual({ status: "delivered" });
    expect((await settled(B.runtime, taskId)).result!.content[0]!.text).toBe("approved");
  });

  it("a wait's timeout fires on another instance when the one that parked it is gone; its token is refused after", async () => {
    const { a, A, B } = await twoInstances(); // B's sweeper finds the task due at its deadline
    const { taskId, token } = await waiting(A.runtime, a.store, { timeoutMs: 300 });
    a.kill();
    expect((await settled(B.runtime, taskId)).result!.content[0]!.text).toBe("timed out");
    expect(reason(await B.runtime.signal(token, { approved: true }).catch((e: unknown) => e))).toBe("signal_used");
  });
});
