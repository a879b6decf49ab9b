import { afterAll, afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createMemoryStore, createRuntime, elicit, type Runtime, type Store, step, tool } from "mcp-yield";
import { accept, simulate } from "mcp-yield/testing";
import { sharedStores } from "../support/stores.js";
import { startTcpProxy } from "../support/tcp-proxy.js";
import { manualClock } from "../support/time.js";
import { testKey } from "../support/keys.js";
import { TOLERATED_CLOCK_SKEW_MS } from "../../src/runtime/single-use/skew.js";

// Issue 11: with a store, a requestState is redeemed once; a repeated round is answered from
// the store without running anything; a journal too large for a token is spilled.

const keys = [testKey("s", 12)];
const info = { clientCapabilities: { elicitation: {} } };
const Ok = z.object({ ok: z.boolean() });
const kinds = sharedStores("single-use");
const cleanup: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c.close();
});
afterAll(async () => {
  for (const kind of kinds) await kind.drop();
});

/** A booking tool that counts how often each step really runs. */
function counted() {
  const runs = { quote: 0, charge: 0 };
  const def = tool({
    name: "book",
    description: "",
    input: z.object({}),
    *run(_i, ctx) {
      const quote = yield* step("quote", () => (runs.quote++, 100));
      const ok = yield* elicit(`Charge $${quote}?`, Ok, { key: "confirm" });
      if (ok.action !== "accept" || !ok.content.ok) return "cancelled";
      const receipt = yield* step("charge", () => (runs.charge++, `R-${ctx.idempotencyKey("charge").slice(5, 13)}`));
      return `charged ${receipt}`;
    },
  });
  return { def, runs };
}

const stores: Array<[string, () => Promise<Store>]> = [["memory", async () => createMemoryStore()], ...kinds.map((k) => [k.name, () => k.make()] as [string, () => Promise<Store>])];

async function runtimeOn(store: Store, extra: Partial<Parameters<typeof createRuntime>[0]> = {}): Promise<Runtime> {
  const runtime = createRuntime({ state: { keys }, store, onError: () => {}, ...extra });
  cleanup.push(runtime);
  return runtime;
}

describe.each(stores)("single use on the %s store", (_name, makeStore) => {
  /** A fresh store and runtime, and the counted tool's first round done: its final round's params. */
  async function atFinalRound() {
    const store = await makeStore();
    cleanup.push(store);
    const runtime = await runtimeOn(store);
    const { def, runs } = counted();
    const r1 = (await runtime.callTool(def, { name: "book", arguments: {} }, info)) as { requestState: string };
    const final = { name: "book", arguments: {}, requestState: r1.requestState, inputResponses: { confirm: accept({ ok: true }) } };
    return { store, runtime, def, runs, final };
  }

  it("a repeated final round gets the stored result and runs nothing; other answers are refused", async () => {
    const { runtime, def, runs, final } = await atFinalRound();
    const first = await runtime.callTool(def, final, info);
    const again = await runtime.callTool(def, final, info);
    expect(again).toEqual(first);
    expect(runs).toEqual({ quote: 1, charge: 1 });
    // The same state with other answers: refused, with a stable reason.
    await expect(runtime.callTool(def, { ...final, inputResponses: { confirm: accept({ ok: false }) } }, info)).rejects.toMatchObject({ code: -32602, data: { reason: "state_redeemed" } });
    expect(runs).toEqual({ quote: 1, charge: 1 });
  });

  it("a step whose round's response was lost does not run again when the client repeats the round", async () => {
    const store = await makeStore();
    cleanup.push(store);
    const runtime = await runtimeOn(store);
    let runs = 0;
    const def = tool({
      name: "two",
      description: "",
      input: z.object({}),
      *run() {
        yield* elicit("first?", Ok, { key: "a" });
        yield* step("between", () => ++runs);
        return (yield* elicit("second?", Ok, { key: "b" })).action;
      },
    });
    const r1 = (await runtime.callTool(def, { name: "two", arguments: {} }, info)) as { requestState: string };
    const round2 = { name: "two", arguments: {}, requestState: r1.requestState, inputResponses: { a: accept({ ok: true }) } };
    await runtime.callTool(def, round2, info); // its response is "lost"
    const repeated = (await runtime.callTool(def, round2, info)) as { requestState: string };
    expect(runs).toBe(1);
    expect((await runtime.callTool(def, { name: "two", arguments: {}, requestState: repeated.requestState, inputResponses: { b: accept({ ok: true }) } }, info)).resultType).toBe("complete");
  });

  it("concurrent duplicates run once and all get the one response", async () => {
    const { runtime, def, runs, final } = await atFinalRound();
    const all = await Promise.all(Array.from({ length: 10 }, () => runtime.callTool(def, final, info)));
    expect(new Set(all.map((r) => JSON.stringify(r))).size).toBe(1);
    expect(runs.charge).toBe(1);
  });

  /** A tool of two asks and no step: its second round runs nothing but the code between asks. */
  const asksOnly = tool({
    name: "asks",
    description: "",
    input: z.object({}),
    *run() {
      const a = yield* elicit("first?", Ok, { key: "a" });
      const b = yield* elicit("second?", Ok, { key: "b" });
      return `${a.action}/${b.action}`;
    },
  });

  /** The store as the runtime sees it, every operation counted. */
  function counting(store: Store) {
    const ops: string[] = [];
    const counted = new Proxy(store, {
      get: (target, p) => {
        const value = target[p as keyof Store];
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          if (p !== "close" && p !== "time") ops.push(`${String(p)} ${String(args[0]).split(":")[0]}`);
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    }) as Store;
    return { counted, ops };
  }

  it.each(["resumed", "replayed", "on another instance"] as const)("a round that runs no step keeps its response with one store operation (an add), %s; a repeat gets it", async (path) => {
    const store = await makeStore();
    cleanup.push(store);
    const { counted, ops } = counting(store);
    const first = await runtimeOn(counted, path === "replayed" ? { liveCalls: 0 } : {});
    const runtime = path === "on another instance" ? await runtimeOn(counted) : first;
    const traces: string[] = [];
    const observed = await runtimeOn(counted, { onRound: (t) => traces.push(t.path) });
    const r1 = (await first.callTool(asksOnly, { name: "asks", arguments: {} }, info)) as { requestState: string };
    const second = { name: "asks", arguments: {}, requestState: r1.requestState, inputResponses: { a: accept({ ok: true }) } };
    ops.length = 0;
    const r2 = await runtime.callTool(asksOnly, second, info);
    expect(ops).toEqual(["add redeem"]);
    // The repeat, on a third instance: answered from the store, the same response.
    expect(await observed.callTool(asksOnly, second, info)).toEqual(r2);
    expect(traces).toEqual(["stored"]);
    // And the call goes on from the kept response, wherever its next round lands.
    const third = await first.callTool(asksOnly, { name: "asks", arguments: {}, requestState: (r2 as { requestState: string }).requestState, inputResponses: { b: accept({ ok: true }) } }, info);
    expect(third).toMatchObject({ content: [{ type: "text", text: "accept/accept" }] });
    // Another answer to the same state: refused.
    await expect(runtime.callTool(asksOnly, { ...second, inputResponses: { a: accept({ ok: false }) } }, info)).rejects.toMatchObject({ data: { reason: "state_redeemed" } });
  });

  it("a round that runs a step holds its claim before the step's body runs", async () => {
    const store = await makeStore();
    cleanup.push(store);
    const seen: Array<string | undefined> = [];
    let nonce = "";
    const runtime = await runtimeOn(store);
    const claimed = tool({
      name: "claimed",
      description: "",
      input: z.object({}),
      *run() {
        yield* elicit("go?", Ok, { key: "go" });
        return yield* step("act", async () => {
          seen.push(await store.get(`redeem:${nonce}`));
          return "acted";
        });
      },
    });
    const r1 = (await runtime.callTool(claimed, { name: "claimed", arguments: {} }, info)) as { requestState: string };
    nonce = runtime.codec.inspect(r1.requestState).nonce;
    await runtime.callTool(claimed, { name: "claimed", arguments: {}, requestState: r1.requestState, inputResponses: { go: accept({ ok: true }) } }, info);
    expect(seen).toHaveLength(1);
    expect(JSON.parse(seen[0]!)).toMatchObject({ s: "pending" });
  });

  it("concurrent rounds without a step: identical ones all get one response, and of two different answers one wins", async () => {
    const store = await makeStore();
    cleanup.push(store);
    const runtime = await runtimeOn(store);
    const r1 = (await runtime.callTool(asksOnly, { name: "asks", arguments: {} }, info)) as { requestState: string };
    const second = (ok: boolean) => ({ name: "asks", arguments: {}, requestState: r1.requestState, inputResponses: { a: accept({ ok }) } });
    const same = await Promise.all(Array.from({ length: 8 }, () => runtime.callTool(asksOnly, second(true), info)));
    expect(new Set(same.map((r) => JSON.stringify(r))).size).toBe(1);
    const r1b = (await runtime.callTool(asksOnly, { name: "asks", arguments: {} }, info)) as { requestState: string };
    const raced = await Promise.allSettled([true, false].map((ok) => runtime.callTool(asksOnly, { ...second(ok), requestState: r1b.requestState }, info)));
    expect(raced.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(raced.find((r) => r.status === "rejected")).toMatchObject({ reason: { data: { reason: "state_redeemed" } } });
  });

  it("a journal past the threshold spills to the store: the token stays small and the call completes", async () => {
    const store = await makeStore();
    cleanup.push(store);
    const runtime = await runtimeOn(store, { state: { keys, maxTokenBytes: 4096 } });
    const big = tool({
      name: "big",
      description: "",
      input: z.object({}),
      *run() {
        const blob = yield* step("blob", () => "x".repeat(200_000));
        const a = yield* elicit("more?", Ok, { key: "a" });
        const b = yield* elicit("again?", Ok, { key: "b" });
        return `${blob.length} ${a.action} ${b.action}`;
      },
    });
    const sim = await simulate(big, {}, { a: accept({ ok: true }), b: accept({ ok: true }) }, { runtime });
    expect(sim.result.content[0]!.text).toBe("200000 accept accept");
    expect(Math.max(...sim.stateBytes)).toBeLessThan(1000);
    // Without a store the token limit stands, as before.
    await expect(simulate(big, {}, { a: accept({ ok: true }) }, { runtime: createRuntime({ state: { keys, maxTokenBytes: 4096 }, onError: () => {} }) })).rejects.toMatchObject({
      code: -32603,
      data: { reason: "state_too_large" },
    });
  });
});

describe("expiry", () => {
  it("redemptions and spilled journals outlive the state by the tolerated clock skew, then expire", async () => {
    // One injected clock for the codec, the store and the runtime: time moves when the test says.
    const time = manualClock(1_800_000_000_000);
    const clock = time.now;
    const store = createMemoryStore({ clock });
    const runtime = await runtimeOn(store, { state: { keys, ttlSeconds: 1, clock }, spillBytes: 10, clock });
    const { def } = counted();
    const r1 = (await runtime.callTool(def, { name: "book", arguments: {} }, info)) as { requestState: string };
    await runtime.callTool(def, { name: "book", arguments: {}, requestState: r1.requestState, inputResponses: { confirm: accept({ ok: true }) } }, info);
    // The keys this state used: its redemption (by nonce) and its spilled journal (by reference).
    const opened = runtime.codec.open(r1.requestState, { method: "tools/call", target: "book", arguments: {} });
    const used = [`redeem:${opened.nonce}`, `state:${(opened.data as { sp: string }).sp}`];
    for (const key of used) expect(await store.get(key)).toBeDefined();
    time.advance(999); // still within the state's second
    for (const key of used) expect(await store.get(key)).toBeDefined();
    // Past the state's expiry, as long as a slow-clocked instance may still take it as valid.
    time.advance(TOLERATED_CLOCK_SKEW_MS);
    for (const key of used) expect(await store.get(key)).toBeDefined();
    time.advance(101);
    for (const key of used) expect(await store.get(key)).toBeUndefined();
  });

  it("without a store, a state may be presented again (today's behaviour, documented)", async () => {
    const runtime = createRuntime({ state: { keys }, onError: () => {} });
    const { def, runs } = counted();
    const r1 = (await runtime.callTool(def, { name: "book", arguments: {} }, info)) as { requestState: string };
    const final = { name: "book", arguments: {}, requestState: r1.requestState, inputResponses: { confirm: accept({ ok: true }) } };
    await runtime.callTool(def, final, info);
    await runtime.callTool(def, final, info);
    expect(runs.charge).toBe(2);
  });
});

describe.each(kinds)("three instances sharing $name", (kind) => {
  it("repeated and concurrent duplicates of every round, each to a random instance: each step runs once, every duplicate gets the same response", async () => {
    const instances = await Promise.all(
      Array.from({ length: 3 }, async () => {
        const store = await kind.make();
        cleanup.push(store);
        return runtimeOn(store, { liveCalls: 0 });
      }),
    );
    const { def, runs } = counted();
    for (let call = 0; call < 5; call++) {
      const pick = () => instances[Math.floor(Math.random() * instances.length)]!;
      const r1 = (await pick().callTool(def, { name: "book", arguments: {} }, info)) as { requestState: string };
      const final = { name: "book", arguments: {}, requestState: r1.requestState, inputResponses: { confirm: accept({ ok: true }) } };
      const responses = await Promise.all(Array.from({ length: 6 }, () => pick().callTool(def, final, info)));
      const later = await pick().callTool(def, final, info);
      expect(new Set([...responses, later].map((r) => JSON.stringify(r))).size).toBe(1);
    }
    expect(runs).toEqual({ quote: 5, charge: 5 });
  });

  it("the store gone mid-run: clear store_unavailable errors within the time limit, and nothing runs twice once it is back", async () => {
    // The server keeps running behind a proxy the test cuts and restores: what was written stays.
    const proxy = await startTcpProxy(kind.port);
    const store = await kind.make({ port: proxy.port, timeoutMs: 300 });
    const runtime = createRuntime({ state: { keys }, store, onError: () => {} });
    cleanup.push(proxy, runtime, store);
    let charges = 0;
    let crashDuringCharge = false;
    const def = tool({
      name: "pay",
      description: "",
      input: z.object({}),
      *run(_i, ctx) {
        const ok = yield* elicit("Pay?", Ok, { key: "confirm" });
        if (ok.action !== "accept") return "cancelled";
        return yield* step("charge", async () => {
          charges++;
          if (crashDuringCharge) proxy.cut(); // the store dies while the round runs
          return `charged R-${ctx.idempotencyKey("charge").slice(5, 13)}`;
        });
      },
    });
    const start = async () => (await runtime.callTool(def, { name: "pay", arguments: {} }, info)) as { requestState: string };
    const finalOf = (state: string) => ({ name: "pay", arguments: {}, requestState: state, inputResponses: { confirm: accept({ ok: true }) } });

    // Down before the round: a clear error within the limit, and nothing ran.
    const first = finalOf((await start()).requestState);
    proxy.cut();
    const started = Date.now();
    await expect(runtime.callTool(def, first, info)).rejects.toMatchObject({ code: -32603, data: { reason: "store_unavailable" } });
    expect(Date.now() - started).toBeLessThan(1500);
    expect(charges).toBe(0);

    // Back: the round runs once.
    proxy.restore();
    await waitForStore(store);
    const done = await runtime.callTool(def, first, info);
    expect(charges).toBe(1);

    // Down while a round runs its step: the client still gets that round's result.
    const second = finalOf((await start()).requestState);
    crashDuringCharge = true;
    const result = await runtime.callTool(def, second, info);
    crashDuringCharge = false;
    expect(result).toMatchObject({ resultType: "complete" });
    expect(charges).toBe(2);
    await expect(runtime.callTool(def, second, info)).rejects.toMatchObject({ data: { reason: "store_unavailable" } });
    // Back with what it had (durable): the runtime's retry kept the response, so repeats of
    // both rounds get their responses and nothing is charged again.
    proxy.restore();
    await waitForStore(store);
    // No sleep for the runtime's retry to land: a repeat finds the round's claim still held and
    // waits for the response it keeps trying to store.
    expect(await runtime.callTool(def, second, info)).toEqual(result);
    expect(await runtime.callTool(def, first, info)).toEqual(done);
    expect(charges).toBe(2);
  }, 30_000);
});

async function waitForStore(store: Store): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (
      await store.get("ping").then(
        () => true,
        () => false,
      )
    )
      return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("the store did not come back");
}

describe("a codec the application brings", () => {
  it("whose tokens need escaping in JSON: a round's kept response is still exact, and a repeat gets it", async () => {
    // Not base64url: the runtime may splice only its own codecs' tokens into the record unscanned.
    const { createStateCodec } = await import("mcp-yield");
    const inner = createStateCodec({ keys });
    const quoted = {
      ...inner,
      seal: (claims: Parameters<typeof inner.seal>[0]) => `${inner.seal(claims)}"\\`,
      mint: (claims: Parameters<typeof inner.mint>[0]) => {
        const minted = inner.mint(claims);
        return { ...minted, token: `${minted.token}"\\` };
      },
      open: (token: string, binding: Parameters<typeof inner.open>[1]) => inner.open(token.endsWith('"\\') ? token.slice(0, -2) : token, binding),
    };
    const store = createMemoryStore();
    const runtime = createRuntime({ state: quoted, store, liveCalls: 0 });
    cleanup.push(runtime, store);
    const two = tool({
      name: "two",
      description: "",
      input: z.object({}),
      *run() {
        const a = yield* elicit("first?", Ok, { key: "a" });
        const b = yield* elicit("second?", Ok, { key: "b" });
        return `${a.action} ${b.action}`;
      },
    });
    const first = (await runtime.callTool(two, { name: "two", arguments: {} }, info)) as { requestState: string };
    expect(first.requestState.endsWith('"\\')).toBe(true);
    const request = { name: "two", arguments: {}, requestState: first.requestState, inputResponses: { a: { action: "accept", content: { ok: true } } } };
    const answered = await runtime.callTool(two, request, info);
    expect((answered as { requestState: string }).requestState.endsWith('"\\')).toBe(true);
    // The same request again: the kept response, exactly (its token with the quote and backslash).
    expect(await runtime.callTool(two, request, info)).toEqual(answered);
  });
});
