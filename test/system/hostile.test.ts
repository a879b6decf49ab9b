import { describe, expect, it } from "vitest";
import { createRuntime } from "mcp-yield";
import { runHostile } from "../../scripts/stress/hostile.js";
import { testKey } from "../support/keys.js";

// Scaled down for CI; `npm run stress` runs the full count.
describe("hostile wire", () => {
  it("every response is a schema-valid result or a JSON-RPC error with the request id; nothing misdelivered", async () => {
    const keys = [testKey("h", 9)];
    const errors: unknown[] = [];
    const runtime = createRuntime({ state: { keys }, onError: (e) => errors.push(e) });
    const report = await runHostile({ runtime, keys, runs: 400, seed: 7 });
    expect(report.bad).toEqual([]);
    expect(report.misdelivered).toEqual([]);
    expect(report.results + report.rpcErrors).toBe(report.requests);
    expect(report.rpcErrors).toBeGreaterThan(50);
    expect(report.results).toBeGreaterThan(50);
    // Hostile input is the client's fault: nothing reaches the server's error hook.
    expect(errors).toEqual([]);
  }, 120_000);
});
