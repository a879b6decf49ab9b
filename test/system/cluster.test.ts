import { describe, expect, it } from "vitest";
import { runScenario } from "../../scripts/stress/scenario.js";

// Scaled down for CI; `npm run stress` runs 1,000 calls.
describe("three instances, a crash and a key rotation mid-run", () => {
  it("every call completes with the right result; every round lands on another instance", async () => {
    const report = await runScenario({ instances: 3, calls: 45, thinkMs: [300, 3000] });
    expect(report.errors).toEqual([]);
    expect(report.wrong).toEqual([]);
    expect(report.completed).toBe(45);
    expect(report.sameInstanceRounds).toBe(0);
    expect(report.crossInstanceRounds).toBe(report.requests - report.retries - 45);
    // The chaos really happened while calls were in flight: a third of them hold their last
    // answer until the rotation is over, so they cross the crash and both rotation phases.
    const inFlight = (needle: string) => Number(/\((\d+) calls in flight\)/.exec(report.events.find((e) => e.includes(needle))!)![1]);
    expect(inFlight("killed")).toBeGreaterThanOrEqual(15);
    expect(inFlight("phase 2: seal with the new key (new,old): instance 2")).toBeGreaterThanOrEqual(15);
  }, 180_000);
});
