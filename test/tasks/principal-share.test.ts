import { describe, expect, it } from "vitest";
import { createRuntime } from "mcp-yield";
import { closedAfterEach } from "../support/instances.js";
import { testKey } from "../support/keys.js";
import { quickTask } from "../support/quick-task.js";
import { storesOf } from "../support/stores.js";
import { manualClock } from "../support/time.js";

// A principal's share of tasks (tasks.maxPerPrincipal) on every store: PostgreSQL counts it in
// the statement that adds the task (Store.addIndexed with a limit), Redis counts it first. A
// start refused at the limit is refused for the tasks, never for bytes it did not keep: its
// charge against the principal's byte share is given back.

const { stores } = storesOf("principal-share");
const open = closedAfterEach();
const keys = [testKey("ps", 41)];
const caps = { extensions: { "io.modelcontextprotocol/tasks": {} } };

describe.each(stores)("a principal's share of tasks on %s", (_name, make) => {
  it("refuses the start past the limit (principal_task_limit), repeatedly, without using up the byte share; others start; expired tasks free it", async () => {
    const time = manualClock(1_800_000_000_000);
    const store = await make();
    open.push(store);
    // About four task records of bytes: twenty refused starts charged and kept would pass it.
    const runtime = createRuntime({ state: { keys, clock: time.now }, store, clock: time.now, maxStoreBytesPerPrincipal: 4096, tasks: { maxPerPrincipal: 2, ttlMs: 1000 } });
    runtime.define([quickTask]);
    open.push(runtime);
    const start = (principal: string) => runtime.callTool(quickTask, { name: "quick", arguments: {} }, { clientCapabilities: caps, principal });
    await start("alice");
    await start("alice");
    for (let i = 0; i < 20; i++) await expect(start("alice")).rejects.toMatchObject({ code: -32603, data: { reason: "principal_task_limit", limit: 2 } });
    await expect(start("bob")).resolves.toMatchObject({ resultType: "task" });
    await runtime.idle();
    time.advance(1001); // alice's two tasks have expired with their ttlMs
    await expect(start("alice")).resolves.toMatchObject({ resultType: "task" });
    await runtime.idle();
  });
});
