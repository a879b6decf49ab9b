import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createMemoryStore, createRuntime, elicit, type Runtime, tool } from "mcp-yield";
import { createRoundShare } from "../../src/runtime/single-use/round-share.js";
import { ProtocolError } from "../../src/wire/index.js";
import { storesOf } from "../support/stores.js";
import { closedAfterEach } from "../support/instances.js";
import { testKey } from "../support/keys.js";

// Issue 54, point 5: the single-use records a principal's rounds make the store keep are
// charged to that principal's share, so one principal answering rounds cannot make another's
// fail; a credit at a time, so a round costs no store round trip of its own.

const keys = [testKey("share", 5)];
const { stores } = storesOf("round-share");
const cleanup = closedAfterEach();

describe("a principal's round credit", () => {
  /** A share over counters that record each purchase; `refuseOver` bytes in all refuses. */
  function share(refuseOver = Number.POSITIVE_INFINITY) {
    const bought: Array<[string, number]> = [];
    let now = 0;
    let total = 0;
    const refused = () => new ProtocolError(-32603, "over", { reason: "principal_byte_limit" });
    const s = createRoundShare({
      bytes: {
        async charge(principal, n) {
          if (total + n > refuseOver) throw refused();
          total += n;
          bought.push([principal ?? "-", n]);
        },
        refund() {},
      },
      time: { now: () => now, uncertainty: () => 0, sync: async () => {} },
      windowMs: 1000,
      creditBytes: 100,
    });
    return { s, bought, at: (t: number) => (now = t) };
  }

  it("is bought once per credit's worth of records: rounds with credit left need no purchase", async () => {
    const { s, bought } = share();
    await s.admit("alice");
    for (let i = 0; i < 4; i++) {
      expect(s.admit("alice")).toBeUndefined();
      s.spend("alice", 25);
    }
    // Spent: the next round buys another credit first.
    const buying = s.admit("alice");
    expect(buying).toBeInstanceOf(Promise);
    await buying;
    expect(bought).toEqual([
      ["alice", 100],
      ["alice", 100],
    ]);
  });

  it("rounds admitted together share one purchase, and what they overspent is owed with the next", async () => {
    const { s, bought } = share();
    const a = s.admit("bob");
    const b = s.admit("bob");
    expect(a).toBe(b);
    await a;
    s.spend("bob", 90);
    s.spend("bob", 90); // admitted together: 80 past the credit
    await s.admit("bob");
    expect(bought).toEqual([
      ["bob", 100],
      ["bob", 180],
    ]);
  });

  it("is refused past the share (the round is refused before it runs), and what was owed is forgiven", async () => {
    const { s } = share(250);
    await s.admit("carol");
    s.spend("carol", 100);
    await s.admit("carol");
    s.spend("carol", 160); // owes 60
    await expect(s.admit("carol")).rejects.toMatchObject({ data: { reason: "principal_byte_limit" } });
    // Not owed again: a purchase of one credit passes once room is there (here: never, 200 of 250 used).
    await expect(s.admit("carol")).rejects.toMatchObject({ data: { reason: "principal_byte_limit" } });
  });

  it("bought in an earlier window is spent: a record written with it would outlive its count", async () => {
    const { s, bought, at } = share();
    await s.admit("dave");
    s.spend("dave", 10);
    expect(s.admit("dave")).toBeUndefined();
    at(1500);
    await s.admit("dave");
    expect(bought).toEqual([
      ["dave", 100],
      ["dave", 100],
    ]);
  });

  it("is never asked of requests without a principal", () => {
    const { s, bought } = share();
    for (let i = 0; i < 10; i++) {
      expect(s.admit(undefined)).toBeUndefined();
      s.spend(undefined, 1000);
    }
    expect(bought).toEqual([]);
  });
});

/** A tool whose every round asks again, quoting a little text: each answered round keeps a record. */
const chatty = tool({
  name: "chatty",
  description: "",
  input: z.object({ topic: z.string() }),
  async *run({ topic }) {
    for (let i = 0; ; i++) {
      const r = yield* elicit(`More about ${topic} (${i})?`, z.object({ ok: z.boolean() }), { key: `q${i}` });
      if (r.action !== "accept") return "done";
    }
  },
});

/** A call's rounds are bounded (64): `greedily` starts a new call every 50. */
async function greedily(runtimes: Runtime[], principal: string, most: number): Promise<{ rounds: number; refusal: unknown }> {
  let last: Awaited<ReturnType<typeof round>> | undefined;
  for (let rounds = 0; rounds < most; rounds++) {
    try {
      last = await round(runtimes[rounds % runtimes.length]!, principal, rounds % 50 === 0 ? undefined : last);
    } catch (refusal) {
      return { rounds, refusal };
    }
  }
  return { rounds: most, refusal: undefined };
}

/** One round of `chatty` for `principal`: the first, or the answer to `previous`. */
async function round(runtime: Runtime, principal: string, previous?: { requestState: string; inputRequests: Record<string, unknown> }) {
  const params: Record<string, unknown> = { name: "chatty", arguments: { topic: "x".repeat(200) } };
  if (previous) {
    params.requestState = previous.requestState;
    params.inputResponses = Object.fromEntries(Object.keys(previous.inputRequests).map((k) => [k, { action: "accept", content: { ok: true } }]));
  }
  return (await runtime.callTool(chatty, params as never, { principal, clientCapabilities: { elicitation: {} } })) as { requestState: string; inputRequests: Record<string, unknown> };
}

describe("one principal's answered rounds", () => {
  it("cannot fill the memory store for another: past its share it is refused, the other goes on", async () => {
    // A small store and a smaller share, so the test fills them in a few thousand rounds.
    const store = createMemoryStore({ maxBytes: 512 * 1024 });
    cleanup.push(store);
    const runtime = createRuntime({ state: { keys }, store, maxStoreBytesPerPrincipal: 256 * 1024, liveCalls: 0, onError: () => {} });
    cleanup.push(runtime);
    const { rounds, refusal } = await greedily([runtime], "greedy", 6000);
    expect(refusal, `after ${rounds} rounds`).toMatchObject({ data: { reason: "principal_byte_limit" } });
    // Its share, in records of 1–2 KB: not the 6,000 it tried, nor the store's room.
    expect(rounds).toBeGreaterThan(50);
    expect(rounds).toBeLessThan(400);
    // Another principal's calls are not affected.
    let other = await round(runtime, "patient");
    for (let i = 0; i < 20; i++) other = await round(runtime, "patient", other);
    expect(other.requestState).toEqual(expect.any(String));
  }, 60_000);

  it.each(stores)(
    "are charged on the %s store too, across instances",
    async (_name, makeStore) => {
      const runtimes = [];
      for (let i = 0; i < 2; i++) {
        const store = await makeStore();
        cleanup.push(store);
        const runtime = createRuntime({ state: { keys }, store, maxStoreBytesPerPrincipal: 256 * 1024, liveCalls: 0, onError: () => {} });
        cleanup.push(runtime);
        runtimes.push(runtime);
      }
      const { rounds, refusal } = await greedily(runtimes, `greedy-${Math.random()}`, 2000);
      expect(refusal, `after ${rounds} rounds`).toMatchObject({ data: { reason: "principal_byte_limit" } });
      // Two instances' credits (64 KiB each) count as held: the share is reached early, never late.
      expect(rounds).toBeGreaterThan(50);
      expect(rounds).toBeLessThan(400);
      expect((await round(runtimes[1]!, `patient-${Math.random()}`)).requestState).toEqual(expect.any(String));
    },
    60_000,
  );
});
