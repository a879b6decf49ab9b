import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createRuntime, elicit, type Runtime, sleep, tool } from "mcp-yield";
import { createRedisStore } from "mcp-yield/redis";
import { dropPrefix, REDIS_URL, redisAvailable, testPrefix } from "../support/redis.js";
import { createFetchSender, type Send } from "mcp-yield/client";
import { register } from "mcp-yield/server";
import { planTrip } from "../../examples/tools/plan-trip.js";
import { testKey } from "../support/keys.js";

// Issue 9.3: a suspended call retains nothing of its requests, and costs a measured amount.

setFlagsFromString("--expose-gc");
// Bytecode of functions not run for a few collections is flushed: code that only the warm-up
// ran would be freed between the two heap readings and show as a negative cost.
setFlagsFromString("--no-flush-bytecode");
const gc = runInNewContext("gc") as () => void;
const keys = [testKey("m", 4)];

async function settle(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
  return process.memoryUsage().heapUsed;
}

const answers: Record<string, Record<string, string>> = { name: { name: "Ada" }, destination: { destination: "Kyoto" } };

/**
 * `calls` plan_trip calls in turn, one round at a time, up to their third ask: every call's
 * first round, then every call's second, then every call's third. Each generator then waits
 * exactly one round of every other call before its next round, so the idle bound the instance
 * learns (counted in parks) holds all of them. Returns the states the third ask came with.
 */
async function inTurnToThirdAsk(send: Send, calls: number): Promise<string[]> {
  type Round = { requestState?: string; inputRequests?: Record<string, unknown> };
  const rounds: Round[] = [];
  for (let i = 0; i < calls; i++) rounds.push((await send("tools/call", { name: "plan_trip", arguments: {} })) as Round);
  for (let round = 2; round <= 3; round++) {
    for (let i = 0; i < calls; i++) {
      const { requestState, inputRequests } = rounds[i]!;
      const key = Object.keys(inputRequests ?? {})[0]!;
      rounds[i] = (await send("tools/call", { name: "plan_trip", arguments: {}, requestState, inputResponses: { [key]: { action: "accept", content: answers[key] } } })) as Round;
    }
  }
  return rounds.map(({ requestState, inputRequests }) => {
    if (requestState === undefined || inputRequests?.confirm === undefined) throw new Error(`not at the third ask: ${JSON.stringify(inputRequests)}`);
    return requestState;
  });
}

/** An SDK server per request, as `createMcpHandler` serves, with 100 SDK tools beside ours. */
function serve(runtime: Runtime, servers: Array<WeakRef<McpServer>>) {
  const handler = createMcpHandler(() => {
    const server = new McpServer({ name: "memory", version: "1.0.0" });
    for (let i = 0; i < 100; i++) {
      server.registerTool(`sdk_tool_${i}`, { description: `SDK tool ${i}`, inputSchema: z.object({ a: z.string(), b: z.number().optional() }) }, async () => ({ content: [] }));
    }
    register(server, [planTrip], { runtime });
    servers.push(new WeakRef(server));
    return server;
  });
  return createFetchSender("http://in-process/mcp", { capabilities: { elicitation: {} }, fetch: (url, init) => handler.fetch(new Request(url, init)) });
}

describe("suspended calls", () => {
  it("retain no request, no SDK server, and a bounded, measured heap per held call (100 SDK tools registered)", async () => {
    const servers: Array<WeakRef<McpServer>> = [];
    let resumed = 0;
    const runtime = createRuntime({ state: { keys }, onError: () => {}, onRound: (t) => void (t.path === "resumed" && resumed++) });
    const live = serve(runtime, servers);
    const calls = 400;
    const answerConfirm = (requestState: string) =>
      live("tools/call", { name: "plan_trip", arguments: {}, requestState, inputResponses: { confirm: { action: "accept", content: { confirm: true } } } });
    // A first wave exactly like the measured one, suspended at the third ask and then answered:
    // modules, JIT and pools warm, every path the measured wave takes run before the baseline.
    // The rounds go in turn, so the measured wave's generators are all held: a warm-up of whole
    // calls with their rounds interleaved as they came left 257–453 of 400 held, and the states
    // of the rest had to be estimated out of the heap.
    const first = await inTurnToThirdAsk(live, calls);
    for (const requestState of first) await answerConfirm(requestState);
    const suspended: string[] = [];
    const before = await settle();
    suspended.push(...(await inTurnToThirdAsk(live, calls)));
    const after = await settle();
    // Every per-request McpServer (and with it the request's signal and transport) was collected.
    expect(servers.length).toBeGreaterThanOrEqual(3 * 2 * calls);
    expect(servers.filter((s) => s.deref() !== undefined)).toHaveLength(0);
    // Held: a later round resumes the generator.
    resumed = 0;
    for (const requestState of suspended) await answerConfirm(requestState);
    const held = resumed;
    // The states this test keeps are copies the client parsed, not the held entries' own.
    const kept = suspended.reduce((n, s) => n + s.length + 32, 0);
    const perHeld = (after - before - kept) / held;
    console.log(`heap per held call at its third ask: ${(perHeld / 1024).toFixed(1)} KiB (${held} of ${calls} held)`);
    expect(suspended).toHaveLength(calls);
    expect(held).toBe(calls);
    expect(perHeld).toBeLessThan(8 * 1024);
    expect(perHeld).toBeGreaterThan(0);
  }, 120_000);
});

describe.skipIf(!redisAvailable)("sleeping tasks", () => {
  it("cost the instance nothing while they sleep: no timer, no run, no heap per task (the store holds them)", async () => {
    const prefix = testPrefix("memory-sleep");
    const store = await createRedisStore({ url: REDIS_URL, prefix });
    const runtime = createRuntime({ state: { keys }, store, onError: () => {}, tasks: { sweepMs: 1000, maxPerPrincipal: 10_000 } });
    const nap = tool({
      name: "nap",
      description: "",
      input: z.object({ n: z.number() }),
      task: "required",
      async *run({ n }) {
        yield* sleep(30 * 60_000);
        return `woke ${n}`;
      },
    });
    runtime.define([nap]); // the instance's one sweeper starts here
    const info = { clientCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } };
    const startAll = async (from: number, count: number) => {
      // The same arguments every time: the runtime's bounded caches (argument digests, short
      // parsed texts) then stay as they are, and only what a task itself leaves behind shows.
      for (let i = from; i < from + count; i += 25) await Promise.all(Array.from({ length: 25 }, () => runtime.callTool(nap, { name: "nap", arguments: { n: 1 } }, info)));
      await runtime.idle();
    };
    try {
      await startAll(0, 200); // warm up: modules, JIT, pools, the redis client's buffers
      const timers = process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
      // Three batches of sleepers: what stays per task shows as growth from batch to batch.
      const tasks = 500;
      const heaps = [await settle()];
      for (let batch = 0; batch < 3; batch++) {
        await startAll(200 + batch * tasks, tasks);
        heaps.push(await settle());
      }
      const perTask = heaps.slice(1).map((h, i) => (h - heaps[i]!) / tasks);
      const moreTimers = process.getActiveResourcesInfo().filter((r) => r === "Timeout").length - timers;
      console.log(`${3 * tasks} tasks asleep: ${moreTimers} more timers; heap per task by batch: ${perTask.map((b) => `${(b / 1024).toFixed(2)} KiB`).join(", ")}`);
      // A timer per sleeping task would be 1,500 more; one or two come and go (a store
      // operation's time limit, the store clock's measurement).
      expect(moreTimers).toBeLessThanOrEqual(2);
      // Nothing per sleeping task stays on the instance: a retained task (its record, a parked
      // generator and its context) is kilobytes; the average over 1,500 stays under one.
      expect((heaps[3]! - heaps[0]!) / (3 * tasks)).toBeLessThan(1024);
    } finally {
      await runtime.close();
      await store.close();
      await dropPrefix(prefix);
    }
  }, 120_000);
});

describe("a greedy client", () => {
  // Issue 54, point 5: the quickstart's shape — a question quoting the argument — with 1 MiB
  // arguments. Neither the ask caches nor the held generators may keep what one client sends.
  const quoting = tool({
    name: "quote_back",
    description: "",
    input: z.object({ text: z.string() }),
    async *run({ text }) {
      const ok = yield* elicit(`Publish "${text}"?`, z.object({ ok: z.boolean() }));
      return ok.action;
    },
  });
  const huge = (i: number) => `${i}:${"x".repeat(1024 * 1024 - 64)}`;

  it.each([
    ["no generator kept (liveCalls: 0)", 0],
    ["generators kept (the default bounds, the idle bound raised by the client)", undefined],
  ] as const)(
    "300 first rounds with 1 MiB arguments keep < 64 MiB of heap: %s",
    async (_what, liveCalls) => {
      const runtime = createRuntime({ state: { keys, maxTokenBytes: 4 * 1024 * 1024 }, ...(liveCalls !== undefined ? { liveCalls } : {}), onError: () => {} });
      const caps = { clientCapabilities: { elicitation: {} } };
      if (liveCalls === undefined) {
        // First the client raises the idle bound itself: 100 calls whose answers come back long
        // after their generators went as idle (one call in eight is watched for that). Without
        // this the initial bound (8 parks) alone would drop the held generators below.
        const asked = [];
        for (let i = 0; i < 100; i++) asked.push(await runtime.callTool(quoting, { name: "quote_back", arguments: { text: `small ${i}` } }, caps));
        for (const [i, r] of asked.entries()) {
          const { requestState, inputRequests } = r as { requestState: string; inputRequests: Record<string, unknown> };
          const [askKey] = Object.keys(inputRequests);
          const params = { name: "quote_back", arguments: { text: `small ${i}` }, requestState, inputResponses: { [askKey!]: { action: "accept", content: { ok: true } } } };
          expect(await runtime.callTool(quoting, params, caps)).toMatchObject({ content: [{ text: "accept" }] });
        }
      }
      const before = await settle();
      for (let i = 0; i < 300; i++) {
        const r = await runtime.callTool(quoting, { name: "quote_back", arguments: { text: huge(i) } }, caps);
        expect(r).toMatchObject({ resultType: "input_required" });
      }
      const grown = (await settle()) - before;
      expect(grown).toBeLessThan(64 * 1024 * 1024);
    },
    120_000,
  );
});
