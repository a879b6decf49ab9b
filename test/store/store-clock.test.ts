import { describe, expect, it } from "vitest";
import { createMemoryStore, type Store } from "mcp-yield";
import { createStoreClock } from "../../src/internal.js";

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

  it("leaves a store without a clock (the in-memory one) on the instance's clock", async () => {
    const clock = createStoreClock({ store: createMemoryStore(), local: () => 42 });
    await clock.sync();
    expect(clock.now()).toBe(42);
  });
});
