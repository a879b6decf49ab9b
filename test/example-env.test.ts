import { describe, expect, it } from "vitest";
import { taskOptionsFromEnv } from "../examples/app.js";

// The example server's task timing from its environment (README "Tasks across instances").

describe("taskOptionsFromEnv", () => {
  it("reads the lease, lifetime and suggested poll interval, and leaves the unset ones to the defaults", () => {
    expect(taskOptionsFromEnv({ MCP_YIELD_TASK_LEASE_MS: "3000", MCP_YIELD_TASK_TTL_MS: "60000", MCP_YIELD_TASK_POLL_MS: "25" })).toEqual({ leaseMs: 3000, ttlMs: 60000, pollIntervalMs: 25 });
    expect(taskOptionsFromEnv({ MCP_YIELD_TASK_POLL_MS: " " })).toEqual({});
  });

  it("refuses what is not a positive integer of milliseconds, naming the variable", () => {
    for (const bad of ["0", "-5", "1.5", "soon"]) expect(() => taskOptionsFromEnv({ MCP_YIELD_TASK_POLL_MS: bad })).toThrow(/MCP_YIELD_TASK_POLL_MS must be a positive integer of milliseconds/);
  });
});
