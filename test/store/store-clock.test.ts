import { describe, expect, it } from "vitest";
import { createMemoryStore, type Store } from "mcp-yield";
import fc from "fast-check";
import { createStoreClock } from "../../src/internal.js";
import { leaseEnded } from "../../src/tasks/record/transitions.js";

// The store's clock as one instance sees it: its own monotonic clock plus a measured offset.

describe("store clock", () => {
  let local = 1_000_000;
  const store = (time: () => Promise<number>): Store => Object.assign(createMemoryStore(), { time });

  it("reads the store's clock: an instance an hour off agrees with the store after one measurement", async () => {
    const clock = createStoreClock({ store: store(async () => local + 3_600_000), local: () => local });
    expect(clock.now()).toBe(local); // not measured yet: its own
    await clock.sync();
    expect(clock.now()).toBe(local + 3_600_000);
    local += 250; // time goes on by the local (monotonic) clock between measurements
    expect(clock.now()).toBe(local + 3_600_000);
  });

  it("takes the middle of the round trip, throws away a slow measurement, keeps the last offset when one fails", async () => {
    let mode: "ok" | "slow" | "fail" = "ok";
    const answer = async () => {
      if (mode === "fail") throw new Error("down");
      const at = local + 5_000;
      local += mode === "slow" ? 1_000 : 40; // the round trip
      return at;
    };
    const clock = createStoreClock({ store: store(answer), local: () => local, resyncMs: 100, maxRoundTripMs: 200 });
    await clock.sync();
    // The store read its clock as the request left (5 s ahead); the offset is taken against the
    // middle of the 40 ms round trip: 5000 - 20.
    expect(clock.now() - local).toBe(4_980);
    expect(clock.uncertainty()).toBe(21); // half the round trip, and the whole-ms floor
    const offset = clock.now() - local;
    local += 200;
    mode = "slow";
    await clock.sync(); // later syncs run in the background
    await new Promise((r) => setTimeout(r, 0));
    expect(clock.now() - local).toBe(offset);
    local += 200;
    mode = "fail";
    await clock.sync();
    await new Promise((r) => setTimeout(r, 0));
    expect(clock.now() - local).toBe(offset);
  });

  it("keeps a measurement from a quiet moment over a later one from a busy moment, unless the store's clock was set", async () => {
    let trip = 4;
    let storeAhead = 5_000;
    const answer = async () => {
      const at = local + storeAhead;
      local += trip;
      return at;
    };
    const clock = createStoreClock({ store: store(answer), local: () => local, resyncMs: 100, maxRoundTripMs: 200 });
    await clock.sync();
    expect(clock.uncertainty()).toBe(3); // a 4 ms round trip
    const offset = clock.now() - local;
    expect(offset).toBe(4_998); // the store 5 s ahead, read as the request left: against the trip's middle
    // 10 s on, a measurement over a 150 ms round trip (±76 ms) agrees with the kept one (±8 ms
    // by now: 500 ppm of drift): the kept one stays, and waits on the clock stay short.
    local += 10_000;
    expect(clock.uncertainty()).toBe(8);
    trip = 150;
    await clock.sync();
    await new Promise((r) => setTimeout(r, 0));
    expect(clock.now() - local).toBe(offset);
    expect(clock.uncertainty()).toBeCloseTo(8.075, 3);
    // The store's clock set a second forward: the new measurement disagrees, and is taken however wide.
    local += 1_000;
    storeAhead += 1_000;
    await clock.sync();
    await new Promise((r) => setTimeout(r, 0));
    expect(clock.now() - local).toBe(6_000 - 75);
    expect(clock.uncertainty()).toBe(76);
    // A quiet moment again: tighter, so taken.
    local += 1_000;
    trip = 2;
    await clock.sync();
    await new Promise((r) => setTimeout(r, 0));
    expect(clock.uncertainty()).toBe(2);
    expect(clock.now() - local).toBe(6_000 - 1);
  });

  it("leaves a store without a clock (the in-memory one) on the instance's clock", async () => {
    const clock = createStoreClock({ store: createMemoryStore(), local: () => 42 });
    await clock.sync();
    expect(clock.now()).toBe(42);
    expect(clock.uncertainty()).toBe(0);
  });

  it("counts the store's clock uncertain by the worst kept round trip until a measurement succeeds", async () => {
    const clock = createStoreClock({ store: store(async () => Promise.reject(new Error("down"))), local: () => local, maxRoundTripMs: 300 });
    await clock.sync();
    expect(clock.uncertainty()).toBe(150);
  });

  // Two instances measure the store's clock over round trips the store answers anywhere within
  // (the cause of their disagreement). Whatever the split, while the holder still counts time on
  // its lease, no other instance counts the lease as ended: at most one of them runs the task.
  it("never lets a taker see a lease ended while its holder still counts time on it", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          skew: fc.integer({ min: -5_000, max: 5_000 }), // the store's clock against both instances'
          trips: fc.tuple(fc.integer({ min: 0, max: 200 }), fc.integer({ min: 0, max: 200 })),
          reads: fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true })), // where in its trip the store read its clock
          leaseMs: fc.integer({ min: 1, max: 1_000 }),
          later: fc.integer({ min: 0, max: 2_000 }),
        }),
        async ({ skew, trips, reads, leaseMs, later }) => {
          let t = 1_000_000; // local time, the same on both (one machine's monotonic clock)
          const measured = (i: 0 | 1) =>
            createStoreClock({
              store: store(async () => {
                const at = Math.floor(t + skew + trips[i] * reads[i]);
                t += trips[i];
                return at;
              }),
              local: () => t,
            });
          const holder = measured(0);
          await holder.sync();
          const taker = measured(1);
          await taker.sync();
          const until = holder.now() + leaseMs; // the lease the holder wrote
          t += later;
          const holderCounts = until - holder.now() - holder.uncertainty() > 0;
          expect(holderCounts && leaseEnded({ until }, taker.now(), taker.uncertainty())).toBe(false);
        },
      ),
      { numRuns: 2_000 },
    );
  });
});
