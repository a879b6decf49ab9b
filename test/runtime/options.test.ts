import { describe, expect, it } from "vitest";
import { createRuntime } from "mcp-yield";
import { resolveRuntimeOptions, resolveTaskOptions } from "../../src/runtime/options.js";
import { testKey } from "../support/keys.js";

// Every default createRuntime applies comes from runtime/options.ts, and a bad option is refused
// when the runtime is made — not later, at the first task or the first spilled journal.

describe("runtime options", () => {
  it("fill in the documented defaults", () => {
    const resolved = resolveRuntimeOptions({ state: { keys: [testKey()] } }, 600_000);
    expect(resolved).toMatchObject({
      liveCalls: 10_000,
      liveCallBytes: 16 * 1024 * 1024,
      maxStoreBytesPerPrincipal: 16 * 1024 * 1024,
      spillBytes: 16 * 1024,
      singleUse: true,
      roundLeaseMs: 15_000,
      verifyReplay: false,
      limits: { maxRounds: 64, maxInputResponses: 64, maxInputResponseBytes: 256 * 1024, maxInputResponseDepth: 32, maxArgumentBytes: 1024 * 1024, maxArgumentDepth: 64 },
      tasks: { ttlMs: 3_600_000, pollIntervalMs: 500, leaseMs: 10_000, sweepMs: 5000, cancelGraceMs: 2000, maxPerPrincipal: 1000 },
      // Shares count over the longer of a task's life and a state's (and the skew margin).
      principalWindowMs: 3_600_000,
    });
    expect(() => resolveRuntimeOptions({ state: { keys: [testKey()] }, roundLeaseMs: 0 }, 600_000)).toThrow(/roundLeaseMs/);
    expect(resolveTaskOptions({ leaseMs: 400 }).sweepMs).toBe(200);
    expect(resolveRuntimeOptions({ state: { keys: [testKey()] }, tasks: { ttlMs: 1000 } }, 600_000).principalWindowMs).toBe(660_000);
  });

  it("refuse a bad option when the runtime is made, naming it", () => {
    const state = { keys: [testKey()] };
    expect(() => createRuntime({ state, tasks: { leaseMs: 0 } })).toThrow(/tasks\.leaseMs/);
    expect(() => createRuntime({ state, tasks: { ttlMs: 1.5 } })).toThrow(/tasks\.ttlMs/);
    expect(() => createRuntime({ state, spillBytes: -1 })).toThrow(/spillBytes/);
    expect(() => createRuntime({ state, liveCalls: Number.NaN })).toThrow(/liveCalls/);
    expect(() => createRuntime({ state, limits: { maxRounds: 0 } })).toThrow(/limits\.maxRounds/);
  });
});
