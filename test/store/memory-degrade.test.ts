import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createMemoryStore, createRuntime, elicit, type Runtime, step, tool } from "mcp-yield";
import { dropKeptResponse } from "../../src/internal.js";
import { testKey } from "../support/keys.js";

// The in-memory store, full, degrades instead of refusing everything: the oldest kept responses
// of answered rounds shrink to "answered, for these answers" — a repeat of such a round is told
// its response is no longer kept, and still never runs the round again — while new rounds go on.
// The sustained rate the store holds follows from what one answered round keeps once shrunk.

const keys = [testKey("d", 17)];
const caps = { clientCapabilities: { elicitation: {} } };
const runtimes: Runtime[] = [];
afterEach(async () => {
  for (const r of runtimes.splice(0)) await r.close();
});

describe("memory store degrade policy", () => {
  it("unit: full, it shrinks the oldest kept responses (in place, expiry kept) before refusing; what cannot shrink is refused", async () => {
    const store = createMemoryStore({ maxBytes: 4_000, reservedBytes: 100 });
    const done = (i: number) => JSON.stringify({ d: `digest${i}`, s: "done", r: { result: { content: [{ type: "text", text: "r".repeat(300) }] } } });
    for (let i = 0; i < 10; i++) await store.set(`redeem:n${i}`, done(i), 60_000);
    expect(store.shrunk).toBe(0);
    await store.set("redeem:n10", done(10), 60_000); // past the bound: the oldest shrink first
    expect(store.shrunk).toBeGreaterThan(0);
    expect(JSON.parse((await store.get("redeem:n0"))!)).toEqual({ d: "digest0", s: "done", dropped: true });
    expect(JSON.parse((await store.get("redeem:n10"))!).r).toBeDefined();
    expect(store.bytes).toBeLessThanOrEqual(4_000);
    // Values nothing can shrink (a pending claim, a task record) are never altered; past the bound they are refused.
    await expect(store.set("task:big", "t".repeat(5_000), 60_000)).rejects.toMatchObject({ reason: "store_full" });
  });

  it("end to end: rounds keep being answered past the store's size; an old round's repeat gets response_not_kept, its step not run again; a recent one's gets its response", async () => {
    let now = 1_800_000_000_000;
    const clock = () => now;
    const store = createMemoryStore({ maxBytes: 256 * 1024, clock });
    const runtime = createRuntime({ state: { keys, clock }, clock, store, onError: () => {} });
    runtimes.push(runtime);
    let charged = 0;
    const pay = tool({
      name: "pay",
      description: "",
      input: z.object({}),
      async *run() {
        yield* elicit("Pay?", z.object({ ok: z.boolean() }), { key: "ok" });
        yield* step("charge", () => ++charged);
        return `receipt ${"r".repeat(2_000)}`; // a kept response of ~2 KB
      },
    });
    const rounds: Array<Record<string, unknown>> = [];
    for (let i = 0; i < 400; i++) {
      const first = (await runtime.callTool(pay, { name: "pay", arguments: {} }, caps)) as { requestState: string };
      const answer = { name: "pay", arguments: {}, requestState: first.requestState, inputResponses: { ok: { action: "accept", content: { ok: true } } } };
      await runtime.callTool(pay, answer, caps); // never refused: 400 × 2 KB is 3× the store
      rounds.push(answer);
      now += 100;
    }
    expect(charged).toBe(400);
    expect(store.shrunk).toBeGreaterThan(0);
    const old = await runtime.callTool(pay, rounds[0]!, caps).catch((e: unknown) => e);
    expect(old).toMatchObject({ code: -32603, data: { reason: "response_not_kept" } });
    const recent = await runtime.callTool(pay, rounds.at(-1)!, caps);
    expect(recent).toMatchObject({ content: [{ type: "text" }] });
    expect(charged).toBe(400);
  });

  it("measures what one answered round keeps once shrunk, and the sustained rate the default store holds", async () => {
    let now = 1_800_000_000_000;
    const clock = () => now;
    // The default shrink, watched: the size of each answered round once shrunk (key and value).
    const after: number[] = [];
    const shrink = (key: string, value: string) => {
      const smaller = dropKeptResponse(key, value);
      if (smaller !== undefined) after.push(key.length + smaller.length);
      return smaller;
    };
    const store = createMemoryStore({ maxBytes: 24 * 1024, clock, shrink });
    const runtime = createRuntime({ state: { keys, clock }, clock, store, onError: () => {} });
    runtimes.push(runtime);
    const ok = tool({
      name: "ok",
      description: "",
      input: z.object({}),
      async *run() {
        yield* elicit("Ok?", z.object({ ok: z.boolean() }), { key: "ok" });
        return "done";
      },
    });
    const perRound: number[] = [];
    // 180 rounds × 168 bytes pass 24 KiB: the oldest shrink, and all 180 fit shrunk.
    for (let i = 0; i < 180; i++) {
      const first = (await runtime.callTool(ok, { name: "ok", arguments: {} }, caps)) as { requestState: string };
      const before = store.bytes;
      await runtime.callTool(ok, { name: "ok", arguments: {}, requestState: first.requestState, inputResponses: { ok: { action: "accept", content: { ok: true } } } }, caps);
      perRound.push(store.bytes - before);
      now += 10;
    }
    // Shrunk, an answered round keeps its key and {d, s, dropped}: the floor of the store's use per round.
    expect(after.length).toBeGreaterThan(50);
    expect(new Set(after).size).toBe(1);
    const shrunk = after[0]!;
    const stateTtlSeconds = 600; // the codec's default
    const sustained = Math.floor((64 * 1024 * 1024) / (shrunk * stateTtlSeconds));
    // Before the store filled, each answered round added the same number of bytes.
    const unshrunk = perRound[0]!;
    expect(perRound.slice(0, 50).every((n) => n === unshrunk)).toBe(true);
    console.log(
      `kept per answered round: ${unshrunk} bytes before shrinking, ${shrunk} after; the default 64 MiB store holds ${sustained} rounds/s sustained with the default 10-minute state lifetime`,
    );
    expect(shrunk).toBeLessThan(120);
    expect(sustained).toBeGreaterThan(900);
  });

  it("unit: the oldest expired entries go on every write, unread, so the store holds what is live and not what it once held", async () => {
    let now = 0;
    const store = createMemoryStore({ clock: () => now });
    for (let i = 0; i < 100; i++) await store.set(`redeem:old${i}`, "x".repeat(100), 1_000);
    const full = store.bytes;
    now = 2_000; // all expired, none read
    for (let i = 0; i < 60; i++) await store.set(`redeem:new${i}`, "y".repeat(100), 1_000_000);
    // The expired ones at the front of the write order go with the next write.
    let live = 0;
    for (let i = 0; i < 60; i++) live += `redeem:new${i}`.length + 100;
    expect(store.bytes).toBe(live);
    expect(store.bytes).toBeLessThan(full);
  });

  it("unit: at the bound each value is offered to shrink once per write of it, however often the store fills", async () => {
    const offered = new Map<string, number>();
    const shrink = (key: string, value: string) => {
      offered.set(key, (offered.get(key) ?? 0) + 1);
      return dropKeptResponse(key, value);
    };
    const store = createMemoryStore({ maxBytes: 64 * 1024, reservedBytes: 1, shrink });
    const done = (i: number) => JSON.stringify({ d: `digest${i}`, s: "done", r: { result: { content: [{ type: "text", text: "r".repeat(400) }] } } });
    // A third of the store that never shrinks (a task record), then many rounds' responses.
    await store.set("task:t", "t".repeat(20 * 1024), 60_000);
    for (let i = 0; i < 400; i++) await store.set(`redeem:n${i}`, done(i), 60_000);
    expect(store.shrunk).toBeGreaterThan(250);
    expect(Math.max(...offered.values())).toBe(1);
    expect(await store.get("task:t")).toHaveLength(20 * 1024);
  });

  it("holds the sustained rate the README states (per MiB, two state lifetimes) without refusing a round; well above it, it refuses", async () => {
    // docs/exactly-once.md "The in-memory store, full": the default 64 MiB store holds about 1,000
    // rounds/s with the default 10-minute state lifetime (a round's record kept for it and the
    // tolerated clock skew) — 1,000 / 64 rounds/s per MiB. A 512 KiB store, on an injected
    // clock, at 95 % and at 125 % of that rate, for two lifetimes (steady state).
    const stated = 1_000 / 64 / 2;
    const run = async (factor: number) => {
      let now = 1_800_000_000_000;
      const clock = () => now;
      const store = createMemoryStore({ maxBytes: 512 * 1024, clock });
      const runtime = createRuntime({ state: { keys, clock }, clock, store, onError: () => {} });
      runtimes.push(runtime);
      const ok = tool({
        name: "ok",
        description: "",
        input: z.object({}),
        async *run() {
          yield* elicit("Ok?", z.object({ ok: z.boolean() }), { key: "ok" });
          return "done";
        },
      });
      const gapMs = 1000 / (stated * factor);
      let refused = 0;
      let answered = 0;
      for (const end = now + 2 * 600_000; now < end; now += gapMs) {
        const first = (await runtime.callTool(ok, { name: "ok", arguments: {} }, caps)) as { requestState: string };
        const reply = await runtime
          .callTool(ok, { name: "ok", arguments: {}, requestState: first.requestState, inputResponses: { ok: { action: "accept", content: { ok: true } } } }, caps)
          .catch((e: unknown) => e);
        if ((reply as { data?: { reason?: string } }).data?.reason === "store_full") refused++;
        else if ((reply as { content?: unknown }).content !== undefined) answered++;
        else throw reply;
      }
      return { refused, answered, bytes: store.bytes };
    };
    const below = await run(0.95);
    // Every round of the two lifetimes answered (none refused, none lost).
    expect(below.answered).toBeGreaterThanOrEqual(Math.floor(2 * 600 * stated * 0.95));
    expect(below.refused).toBe(0);
    expect(below.bytes).toBeLessThanOrEqual(512 * 1024);
    const above = await run(1.25);
    expect(above.refused).toBeGreaterThan(0);
  }, 120_000);

  it("unit: the default shrink reads the runtime's answered-round record as text: exactly {d, s, dropped} for it, nothing for any other record (property)", () => {
    const digest = fc.string({ unit: fc.constantFrom(..."ABCxyz019-_"), minLength: 1, maxLength: 43 });
    const response = fc.oneof(fc.record({ result: fc.jsonValue() }), fc.record({ error: fc.record({ code: fc.integer(), message: fc.string() }) }));
    fc.assert(
      fc.property(digest, response, (d, r) => {
        const shrunk = dropKeptResponse("redeem:n", JSON.stringify({ d, s: "done", r }));
        expect(shrunk).toBe(JSON.stringify({ d, s: "done", dropped: true }));
        // Another key, or any other record of the runtime's, is left as it is.
        expect(dropKeptResponse("task:n", JSON.stringify({ d, s: "done", r }))).toBeUndefined();
        expect(dropKeptResponse("redeem:n", shrunk!)).toBeUndefined();
        expect(dropKeptResponse("redeem:n", JSON.stringify({ d, s: "pending", o: "me", u: 1 }))).toBeUndefined();
        expect(dropKeptResponse("redeem:n", JSON.stringify({ d, s: "cont", k: { h: {}, t: "", n: 0 } }))).toBeUndefined();
        expect(dropKeptResponse("redeem:n", JSON.stringify({ s: "free" }))).toBeUndefined();
      }),
    );
    // A digest with a character JSON escapes is not the runtime's: left alone rather than misread.
    expect(dropKeptResponse("redeem:n", JSON.stringify({ d: 'a"b', s: "done", r: { result: 1 } }))).toBeUndefined();
  });
});
