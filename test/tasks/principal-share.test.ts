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

  it("clears the expired tasks a full share holds in one store operation, not one each", async () => {
    const time = manualClock(1_800_000_000_000);
    const store = await make();
    open.push(store);
    const calls = new Map<string, number>();
    let counting = false;
    const counted = new Proxy(store, {
      get: (target, p) => {
        const value = target[p as keyof typeof target];
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          if (counting) calls.set(String(p), (calls.get(String(p)) ?? 0) + 1);
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const limit = 60;
    const runtime = createRuntime({ state: { keys, clock: time.now }, store: counted, clock: time.now, tasks: { maxPerPrincipal: limit, ttlMs: 1000, sweepMs: 3_600_000 } });
    runtime.define([quickTask]);
    open.push(runtime);
    const start = () => runtime.callTool(quickTask, { name: "quick", arguments: {} }, { clientCapabilities: caps, principal: "carol" });
    for (let i = 0; i < limit; i++) await start();
    await runtime.idle();
    await expect(start()).rejects.toMatchObject({ data: { reason: "principal_task_limit" } });
    time.advance(1001); // all of them expired; the sweeper (an hour away) has forgotten none
    counting = true;
    await expect(start()).resolves.toMatchObject({ resultType: "task" });
    counting = false;
    await runtime.idle();
    // One by one, the 60 expired entries took 60 round trips (1,000 at the default limit).
    expect(calls.get("unschedule") ?? 0).toBe(0);
    const operations = [...calls.values()].reduce((a, b) => a + b, 0);
    expect(operations, JSON.stringify(Object.fromEntries(calls))).toBeLessThan(20);
  });
});
