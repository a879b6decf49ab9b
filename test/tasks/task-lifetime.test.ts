import { describe, expect, it } from "vitest";
import { z } from "zod";
import { tool, waitForSignal } from "mcp-yield";
import { closedAfterEach, until } from "../support/instances.js";
import { storesOf } from "../support/stores.js";
import { getTask, recordOf, signalPair, TASKS_INFO, waitingApproval } from "../support/signal-tasks.js";

// No task is lost to its lifetime (issue 57, point 7): a task still waiting when its lifetime
// ends is failed then (task_lifetime_ended) and that outcome stays readable — never "Unknown
// task" for a task that existed — whether a tasks/get or a sweeper finds it first; a wait whose
// timeout falls past the lifetime is an author error naming the fix when it is reached.
// On memory, Redis and PostgreSQL, read where the task parked (resumed) and elsewhere (replayed).

const { stores } = storesOf("task-lifetime");
const open = closedAfterEach();
// Short enough for a test, long enough for a loaded machine to park the task first.
const TTL = 1500;

type Failed = { status: string; statusMessage?: string; error?: { data?: { reason?: string } } };

describe.each(stores)("the end of a task's lifetime on %s", (name, make) => {
  it.each(["resumed", "replayed"] as const)("a task waiting with no timeout ends failed at its lifetime, read by tasks/get, and stays readable (%s)", async (how) => {
    const { store, a, via } = await signalPair(name, make, open, how, { ttlMs: TTL });
    const { taskId } = await waitingApproval(a.runtime, store);
    const failed = (await until(async () => {
      const t = (await getTask(via.runtime, taskId)) as Failed;
      return t.status === "working" ? undefined : t;
    }, 10_000)) as Failed;
    expect(failed.status).toBe("failed");
    expect(failed.statusMessage).toMatch(/end of its lifetime .* while waiting for signal "approval"/);
    expect(failed.error?.data?.reason).toBe("task_lifetime_ended");
    // Read again later, on either instance: the same outcome, not an unknown task.
    await new Promise((r) => setTimeout(r, 200));
    for (const r of [a.runtime, via.runtime]) expect(((await getTask(r, taskId)) as Failed).status).toBe("failed");
    expect((await recordOf(store, taskId)).keptUntil).toBeGreaterThan(Date.now());
  });

  it("nobody polling: a sweeper ends the task at its lifetime", async () => {
    const { store, a } = await signalPair(name, make, open, "resumed", { ttlMs: TTL });
    const { taskId } = await waitingApproval(a.runtime, store);
    const ended = await until(async () => {
      const r = await recordOf(store, taskId);
      return r.status === "failed" ? r : undefined;
    }, 10_000);
    expect((ended.error as { data?: { reason?: string } }).data?.reason).toBe("task_lifetime_ended");
    expect(((await getTask(a.runtime, taskId)) as Failed).status).toBe("failed");
  });

  it("a wait whose timeout falls past the lifetime is an author error naming the fix", async () => {
    const tooLong = tool({
      name: "too_long",
      description: "",
      input: z.object({}),
      task: "required",
      async *run() {
        const got = yield* waitForSignal("approval", z.object({ approved: z.boolean() }), { timeoutMs: 24 * 3600_000 });
        return got.status;
      },
    });
    const { a } = await signalPair(name, make, open, "resumed", { tools: [tooLong], ttlMs: 60_000 });
    const { taskId } = (await a.runtime.callTool(tooLong, { name: "too_long", arguments: {} }, TASKS_INFO)) as { taskId: string };
    const done = await until(async () => {
      const t = await getTask(a.runtime, taskId);
      return t.status === "working" ? undefined : t;
    });
    expect(done.status).toBe("completed");
    expect(done.result?.isError).toBe(true);
    expect(a.errors.map(String).join("\n")).toMatch(/waitForSignal\("approval"\) with a timeout at .* passes the task's lifetime .*raise tasks.ttlMs or wait less/);
  });
});
