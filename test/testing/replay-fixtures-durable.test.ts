import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createMemoryStore, createRuntime, createTaskAdmin, sleep, step, tool } from "mcp-yield";
import { replayFixtures } from "mcp-yield/testing";
import { testKey } from "../support/keys.js";
import { closedAfterEach, until } from "../support/instances.js";

// Issue 56 (its `replayFixtures` point): a finished durable task's journal — a sleep, a retried
// step's delays — exported and replayed against the unchanged code is green (it failed: every
// recorded sleep read as not yet over, "the code now ends sleep there"); against code whose sleep
// moved, red.

const open = closedAfterEach();
const TASKS = { clientCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } };
let attempts = 0;
const durable = (sleepFirst: boolean) =>
  tool({
    name: "durable",
    description: "",
    input: z.object({}),
    task: "required",
    async *run() {
      if (sleepFirst) yield* sleep(20);
      const got = yield* step(
        "flaky",
        () => {
          if (++attempts % 3 !== 0) throw new Error("503");
          return "ok";
        },
        { retry: { attempts: 3, initialMs: 10 } },
      );
      if (!sleepFirst) yield* sleep(20);
      return got;
    },
  });

describe("replayFixtures on durable tasks", () => {
  it("a task's journal with a sleep and retry delays replays green on unchanged code, red where the sleep moved", async () => {
    const store = createMemoryStore();
    const runtime = createRuntime({ state: { keys: [testKey("rf", 9)] }, store, onError: () => {}, tasks: { sweepMs: 10, leaseMs: 500 } });
    open.push(runtime);
    const def = durable(true);
    runtime.define([def]);
    const { taskId } = (await runtime.callTool(def, { name: "durable", arguments: {} }, TASKS)) as { taskId: string };
    await until(async () => (((await runtime.getTask({ taskId }, TASKS)) as unknown as { status: string }).status === "completed" ? true : undefined));
    const fixture = await createTaskAdmin({ store }).exportFixture(taskId);
    expect(fixture?.records.filter(([fp]) => fp === "Z")).toHaveLength(3); // the sleep and two retry delays
    const green = await replayFixtures([def], [{ file: "task.json", fixture }]);
    expect(green.failures).toEqual([]);
    const moved = await replayFixtures([durable(false)], [{ file: "task.json", fixture }]);
    expect(moved.failures).toHaveLength(1);
  });
});
