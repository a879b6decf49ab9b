import { isDeepStrictEqual } from "node:util";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { all, createRuntime, elicit, type Runtime, sample, step, tool } from "mcp-yield";
import { LiveCalls, liveCallBytes } from "../../src/replay/live-calls.js";
import { accept, SimulatedAuthorError, sampled, simulate, type SimulateOptions } from "mcp-yield/testing";
import { testKey } from "../support/keys.js";
import { textOf } from "../support/results.js";

// Issue 9: a round gives the same result resumed, replayed, or replayed on another instance.
// Every test here runs its call each of these ways and requires the same outcome.

const keys = [testKey("x", 8)];
const Ok = z.object({ ok: z.boolean() });

/** The ways a call's rounds can be served, as simulate options. */
function servings(): Array<[string, SimulateOptions]> {
  return [
    ["resumed on one instance", { paths: "resume" }],
    ["replayed every round", { paths: "replay" }],
    ["two instances alternating", { runtime: [createRuntime({ state: { keys } }), createRuntime({ state: { keys } })] }],
    ["resumed and checked against a replay", { paths: "both" }],
  ];
}

/** A held call with nothing in it but its owner: what LiveCalls' bounds are tried with. */
const entry = (owner: object) => ({
  owner,
  suspended: {} as never,
  context: {} as never,
  payload: {} as never,
  minted: { nonce: "n", expiresAt: 1e9, method: "tools/call", target: "t", argumentsDigest: "d", principal: undefined },
});
describe("snapshot semantics: code never holds what the journal holds", () => {
  it.each(servings())("mutating a step's result changes neither the question nor the charge (%s)", async (_how, options) => {
    const charge = tool({
      name: "charge",
      description: "",
      input: z.object({}),
      *run() {
        const quote = yield* step("quote", () => ({ amount: 100 }));
        quote.amount *= 2; // ordinary code: doubles the quote it was given
        const ok = yield* elicit(`Charge $${quote.amount}?`, Ok, { key: "confirm" });
        if (ok.action !== "accept") return "cancelled";
        const again = yield* elicit(`Really charge $${quote.amount}?`, Ok, { key: "really" });
        quote.amount += 1; // and changes it again after a later ask
        return again.action === "accept" ? `Charged $${quote.amount}` : "cancelled";
      },
    });
    const sim = await simulate(charge, {}, { confirm: accept({ ok: true }), really: accept({ ok: true }) }, options);
    expect(sim.rounds.map((r) => (Object.values(r.inputRequests)[0]!.params as { message: string }).message)).toEqual(["Charge $200?", "Really charge $200?"]);
    expect(textOf(sim.result)).toBe("Charged $201");
  });

  it.each(servings())("mutating an answer or an all() result does not reach later rounds (%s)", async (_how, options) => {
    const t = tool({
      name: "answers",
      description: "",
      input: z.object({}),
      *run() {
        const first = yield* elicit("name?", z.object({ name: z.string() }), { key: "name" });
        if (first.action === "accept") first.content.name = first.content.name.toUpperCase();
        const second = yield* elicit(`hello ${first.action === "accept" ? first.content.name : "?"}, again?`, Ok, { key: "again" });
        return `${first.action === "accept" ? first.content.name : "-"} ${second.action}`;
      },
    });
    const sim = await simulate(t, {}, { name: accept({ name: "ada" }), again: accept({ ok: true }) }, options);
    expect(textOf(sim.result)).toBe("ADA accept");
  });
});

describe("what steers control flow is recorded", () => {
  it.each(servings())("a ctx.can branch taken and answered replays the same way when a later round declares less (%s)", async (_how, options) => {
    const summarize = tool({
      name: "summarize",
      description: "",
      input: z.object({}),
      *run(_i, ctx) {
        const draft = ctx.can("sampling")
          ? textOf({ content: [(yield* sample({ messages: [{ role: "user", content: { type: "text", text: "draft it" } }], maxTokens: 20 }, { key: "draft" })).content as Record<string, unknown>] })
          : "a plain draft";
        const ok = yield* elicit(`Send "${draft}"?`, Ok, { key: "send" });
        return `${ok.action}: ${draft}`;
      },
    });
    // Round 1 and 2 declare sampling; round 3 (answering the question) declares elicitation only.
    const capabilities = (round: number) => (round < 3 ? { sampling: {}, elicitation: {} } : { elicitation: {} });
    const sim = await simulate(summarize, {}, { draft: sampled("model text"), send: accept({ ok: true }) }, { ...options, capabilities });
    expect(textOf(sim.result)).toBe("accept: model text");
  });

  it("asking is still gated by what this request declares", async () => {
    const runtime = createRuntime({ state: { keys } });
    const t = tool({
      name: "g",
      description: "",
      input: z.object({}),
      *run(_i, ctx) {
        if (ctx.can("sampling")) yield* sample({ messages: [], maxTokens: 1 }, { key: "s" });
        return "done";
      },
    });
    const r1 = (await runtime.callTool(t, { name: "g", arguments: {} }, { clientCapabilities: { sampling: {} } })) as { requestState: string };
    // The next round declares nothing and brings no answer: the recorded branch needs sampling.
    await expect(runtime.callTool(t, { name: "g", arguments: {}, requestState: r1.requestState }, { clientCapabilities: {} })).rejects.toMatchObject({ code: -32021 });
  });

  it("ctx.can with an unknown kind is refused", async () => {
    const t = tool({
      name: "u",
      description: "",
      input: z.object({}),
      *run(_i, ctx) {
        return String(ctx.can("telepathy" as never));
      },
    });
    await expect(simulate(t)).rejects.toThrow(/unknown capability "telepathy"/);
  });
});

describe("a step result the journal cannot carry fails where it is recorded", () => {
  class Money {
    constructor(readonly cents: number) {}
    format() {
      return `$${(this.cents / 100).toFixed(2)}`;
    }
  }
  const cycle: Record<string, unknown> = { a: 1 };
  cycle.self = cycle;
  const cases: Array<[string, () => unknown, RegExp]> = [
    ["a class instance", () => new Money(12345), /step\("price"\).*\$ is an instance of Money/],
    ["a class instance inside data", () => ({ total: { amount: new Money(1) } }), /\$\.total\.amount is an instance of Money/],
    ["a function", () => ({ pay: () => 1 }), /\$\.pay is a function/],
    ["a symbol", () => [Symbol("x")], /\$\[0\] is a symbol/],
    ["a cycle", () => cycle, /\$\.self is a cycle/],
    ["a typed array", () => new Uint8Array(3), /instance of Uint8Array/],
    ["an invalid date", () => new Date(Number.NaN), /invalid Date/],
  ];
  it.each(cases)("%s: an author failure naming the step and the path, on every path", async (_what, value, message) => {
    const t = tool({
      name: "price",
      description: "",
      input: z.object({}),
      *run() {
        const price = yield* step("price", value);
        yield* elicit("ok?", Ok, { key: "ok" });
        return String(price);
      },
    });
    for (const [, options] of servings()) {
      const sim = await simulate(t, {}, { ok: accept({ ok: true }) }, { ...options, authorErrors: "return", ...(options.runtime ? { runtime: undefined } : {}) });
      expect(sim.result.isError).toBe(true);
      expect(sim.rounds).toHaveLength(0); // it failed in the round that recorded it
      expect(String((sim.errors[0]!.error as Error).message)).toMatch(message);
    }
  });

  it("what a step may return comes back exactly: Date, Map, Set, BigInt, undefined, -0, NaN, reserved keys", async () => {
    // A "__proto__" own member, as JSON.parse or a careful author would make it.
    const value = () =>
      Object.defineProperty({ at: new Date(5), m: new Map([["k", new Set([1n])]]), u: undefined, z: -0, n: Number.NaN, "~~k": 2 }, "__proto__", { value: { x: 1 }, enumerable: true });
    const seen: unknown[] = [];
    const t = tool({
      name: "rich",
      description: "",
      input: z.object({}),
      *run() {
        const v = yield* step("rich", value);
        yield* elicit("ok?", Ok, { key: "ok" });
        seen.push(v);
        return "ok";
      },
    });
    for (const [, options] of servings()) await simulate(t, {}, { ok: accept({ ok: true }) }, options);
    expect(seen.length).toBeGreaterThanOrEqual(4); // "both" runs the code a second time to compare
    for (const v of seen) expect(isDeepStrictEqual(v, value())).toBe(true);
  });
});

describe("client input cannot grow the state or crash the server", () => {
  const info = { clientCapabilities: { elicitation: {}, sampling: {}, roots: {} } };

  it("a valid sampling or roots answer padded with unknown members records only what the runtime understands", async () => {
    const runtime = createRuntime({ state: { keys } });
    const seen: unknown[] = [];
    const t = tool({
      name: "pad",
      description: "",
      input: z.object({}),
      *run() {
        const s = yield* sample({ messages: [], maxTokens: 5 }, { key: "s" });
        seen.push(s);
        yield* elicit("ok?", Ok, { key: "ok" });
        return s.model;
      },
    });
    const r1 = (await runtime.callTool(t, { name: "pad", arguments: {} }, info)) as { requestState: string };
    const padding = "p".repeat(100_000); // twice: 200 KB of unknown members, inside the 256 KiB limit
    const padded = { role: "assistant", content: { type: "text", text: "hi", padding }, model: "m", padding };
    const r2 = (await runtime.callTool(t, { name: "pad", arguments: {}, requestState: r1.requestState, inputResponses: { s: padded } }, info)) as { requestState: string };
    expect(r2.requestState.length).toBeLessThan(1000);
    expect(seen[0]).toEqual({ role: "assistant", content: { type: "text", text: "hi" }, model: "m" });
  });

  it("arguments nested 10,000 deep or too large are -32602 with a stable reason, not a stack overflow", async () => {
    const runtime = createRuntime({ state: { keys } });
    const t = tool({
      name: "any",
      description: "",
      input: z.object({ v: z.unknown() }),
      *run() {
        return "ran";
      },
    });
    let deep: unknown = 1;
    for (let i = 0; i < 10_000; i++) deep = { d: deep };
    await expect(runtime.callTool(t, { name: "any", arguments: { v: deep } }, info)).rejects.toMatchObject({ code: -32602, data: { reason: "arguments_too_deep" } });
    await expect(runtime.callTool(t, { name: "any", arguments: { v: "x".repeat(2 * 1024 * 1024) } }, info)).rejects.toMatchObject({ code: -32602, data: { reason: "arguments_too_large" } });
  });

  it("the inputResponses byte limit counts keys", async () => {
    const runtime = createRuntime({ state: { keys } });
    const t = tool({
      name: "k",
      description: "",
      input: z.object({}),
      *run() {
        return (yield* elicit("?", Ok)).action;
      },
    });
    const responses = Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`${i}`.padEnd(14_000, "k"), {}]));
    await expect(runtime.callTool(t, { name: "k", arguments: {}, inputResponses: responses }, info)).rejects.toMatchObject({ code: -32602, data: { reason: "input_responses_too_large" } });
  });

  it("an answer schema that throws is an author failure reported to onError, never a raw -32603", async () => {
    const errors: unknown[] = [];
    const runtime = createRuntime({ state: { keys }, onError: (e) => errors.push(e) });
    const Throws = z.object({
      n: z.number().refine(() => {
        throw new Error("refine exploded");
      }),
    });
    const t = tool({
      name: "r",
      description: "",
      input: z.object({}),
      *run() {
        return (yield* elicit("n?", Throws, { key: "n" })).action;
      },
    });
    const r1 = (await runtime.callTool(t, { name: "r", arguments: {} }, info)) as { requestState: string };
    const r2 = await runtime.callTool(t, { name: "r", arguments: {}, requestState: r1.requestState, inputResponses: { n: accept({ n: 1 }) } }, info);
    expect(r2).toMatchObject({ resultType: "complete", isError: true });
    expect(String((errors[0] as Error).message)).toMatch(/ask "n": the answer schema threw.*refine exploded/);
  });

  it.each([1000, 0])("an answer schema whose output cannot be recorded is an author failure naming the ask and the path (liveCalls %i)", async (liveCalls) => {
    class Money {
      constructor(readonly cents: number) {}
    }
    const errors: unknown[] = [];
    const runtime = createRuntime({ state: { keys }, onError: (e) => errors.push(e), liveCalls });
    const Price = z.object({ price: z.number().transform((n) => new Money(n)) });
    const t = tool({
      name: "p",
      description: "",
      input: z.object({}),
      *run() {
        return (yield* elicit("price?", Price, { key: "price" })).action;
      },
    });
    const r1 = (await runtime.callTool(t, { name: "p", arguments: {} }, info)) as { requestState: string };
    const r2 = await runtime.callTool(t, { name: "p", arguments: {}, requestState: r1.requestState, inputResponses: { price: accept({ price: 5 }) } }, info);
    expect(r2).toMatchObject({ resultType: "complete", isError: true });
    expect(String((errors[0] as Error).message)).toMatch(/the accepted content of ask "price" \(after the answer schema\) cannot be recorded exactly: \$\.price is an instance of Money/);
  });
});

describe("edges", () => {
  afterEach(() => vi.restoreAllMocks());

  it.each([1000, 0])("asks keyed like Object.prototype members are sent, answered and kept as own keys (liveCalls %i)", async (liveCalls) => {
    const runtime = createRuntime({ state: { keys }, liveCalls });
    const info = { clientCapabilities: { elicitation: {} } };
    const t = tool({
      name: "proto",
      description: "",
      input: z.object({}),
      *run() {
        const one = yield* elicit("one?", Ok, { key: "toString" });
        const [two, three] = yield* all([elicit("two?", Ok, { key: "hasOwnProperty" }), elicit("three?", Ok, { key: "constructor" })]);
        return [one, two, three].map((a) => a.action).join(" ");
      },
    });
    const r1 = (await runtime.callTool(t, { name: "proto", arguments: {} }, info)) as { requestState: string; inputRequests: Record<string, unknown> };
    expect(Object.keys(r1.inputRequests)).toEqual(["toString"]);
    const r2 = (await runtime.callTool(t, { name: "proto", arguments: {}, requestState: r1.requestState, inputResponses: { toString: accept({ ok: true }) } }, info)) as typeof r1;
    expect(Object.keys(r2.inputRequests).sort()).toEqual(["constructor", "hasOwnProperty"]);
    // One of the two answered: it is kept while the other is asked again.
    const r3 = (await runtime.callTool(t, { name: "proto", arguments: {}, requestState: r2.requestState, inputResponses: { hasOwnProperty: { action: "decline" } } }, info)) as typeof r1;
    expect(Object.keys(r3.inputRequests)).toEqual(["constructor"]);
    const r4 = await runtime.callTool(t, { name: "proto", arguments: {}, requestState: r3.requestState, inputResponses: { constructor: { action: "cancel" } } }, info);
    expect(textOf(r4 as never)).toBe("accept decline cancel");
  });

  // Replayed asks under default keys find their fingerprints by ordinal in a cache the whole
  // process shares: every way of serving the rounds must still tell the calls apart and catch a change.
  const servers: Array<[string, () => Array<Pick<Runtime, "callTool">>]> = [
    ["replayed every round", () => [createRuntime({ state: { keys }, liveCalls: 0, onError: () => {} })]],
    ["two instances alternating", () => [0, 1].map(() => createRuntime({ state: { keys }, onError: () => {} }))],
    ["three instances round-robin, each resuming its earlier round", () => [0, 1, 2].map(() => createRuntime({ state: { keys }, onError: () => {} }))],
  ];
  it.each(servers)("interleaved calls asking under one key with other messages replay each their own; a changed message is still caught (%s)", async (_how, make) => {
    const runtimes = make();
    let next = 0;
    const runtime = { callTool: ((...args) => runtimes[next++ % runtimes.length]!.callTool(...args)) as Runtime["callTool"] };
    const info = { clientCapabilities: { elicitation: {} } };
    let suffix = "";
    const t = tool({
      name: "greet",
      description: "",
      input: z.object({ who: z.string() }),
      *run({ who }) {
        const a = yield* elicit(`Hello ${who}${suffix}?`, Ok);
        const b = yield* elicit(`Bye ${who}?`, Ok);
        return `${who} ${a.action} ${b.action}`;
      },
    });
    const call = (who: string, requestState?: string, key?: string) =>
      runtime.callTool(t, { name: "greet", arguments: { who }, ...(requestState ? { requestState, inputResponses: { [key!]: accept({ ok: true }) } } : {}) }, info) as Promise<{
        requestState: string;
        content?: Array<{ text: string }>;
      }>;
    // Two calls, their rounds interleaved: the same keys, messages differing by call.
    const ada1 = await call("Ada");
    const bob1 = await call("Bob");
    const ada2 = await call("Ada", ada1.requestState, "elicit-0");
    const bob2 = await call("Bob", bob1.requestState, "elicit-0");
    expect((await call("Ada", ada2.requestState, "elicit-1")).content![0]!.text).toBe("Ada accept accept");
    expect((await call("Bob", bob2.requestState, "elicit-1")).content![0]!.text).toBe("Bob accept accept");
    // The first message changes under the same key between rounds (a deployment: the next round
    // reaches a new instance, holding no generator, in a process whose cache saw the old message):
    // a divergence naming it. An instance still holding the call's generator would resume it,
    // which never runs the changed code — a resumed generator is not a replay.
    const cy1 = await call("Cy");
    const cy2 = await call("Cy", cy1.requestState, "elicit-0");
    suffix = " again";
    runtimes.splice(0, runtimes.length, createRuntime({ state: { keys }, onError: () => {} }));
    await expect(call("Cy", cy2.requestState, "elicit-1")).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('its message text (it is now "Hello Cy again?") changed') });
  });

  it('the ask key "__proto__" is refused where the ask is made (no client could answer under it)', () => {
    expect(() => elicit("x?", Ok, { key: "__proto__" })).toThrow(/"__proto__" is reserved/);
  });

  it.each([1000, 0])("states stay bound to their arguments, short (digest kept) or long (hashed each round) (liveCalls %i)", async (liveCalls) => {
    const runtime = createRuntime({ state: { keys }, liveCalls });
    const info = { clientCapabilities: { elicitation: {} } };
    const t = tool({
      name: "a",
      description: "",
      input: z.object({ s: z.string() }),
      *run({ s }) {
        return `${(yield* elicit("ok?", Ok, { key: "k" })).action} ${s.length}`;
      },
    });
    for (const s of ["short", "x".repeat(5000)]) {
      const other = `${s.slice(0, -1)}y`;
      const r1 = (await runtime.callTool(t, { name: "a", arguments: { s } }, info)) as { requestState: string };
      const retry = (arg: string) => runtime.callTool(t, { name: "a", arguments: { s: arg }, requestState: r1.requestState, inputResponses: { k: accept({ ok: true }) } }, info);
      await expect(retry(other)).rejects.toMatchObject({ code: -32602, data: { reason: "wrong_binding" } });
      expect(textOf((await retry(s)) as never)).toBe(`accept ${s.length}`);
    }
  });

  it("without onError, author failures are logged to stderr with the definition, round and stack", async () => {
    const log = vi.spyOn(console, "error").mockImplementation(() => {});
    const runtime = createRuntime({ state: { keys } });
    const boom = tool({
      name: "boom",
      description: "",
      input: z.object({}),
      *run() {
        yield* step("s", () => {
          throw new Error("database down");
        });
        return "";
      },
    });
    await runtime.callTool(boom, { name: "boom", arguments: {} }, {});
    expect(log).toHaveBeenCalledTimes(1);
    const [where, error] = log.mock.calls[0]!;
    expect(String(where)).toMatch(/tools\/call boom, round 1/);
    expect((error as Error).stack).toContain("database down");
  });

  it("live calls are bounded by bytes and by expiry, and eviction only means the next round replays", async () => {
    const entry = (owner: object) => ({
      owner,
      suspended: {} as never,
      context: {} as never,
      payload: {} as never,
      minted: { nonce: "n", expiresAt: 2000, method: "tools/call", target: "t", argumentsDigest: "d", principal: undefined },
    });
    let now = 1000;
    const calls = new LiveCalls(100, 3 * liveCallBytes("t".repeat(100)), () => now);
    const owner = {};
    for (let i = 0; i < 5; i++) calls.put(`${i}`.repeat(100), entry(owner), 2000);
    expect(calls.size).toBe(3); // the byte budget holds three: the two newest were not held
    expect(calls.bytes).toBeLessThanOrEqual(3 * liveCallBytes("t".repeat(100)));
    expect(calls.take("4".repeat(100), owner)).toBeUndefined();
    expect(calls.take("0".repeat(100), owner)).toBeDefined(); // held ones keep their turn
    now = 2000; // the states have expired
    expect(calls.take("1".repeat(100), owner)).toBeUndefined();
    // A runtime whose budget holds nothing still completes every call, by replaying.
    let runs = 0;
    const t = tool({
      name: "ev",
      description: "",
      input: z.object({}),
      *run() {
        runs++;
        const a = yield* elicit("a?", Ok, { key: "a" });
        const b = yield* elicit("b?", Ok, { key: "b" });
        return `${a.action} ${b.action}`;
      },
    });
    const sim = await simulate(t, {}, { a: accept({ ok: true }), b: accept({ ok: true }) }, { runtime: createRuntime({ state: { keys }, liveCallBytes: 1 }) });
    expect(textOf(sim.result)).toBe("accept accept");
    expect(runs).toBe(3); // replayed from the top each round
  });

  it("at the bound, a warm newcomer displaces cold generators (no round came back for them); otherwise those held keep their turn", () => {
    const entry = (owner: object) => ({
      owner,
      suspended: {} as never,
      context: {} as never,
      payload: {} as never,
      minted: { nonce: "n", expiresAt: 2000, method: "tools/call", target: "t", argumentsDigest: "d", principal: undefined },
    });
    const owner = {};
    const calls = new LiveCalls(3, 1 << 30, () => 1000);
    const token = (c: string) => c.repeat(40);
    calls.put(token("a"), entry(owner), 2000, "A", false);
    calls.put(token("b"), entry(owner), 2000, "B", true);
    calls.put(token("c"), entry(owner), 2000, "C", false);
    calls.put(token("d"), entry(owner), 2000, "D", true); // full: warm d displaces the oldest cold one (a), not b
    expect([..."abcd"].map((c) => calls.peek(token(c)) !== undefined)).toEqual([false, true, true, true]);
    calls.put(token("e"), entry(owner), 2000, "E", false); // a cold newcomer is not held
    expect([..."bcde"].map((c) => calls.peek(token(c)) !== undefined)).toEqual([true, true, true, false]);
    calls.put(token("f"), entry(owner), 2000, "F", true); // c is the only cold one: it goes
    expect([..."bcdf"].map((c) => calls.peek(token(c)) !== undefined)).toEqual([true, false, true, true]);
    calls.put(token("g"), entry(owner), 2000, "G", true); // all warm: the newcomer is not held
    expect([..."bdfg"].map((c) => calls.peek(token(c)) !== undefined)).toEqual([true, true, true, false]);
    expect(calls.size).toBe(3);
  });

  it("once resumes have been seen, a generator idle for four times the longest recent wait is evicted (its call went elsewhere)", () => {
    const owner = {};
    let now = 1000;
    // Idleness timed on an injected clock (as the tasks engine times its parked generators).
    const calls = new LiveCalls(
      1000,
      1 << 30,
      () => now,
      () => now,
    );
    // Before 64 resumes were seen there is no idle bound: an old entry stays.
    calls.put("o".repeat(40), entry(owner), 1e9, "old");
    for (let i = 0; i < 63; i++) {
      calls.put(`${i}`.padStart(40, "r"), entry(owner), 1e9, `r${i}`);
      now += 5; // each resumed 5 ms after it was parked
      expect(calls.take(`${i}`.padStart(40, "r"), owner)).toBeDefined();
    }
    now += 1000;
    calls.put("p".repeat(40), entry(owner), 1e9, "p");
    expect(calls.peek("o".repeat(40))).toBeDefined();
    // The 64th resume sets the bound: 4 × 5 ms = 20 ms.
    calls.put("q".repeat(40), entry(owner), 1e9, "q");
    now += 5;
    expect(calls.take("q".repeat(40), owner)).toBeDefined();
    calls.put("s".repeat(40), entry(owner), 1e9, "s");
    expect(calls.peek("o".repeat(40))).toBeUndefined(); // idle for over a second: gone
    expect(calls.peek("p".repeat(40))).toBeDefined(); // idle 5 ms
    now += 15;
    calls.put("t".repeat(40), entry(owner), 1e9, "t");
    expect(calls.peek("s".repeat(40))).toBeDefined(); // 15 ms idle: within the bound
    now += 10;
    calls.put("u".repeat(40), entry(owner), 1e9, "u");
    expect(calls.peek("s".repeat(40))).toBeUndefined(); // 25 ms: past it
    expect(calls.peek("t".repeat(40))).toBeDefined();
  });

  it("a generator taken as the call's earlier round is never taken again by its own token, even right after a peek at it", () => {
    const entry = (owner: object) => ({
      owner,
      suspended: {} as never,
      context: {} as never,
      payload: {} as never,
      minted: { nonce: "n", expiresAt: 2000, method: "tools/call", target: "t", argumentsDigest: "d", principal: undefined },
    });
    const owner = {};
    const calls = new LiveCalls(100, 1 << 30, () => 1000);
    const held = entry(owner);
    const other = entry(owner);
    calls.put("a".repeat(40), held, 2000, "A");
    calls.put("z".repeat(40), other, 2000, "Z"); // another call's: the map is not empty
    expect(calls.peek("a".repeat(40))).toBe(held);
    // Between the peek and the take, another request resumes it as the call's earlier round.
    expect(calls.takeEarlier("A", owner, () => true)).toBe(held);
    expect(calls.take("a".repeat(40), owner)).toBeUndefined();
    expect([calls.size, calls.bytes]).toEqual([1, liveCallBytes("z".repeat(40))]);
    expect(calls.take("z".repeat(40), owner)).toBe(other);
    // And a take right after a peek takes it exactly once.
    calls.put("b".repeat(40), held, 2000, "B");
    expect(calls.peek("b".repeat(40))).toBe(held);
    expect(calls.take("b".repeat(40), owner)).toBe(held);
    expect(calls.take("b".repeat(40), owner)).toBeUndefined();
  });

  it("an earlier round's generator whose own state expired is still resumed when the presented journal extends it; one that does not extend it is dropped", () => {
    const entry = (owner: object) => ({
      owner,
      suspended: {} as never,
      context: {} as never,
      payload: {} as never,
      minted: { nonce: "n", expiresAt: 2000, method: "tools/call", target: "t", argumentsDigest: "d", principal: undefined },
    });
    const owner = {};
    let now = 1000;
    const calls = new LiveCalls(100, 1 << 30, () => now);
    const a = entry(owner);
    calls.put("a".repeat(40), a, 2000, "A");
    calls.put("b".repeat(40), entry(owner), 2000, "B");
    now = 2500; // both entries' own states have expired (the presented, later ones have not)
    expect(calls.takeEarlier("A", owner, () => true)).toBe(a);
    expect(calls.takeEarlier("B", owner, () => false)).toBeUndefined();
    expect(calls.size).toBe(0);
  });

  it("a bound set by fast rounds relaxes as soon as a slower call comes back for a generator it evicted as idle", () => {
    const owner = {};
    const now = 1000;
    let idle = 0; // the idle clock runs apart from the expiry clock
    const calls = new LiveCalls(
      1000,
      1 << 30,
      () => now,
      () => idle,
    );
    // 64 resumes 0.5 ms after parking: the bound is 4 × 0.5 = 2 ms.
    for (let i = 0; i < 64; i++) {
      calls.put(`${i}`.padStart(40, "f"), entry(owner), 1e9, `f${i}`);
      idle += 0.5;
      expect(calls.take(`${i}`.padStart(40, "f"), owner)).toBeDefined();
    }
    // Now the calls are slower: each round comes back 6 ms after its generator was parked, and
    // other calls' rounds park generators meanwhile (what evicts an idle one is a put). A round
    // is served as the runtime serves it: its own token first, then the call's earlier round.
    const round = (i: number) => {
      const token = `${i}`.padStart(40, "s");
      calls.put(token, entry(owner), 1e9, slow);
      idle += 6;
      calls.put(`${i}`.padStart(40, "o"), entry(owner), 1e9, `o${i}`);
      return calls.take(token, owner) ?? calls.takeEarlier(slow, owner, () => true);
    };
    // Calls whose id ends in 0 or 8 are remembered when their generator goes as idle (one in
    // eight random ids): this slow one's first generator goes (6 ms > 2 ms); its next round,
    // finding it gone, raises the bound to 4 × 6 = 24 ms — from then on each is resumed.
    const slow = "slow-8";
    expect(round(0)).toBeUndefined();
    for (let i = 1; i < 10; i++) expect(round(i)).toBeDefined();
    // A round of a call this instance never held leaves the bound as it is.
    expect(calls.takeEarlier("never-held", owner, () => true)).toBeUndefined();
  });

  it("an instance that never sees a call twice holds only a few generators (no resume, no unbounded wait)", () => {
    const owner = {};
    // Counted in parks, as the runtime counts (as many instances as a call has requests, round-robin).
    const calls = new LiveCalls(1000, 1 << 30, () => 1000);
    let most = 0;
    for (let i = 0; i < 5000; i++) {
      expect(calls.takeEarlier(`call${i}`, owner, () => true)).toBeUndefined();
      calls.put(`${i}`.padStart(40, "n"), entry(owner), 1e9, `call${i}`);
      most = Math.max(most, calls.size);
    }
    // Eight parks idle before any wait was seen: nine at most, never the count's 1,000.
    expect(most).toBe(9);
    // Calls that do come back after their generators went raise the bound to the wait they had
    // (eight in a row: back0, ending in 0, is remembered).
    for (let j = 0; j < 8; j++) calls.put(`${j}`.padStart(40, "b"), entry(owner), 1e9, `back${j}`);
    for (let i = 0; i < 20; i++) calls.put(`${i}`.padStart(40, "m"), entry(owner), 1e9, `more${i}`);
    for (let j = 0; j < 8; j++) expect(calls.takeEarlier(`back${j}`, owner, () => true)).toBeUndefined(); // went as idle
    calls.put("c".repeat(40), entry(owner), 1e9, "again");
    for (let i = 0; i < 20; i++) calls.put(`${i}`.padStart(40, "p"), entry(owner), 1e9, `after${i}`);
    expect(calls.takeEarlier("again", owner, () => true)).toBeDefined(); // 20 parks: within the raised bound
  });

  it("a client that comes back late cannot raise the idle bound past the server's cap", () => {
    const owner = {};
    // Count bound 100: the cap defaults to 16 × 100 = 1,600 parks.
    const calls = new LiveCalls(100, 1 << 30, () => 1000);
    // Parks that hold nothing new: one call's newer rounds replace its older generator (no resume).
    let n = 0;
    const parks = (count: number) => {
      for (let i = 0; i < count; i++) calls.put(`${n++}`.padStart(40, "f"), entry(owner), 1e9, "one-call");
    };
    // A sampled call (its id ends in 0) parks, goes as idle, and comes back 50,000 parks later:
    // uncapped, that raises the bound to 4 × 50,000 parks.
    calls.put("g".repeat(40), entry(owner), 1e9, "late0");
    parks(50_000);
    expect(calls.takeEarlier("late0", owner, () => true)).toBeUndefined();
    // Within the cap a generator stays: 1,500 parks later it is resumed.
    calls.put("k".repeat(40), entry(owner), 1e9, "held");
    parks(1500);
    expect(calls.takeEarlier("held", owner, () => true)).toBeDefined();
    // Past it, it goes, though the instance is far below its count (two entries held).
    calls.put("h".repeat(40), entry(owner), 1e9, "idle");
    parks(1700);
    expect(calls.size).toBeLessThanOrEqual(2);
    expect(calls.takeEarlier("idle", owner, () => true)).toBeUndefined();
  });

  it("without an idle clock, a wait is counted in generators parked meanwhile: the bound is 4 × the longest, and no time enters it", () => {
    const owner = {};
    const calls = new LiveCalls(1000, 1 << 30, () => 1000); // the expiry clock stands still
    // Three calls' generators parked, then resumed in order: they waited 2, 1 and 0 parks.
    // After 64 resumes the bound is 4 × 2 = 8 parks.
    for (let i = 0; i < 22; i++) {
      const tokens = ["r", "a", "b"].map((c) => `${i}`.padStart(40, c));
      for (const t of tokens) calls.put(t, entry(owner), 1e9, t);
      for (const t of tokens) expect(calls.take(t, owner)).toBeDefined();
    }
    const idle = "s".repeat(40);
    calls.put(idle, entry(owner), 1e9, "idle");
    // Eight more parked: it has waited as long as the bound allows, and stays.
    for (let j = 1; j <= 8; j++) calls.put(`${j}`.padStart(40, "f"), entry(owner), 1e9, `f${j}`);
    expect(calls.peek(idle)).toBeDefined();
    // The ninth takes it past the bound: evicted as idle.
    calls.put("9".padStart(40, "f"), entry(owner), 1e9, "f9");
    expect(calls.peek(idle)).toBeUndefined();
    expect(calls.peek("8".padStart(40, "f"))).toBeDefined();
  });

  it("a held generator a later round passed without extending it is dropped; one an older round's retry does not pass stays", () => {
    const entry = (owner: object) => ({
      owner,
      suspended: {} as never,
      context: {} as never,
      payload: {} as never,
      minted: { nonce: "n", expiresAt: 2000, method: "tools/call", target: "t", argumentsDigest: "d", principal: undefined },
    });
    const owner = {};
    const calls = new LiveCalls(10, 1 << 30, () => 1000);
    calls.put("x".repeat(40), entry(owner), 2000, "call");
    expect(
      calls.takeEarlier(
        "call",
        owner,
        () => false,
        () => false,
      ),
    ).toBeUndefined();
    expect(calls.size).toBe(1); // a retry of an older round: kept
    expect(
      calls.takeEarlier(
        "call",
        owner,
        () => false,
        () => true,
      ),
    ).toBeUndefined();
    expect(calls.size).toBe(0); // passed: it can never be resumed
  });

  it("liveCalls and liveCallBytes are validated like the limits (NaN from the environment is refused)", () => {
    expect(() => createRuntime({ state: { keys }, liveCalls: Number("") - Number.NaN })).toThrow(/liveCalls must be a non-negative integer/);
    expect(() => createRuntime({ state: { keys }, liveCalls: -1 })).toThrow(/liveCalls/);
    expect(() => createRuntime({ state: { keys }, liveCallBytes: 1.5 })).toThrow(/liveCallBytes/);
    expect(() => createRuntime({ state: { keys }, liveCalls: 0 })).not.toThrow();
  });
});

describe("the harness", () => {
  const book = tool({
    name: "book",
    description: "",
    input: z.object({}),
    *run() {
      return (yield* elicit("book?", Ok, { key: "confirm" })).action;
    },
  });

  it("reports scripted answers under keys nobody asked", async () => {
    await expect(simulate(book, {}, { confirm: accept({ ok: true }), confrim: accept({ ok: true }) })).rejects.toThrow(/keys nobody asked: "confrim" \(asked: "confirm"\)/);
  });

  it("surfaces author errors to the test, or returns them", async () => {
    const boom = tool({
      name: "boom",
      description: "",
      input: z.object({}),
      *run() {
        yield* step("s", () => {
          throw new Error("db password is hunter2");
        });
        return "";
      },
    });
    const rejected = await simulate(boom).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(rejected).toBeInstanceOf(SimulatedAuthorError);
    expect((rejected as SimulatedAuthorError).message).toMatch(/tools\/call boom failed in round 1: db password is hunter2/);
    const sim = await simulate(boom, {}, {}, { authorErrors: "return" });
    expect(sim.result.isError).toBe(true);
    expect((sim.errors[0]!.error as Error).message).toBe("db password is hunter2");
  });

  it('paths: "both" fails on code that is not deterministic, naming the round, the effect and both values', async () => {
    let runs = 0;
    const flaky = tool({
      name: "flaky",
      description: "",
      input: z.object({}),
      *run() {
        runs++; // outside step(): differs between the run and its replay
        const ok = yield* elicit(`Attempt ${runs}?`, Ok, { key: "attempt" });
        return ok.action;
      },
    });
    await expect(simulate(flaky, {}, { attempt: accept({ ok: true }) }, { paths: "both" })).rejects.toThrow(
      /Round 1 is not deterministic: replayed from its state, at effect #0 elicit under key "attempt": its message text was "Attempt 1\?" and is now "Attempt 2\?"/,
    );
  });

  it('paths: "both" compares final results too', async () => {
    let runs = 0;
    const counts = tool({
      name: "counts",
      description: "",
      input: z.object({}),
      *run() {
        return `run ${++runs}`;
      },
    });
    await expect(simulate(counts, {}, {}, { paths: "both" })).rejects.toThrow(/Round 1 is not deterministic: the round's result was .*run 1.*, replayed it is .*run 2/);
  });

  it("the development double-run on a server reports to onError and answers -32603 nondeterministic", async () => {
    const errors: unknown[] = [];
    const runtime: Runtime = createRuntime({ state: { keys }, verifyReplay: true, onError: (e) => errors.push(e) });
    let n = 0;
    const t = tool({
      name: "t",
      description: "",
      input: z.object({}),
      *run() {
        return String((yield* elicit(`q${n++}`, Ok)).action);
      },
    });
    await expect(runtime.callTool(t, { name: "t", arguments: {} }, { clientCapabilities: { elicitation: {} } })).rejects.toMatchObject({
      code: -32603,
      data: { reason: "nondeterministic", round: 1, index: 0 },
    });
    expect(errors).toHaveLength(1);
  });
});
