import { describe, expect, it } from "vitest";
import { z } from "zod";
import { elicit, runAsTask, sleep, step, tool, waitForSignal } from "mcp-yield";
import { accept, signalTimeout, simulate } from "mcp-yield/testing";
import { awaitApproval, flakyFetch, remindLater } from "../../examples/tools/durable.js";

// simulate() follows a call into its task: asks answered through tasks/update, sleeps, retry
// delays and timeouts passed at once on a fake clock, signals scripted, step failures scripted —
// and the finished task replayed from its journal, the result compared.

const tasks = { elicitation: {}, extensions: { "io.modelcontextprotocol/tasks": {} } };

describe("simulate follows tasks", () => {
  it("a durable sleep passes at once on the fake clock", async () => {
    const sim = await simulate(remindLater, { seconds: 3000 }, {}, { capabilities: tasks });
    expect(sim.result.content).toEqual([{ type: "text", text: "reminded" }]);
    expect(sim.task).toMatchObject({ statuses: ["working", "completed"], sleptMs: 3_000_000, signals: 0 });
  });

  it("scripted signals: a value, a timeout, and a wait nobody scripted (named in the error)", async () => {
    const approved = await simulate(awaitApproval, {}, {}, { capabilities: tasks, signals: { approval: { approved: true } } });
    expect(approved.result.content).toEqual([{ type: "text", text: "approved" }]);
    expect(approved.task?.signals).toBe(1);
    const timedOut = await simulate(awaitApproval, {}, {}, { capabilities: tasks, signals: { approval: signalTimeout } });
    expect(JSON.stringify(timedOut.result.content)).toMatch(/timed out/);
    expect(timedOut.task?.sleptMs).toBe(60_000);
    const forever = tool({
      name: "forever",
      description: "",
      input: z.object({}),
      task: "required",
      async *run() {
        yield* waitForSignal("never", z.string());
        return "x";
      },
    });
    await expect(simulate(forever, {}, {}, { capabilities: tasks })).rejects.toThrow(/waits for signal "never".*no value is scripted/);
  });

  it("scripted step failures drive retries (the delays pass on the fake clock)", async () => {
    const sim = await simulate(flakyFetch, {}, {}, { capabilities: tasks });
    expect(sim.result.content).toEqual([{ type: "text", text: "attempts: 3" }]);
    expect(sim.task?.sleptMs).toBe(500 + 1000);
    const worse = await simulate(flakyFetch, {}, {}, { capabilities: tasks, failSteps: { fetch: 4 } });
    expect(worse.result.content).toEqual([{ type: "text", text: "attempts: 5" }]);
    await expect(simulate(flakyFetch, {}, {}, { capabilities: tasks, failSteps: { fetch: 5 } })).rejects.toThrow(
      // Said as what it is: the task's retries ran out (not "round 0", not "not deterministic").
      /^tools\/call flaky_fetch failed in its task \S+: its retries ran out — step\("fetch"\) failed after 5 attempts: Error: simulated failure of step "fetch" \(attempt 5\)$/,
    );
  });

  it("a call that becomes a task at runAsTask(), with an ask inside the task answered through tasks/update", async () => {
    const become = tool({
      name: "become",
      description: "",
      input: z.object({}),
      task: "optional",
      taskFrom: "runAsTask",
      async *run() {
        const a = yield* elicit("Start?", z.object({ ok: z.boolean() }), { key: "start" });
        yield* runAsTask("working on it");
        yield* sleep(60_000);
        const b = yield* elicit("Publish?", z.object({ ok: z.boolean() }), { key: "publish" });
        return `${a.action} ${b.action}`;
      },
    });
    const sim = await simulate(become, {}, { start: accept({ ok: true }), publish: accept({ ok: true }) }, { capabilities: tasks });
    expect(sim.result.content).toEqual([{ type: "text", text: "accept accept" }]);
    expect(sim.rounds).toHaveLength(1);
    expect(sim.task?.statuses).toContain("input_required");
  });

  it("the finished task is replayed from its journal: code that is not deterministic is named", async () => {
    let runs = 0;
    const drifting = tool({
      name: "drifting",
      description: "",
      input: z.object({}),
      task: "required",
      async *run() {
        runs++;
        yield* step("a", () => 1);
        if (runs === 1) yield* step("b", () => 2); // taken on the first run only
        return "done";
      },
    });
    await expect(simulate(drifting, {}, {}, { capabilities: tasks })).rejects.toThrow(/the task is not deterministic: replayed from its journal/);
  });
});
