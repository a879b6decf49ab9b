import { afterAll, describe, expect, it } from "vitest";
import { dropPrefix, REDIS_URL, redisAvailable, testPrefix } from "./support/redis.js";
import { runTaskScenario } from "./stress/task-scenario.js";

// Scaled down for CI; `npm run stress` runs 300 task calls.
const prefix = testPrefix("cluster");
afterAll(async () => {
  if (redisAvailable) await dropPrefix(prefix);
});

describe.skipIf(!redisAvailable)("three instances on Redis, one killed mid-run", () => {
  it("every task call completes once with the right result; none stuck; every instance agrees on every result", async () => {
    const report = await runTaskScenario({ instances: 3, calls: 30, thinkMs: [50, 400], redisUrl: REDIS_URL, prefix, leaseMs: 2000 });
    expect(report.errors).toEqual([]);
    expect(report.wrong).toEqual([]);
    expect(report.stuck).toBe(0);
    expect(report.inconsistent).toEqual([]);
    expect(report.completed).toBe(30);
    // The crash really happened with calls in flight.
    const inFlight = Number(/\((\d+) calls in flight\)/.exec(report.events.find((e) => e.includes("killed"))!)![1]);
    expect(inFlight).toBeGreaterThanOrEqual(10);
  }, 180_000);
});
