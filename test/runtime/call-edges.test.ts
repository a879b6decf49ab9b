import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createMemoryStore, createRuntime, elicit, now, type Runtime, type Store, step, tool, uuid } from "mcp-yield";
import { accept } from "mcp-yield/testing";
import { storesOf } from "../support/stores.js";
import { closedAfterEach } from "../support/instances.js";
import { testKey } from "../support/keys.js";
import { textOf } from "../support/results.js";
import { manualClock } from "../support/time.js";

// Issue 54, points 2–4: the edges of a call. A client that goes away mid-step does not doom
// the call; instances whose clocks disagree never redeem one state twice; an instance taking a
// foreground round over from one that died replays what was recorded before the step in flight.

const keys = [testKey("edges", 12)];
const info = { clientCapabilities: { elicitation: {} } };
const Ok = z.object({ ok: z.boolean() });
const { stores, kinds } = storesOf("call-edges");
const cleanup = closedAfterEach();

function runtimeOn(store: Store, extra: Partial<Parameters<typeof createRuntime>[0]> = {}): Runtime {
  const runtime = createRuntime({ state: { keys }, store, liveCalls: 0, onError: () => {}, ...extra });
  cleanup.push(runtime);
  return runtime;
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first (a step that honours its signal). */
const work = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(t), reject(signal.reason)), { once: true });
  });

describe.each(stores)("a client that goes away mid-step, on the %s store", (_name, makeStore) => {
  it("the same request again continues the call: the completed step keeps its result, the one in flight runs again under the same key", async () => {
    const store = await makeStore();
    cleanup.push(store);
    const runtime = runtimeOn(store);
    const quoted: string[] = [];
    const charged: string[] = [];
    const def = tool({
      name: "generate_report",
      description: "",
      input: z.object({}),
      *run(_i, ctx) {
        const ok = yield* elicit("Go?", Ok, { key: "go" });
        if (ok.action !== "accept") return "no";
        const quote = yield* step("quote", () => (quoted.push("q"), 12));
        const receipt = yield* step("charge", async (signal) => {
          charged.push(ctx.idempotencyKey("charge"));
          await work(300, signal);
          return `R-${ctx.idempotencyKey("charge").slice(5, 13)}`;
        });
        return `report ${quote} ${receipt}`;
      },
    });
    const first = (await runtime.callTool(def, { name: "generate_report", arguments: {} }, info)) as { requestState: string };
    const second = { name: "generate_report", arguments: {}, requestState: first.requestState, inputResponses: { go: accept({ ok: true }) } };
    const aborter = new AbortController();
    const dropped = runtime.callTool(def, second, { ...info, signal: aborter.signal }).catch((e: unknown) => e);
    while (charged.length === 0) await new Promise((r) => setTimeout(r, 5));
    aborter.abort(new Error("client went away"));
    await dropped;
    // The retry of the same request: not "Tool … failed" for the state's life, but the call going on.
    const retried = await runtime.callTool(def, second, info);
    expect(retried).toMatchObject({ resultType: "complete" });
    expect((retried as { isError?: boolean }).isError).toBeUndefined();
    expect(textOf(retried)).toMatch(/^report 12 R-/);
    expect(quoted).toHaveLength(1);
    expect(charged).toHaveLength(2);
    expect(charged[1]).toBe(charged[0]);
    // And it is now this round's response: a further repeat gets it from the store.
    expect(await runtime.callTool(def, second, info)).toEqual(retried);
    expect(charged).toHaveLength(2);
  });

  it("a client gone before any step ran leaves the state unredeemed: the retry runs the round", async () => {
    const store = await makeStore();
    cleanup.push(store);
    const runtime = runtimeOn(store);
    const def = tool({
      name: "ask",
      description: "",
      input: z.object({}),
      *run() {
        const ok = yield* elicit("Go?", Ok, { key: "go" });
        return ok.action;
      },
    });
    const first = (await runtime.callTool(def, { name: "ask", arguments: {} }, info)) as { requestState: string };
    const second = { name: "ask", arguments: {}, requestState: first.requestState, inputResponses: { go: accept({ ok: true }) } };
    await expect(runtime.callTool(def, second, { ...info, signal: AbortSignal.abort() })).rejects.toMatchObject({ data: { reason: "request_aborted" } });
    expect(textOf(await runtime.callTool(def, second, info))).toBe("accept");
  });
});

describe("instances whose clocks disagree", () => {
  /** A tool whose one step is a charge, counted. */
  function payment() {
    const charges: number[] = [];
    const def = tool({
      name: "pay",
      description: "",
      input: z.object({}),
      *run() {
        const ok = yield* elicit("Pay?", Ok, { key: "confirm" });
        if (ok.action !== "accept") return "no";
        return yield* step("charge", () => (charges.push(1), `charged ${charges.length}`));
      },
    });
    return { def, charges };
  }
  const finalOf = (state: string) => ({ name: "pay", arguments: {}, requestState: state, inputResponses: { confirm: accept({ ok: true }) } });

  it("30 s apart, on one memory store: a state redeemed on the fast instance is never run again on the slow one, at any time in its life", async () => {
    const time = manualClock();
    const store = createMemoryStore({ clock: time.now });
    const skew = 30_000;
    const fast = () => time.now() + skew;
    const ttlSeconds = 120;
    // Redeemed on the fast instance at each point of the state's life it still accepts it, then
    // presented on the slow one every 5 s until the slow one too takes it as expired.
    for (let redeemAt = 0; redeemAt + skew < ttlSeconds * 1000; redeemAt += 10_000) {
      const start = time.now();
      const slowRuntime = runtimeOn(store, { state: { keys, ttlSeconds, clock: time.now }, clock: time.now });
      const fastRuntime = runtimeOn(store, { state: { keys, ttlSeconds, clock: fast }, clock: fast });
      const { def, charges } = payment();
      const first = (await slowRuntime.callTool(def, { name: "pay", arguments: {} }, info)) as { requestState: string };
      time.set(start + redeemAt);
      const answered = await fastRuntime.callTool(def, finalOf(first.requestState), info);
      expect(textOf(answered)).toBe("charged 1");
      for (let at = redeemAt; at < ttlSeconds * 1000; at += 5_000) {
        time.set(start + at);
        expect(await slowRuntime.callTool(def, finalOf(first.requestState), info)).toEqual(answered);
      }
      expect(charges).toHaveLength(1);
      time.set(start + ttlSeconds * 1000 + 120_000);
    }
  });

  it.each(kinds.map((k) => [k.name, k] as const))("2 s apart on %s: the slow instance finds the record the fast one kept", async (_n, kind) => {
    const fastStore = await kind.make();
    const slowStore = await kind.make();
    cleanup.push(fastStore, slowStore);
    const fast = () => Date.now() + 2_000;
    // The state lives 3 s on the slow clock; redeemed on the fast one, whose clock says 1 s remain.
    const slowRuntime = runtimeOn(slowStore, { state: { keys, ttlSeconds: 3 } });
    const fastRuntime = runtimeOn(fastStore, { state: { keys, ttlSeconds: 3, clock: fast }, clock: fast });
    const { def, charges } = payment();
    const first = (await slowRuntime.callTool(def, { name: "pay", arguments: {} }, info)) as { requestState: string };
    const answered = await fastRuntime.callTool(def, finalOf(first.requestState), info);
    await new Promise((r) => setTimeout(r, 1_300));
    // Past the 1 s the fast clock gave the record, still within the slow clock's view of the state.
    expect(await slowRuntime.callTool(def, finalOf(first.requestState), info)).toEqual(answered);
    expect(charges).toHaveLength(1);
  });
});

describe("a foreground round taken over after its instance died mid-step", () => {
  it("the taking instance replays the uuid() and now() recorded before the step in flight; a completed step does not run again", async () => {
    const time = manualClock();
    const store = createMemoryStore({ clock: time.now });
    const options = { state: { keys, clock: time.now }, clock: time.now };
    const dying = runtimeOn(store, options);
    const taking = runtimeOn(store, options);
    const quoted: number[] = [];
    const seen: string[] = [];
    let hang = true;
    const def = tool({
      name: "book",
      description: "",
      input: z.object({}),
      *run() {
        const ok = yield* elicit("Book?", Ok, { key: "go" });
        if (ok.action !== "accept") return "no";
        yield* step("quote", () => (quoted.push(1), 1));
        const id = yield* uuid();
        const at = yield* now();
        return yield* step("charge", async () => {
          seen.push(`${id}@${at}`);
          // The instance dies here: its round never ends, its claim is never renewed again.
          if (hang) await new Promise(() => {});
          return `charged ${id}@${at}`;
        });
      },
    });
    const first = (await dying.callTool(def, { name: "book", arguments: {} }, info)) as { requestState: string };
    const second = { name: "book", arguments: {}, requestState: first.requestState, inputResponses: { go: accept({ ok: true }) } };
    void dying.callTool(def, second, info);
    while (seen.length === 0) await new Promise((r) => setTimeout(r, 5));
    hang = false;
    time.advance(16_000); // past the claim's 15 s without renewal
    time.advance(1);
    const result = await taking.callTool(def, second, info);
    expect(seen).toHaveLength(2);
    expect(seen[1]).toBe(seen[0]);
    expect(textOf(result)).toBe(`charged ${seen[0]}`);
    expect(quoted).toHaveLength(1);
  });
});
