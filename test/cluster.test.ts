import { describe, expect, it } from "vitest";
import { runScenario } from "./stress/scenario.js";

// Scaled down for CI; `npm run stress` runs 1,000 calls.
describe("three instances, a crash and a key rotation mid-run", () => {
  it("every call completes with the right result; every round lands on another instance", async () => {
    const report = await runScenario({ instances: 3, calls: 45, thinkMs: [300, 3000] });
    expect(report.errors).toEqual([]);
    expect(report.wrong).toEqual([]);
    expect(report.completed).toBe(45);
    expect(report.sameInstanceRounds).toBe(0);
    expect(report.crossInstanceRounds).toBe(report.requests - report.retries - 45);
    // The chaos really happened while calls were in flight.
    expect(report.events.find((e) => e.includes("killed"))).toMatch(/\((\d+) calls in flight\)/);
    expect(Number(/\((\d+) calls in flight\)/.exec(report.events.find((e) => e.includes("killed"))!)![1])).toBeGreaterThan(0);
    expect(Number(/\((\d+) calls in flight\)/.exec(report.events.find((e) => e.includes("phase 1") && e.includes("instance 0"))!)![1])).toBeGreaterThan(0);
  }, 180_000);
});
