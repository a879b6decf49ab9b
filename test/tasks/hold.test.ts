import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createMemoryStore, createRuntime, createTaskAdmin, DivergenceError, type Runtime, StepFailedError, type Store, sleep, step, tool, type ToolDefinition, waitForSignal } from "mcp-yield";
import { closedAfterEach, until } from "../support/instances.js";
import { testKey } from "../support/keys.js";

// Issue 56, point 1: a task whose step runs out of attempts, or whose replay diverges after a
// deploy, is held for an operator (working, "needs attention: <reason>") instead of ending;
// `retry` goes on from the failed step (completed steps are not run again, the task keeps its
// id), `fail` ends it. On two instances sharing a store: the one that retries the task is
// whichever sweeps next, so it replays the journal (no live generator survives a hold).

const keys = [testKey("h", 29)];
const info = { clientCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } };
const open = closedAfterEach("hold");

function instance(store: Store, defs: ToolDefinition[], ttlMs?: number): { runtime: Runtime; errors: unknown[] } {
  const errors: unknown[] = [];
  const runtime = createRuntime({ state: { keys }, store, onError: (e) => errors.push(e), tasks: { leaseMs: 400, sweepMs: 20, pollIntervalMs: 100, ...(ttlMs !== undefined ? { ttlMs } : {}) } });
  runtime.define(defs);
  open.push(runtime);
  return { runtime, errors };
}

type Task = { status: string; statusMessage?: string; error?: { message: string; data?: { reason?: string } }; result?: { content: Array<{ text: string }>; isError?: boolean } };
const get = async (r: Runtime, taskId: string) => (await r.getTask({ taskId }, info)) as unknown as Task;
const start = async (r: Runtime, def: ToolDefinition, args: Record<string, unknown> = {}) => ((await r.callTool(def, { name: def.name, arguments: args }, info)) as { taskId: string }).taskId;
const reaches = (r: Runtime, taskId: string, ok: (t: Task) => boolean) =>
  until(async () => {
    const t = await get(r, taskId);
    return ok(t) ? t : undefined;
  });
const isHeld = (t: Task) => t.status === "working" && (t.statusMessage ?? "").startsWith("needs attention: ");

/** A payment tool whose card service is down until `service.up`; every run of each step logged. */
function payment(service: { up: boolean }, runs: string[], onTaskFailure?: "hold" | "fail") {
  return tool({
    name: "pay",
    description: "",
    input: z.object({ amount: z.number() }),
    task: "required",
    ...(onTaskFailure !== undefined ? { onTaskFailure } : {}),
    async *run({ amount }, ctx) {
      const quote = yield* step("quote", () => {
        runs.push("quote");
        return amount * 2;
      });
      const receipt = yield* step(
        "charge",
        (_signal, attempt) => {
          runs.push(`charge#${attempt} ${ctx.idempotencyKey("charge")}`);
          if (!service.up) throw new Error("card service down");
          return `R-${quote}`;
        },
        { retry: { attempts: 2, initialMs: 5 } },
      );
      yield* sleep(5);
      return `${receipt} mailed`;
    },
  });
}

describe("a task held for an operator", () => {
  it("a step out of attempts holds the task (working, needs attention); retry goes on from that step on another instance and completes under the same id", async () => {
    const store = createMemoryStore();
    const service = { up: false };
    const runs: string[] = [];
    const a = instance(store, [payment(service, runs)]);
    const taskId = await start(a.runtime, payment(service, runs), { amount: 60 });
    const held = await reaches(a.runtime, taskId, isHeld);
    expect(held.statusMessage).toBe('needs attention: step("charge") failed after 2 attempts: Error: card service down');
    // Held stays held: nobody runs it, no sweep wakes it.
    await new Promise((r) => setTimeout(r, 150));
    expect(isHeld(await get(a.runtime, taskId))).toBe(true);
    expect(runs.filter((r) => r.startsWith("charge"))).toHaveLength(2);
    expect(a.errors.filter((e) => e instanceof StepFailedError)).toHaveLength(1);
    const admin = createTaskAdmin({ store });
    const shown = await admin.show(taskId);
    expect(shown!.state).toMatch(/^needs attention since \S+Z: step\("charge"\) failed after 2 attempts: Error: card service down \(tasks retry or tasks fail\)$/);

    // The dependency is fixed; the instance that held it goes away, another retries it.
    service.up = true;
    await a.runtime.close();
    const b = instance(store, [payment(service, runs)]);
    expect(await admin.retry(taskId)).toBe("working");
    const done = await reaches(b.runtime, taskId, (t) => t.status === "completed");
    expect(done.result!.content[0]!.text).toBe("R-120 mailed");
    // `quote` ran once; `charge` started over at attempt 1 under the key of every attempt.
    expect(runs.filter((r) => r === "quote")).toHaveLength(1);
    const charges = runs.filter((r) => r.startsWith("charge"));
    expect(charges.map((c) => c.split(" ")[0])).toEqual(["charge#1", "charge#2", "charge#1"]);
    expect(new Set(charges.map((c) => c.split(" ")[1])).size).toBe(1);
    expect(b.errors).toEqual([]);
  });

  it("retried on the instance that held it, a step that fails again is held again; fail ends it with the operator's reason", async () => {
    const store = createMemoryStore();
    const runs: string[] = [];
    const { runtime } = instance(store, [payment({ up: false }, runs)]);
    const admin = createTaskAdmin({ store });
    const taskId = await start(runtime, payment({ up: false }, runs), { amount: 1 });
    await reaches(runtime, taskId, isHeld);
    await admin.retry(taskId);
    await until(async () => (runs.filter((r) => r.startsWith("charge")).length === 4 ? true : undefined));
    const again = await reaches(runtime, taskId, isHeld);
    expect(again.statusMessage).toContain('step("charge") failed after 2 attempts');
    expect(runs.filter((r) => r === "quote")).toHaveLength(1);
    expect(await admin.fail(taskId, "refunded by hand")).toBe("failed");
    const failed = await get(runtime, taskId);
    expect(failed).toMatchObject({ status: "failed", statusMessage: "refunded by hand", error: { message: "refunded by hand", data: { reason: "failed_by_operator" } } });
    // An ended task is not held: neither retried nor failed again; an unknown one is undefined.
    await expect(admin.retry(taskId)).rejects.toThrow(/is not held for an operator \(it is failed\): only a held task can be retried/);
    await expect(admin.fail(taskId)).rejects.toThrow(/only a held task can be failed — cancel it instead/);
    expect(await admin.retry("no-such-task")).toBeUndefined();
    await expect(admin.fail(taskId, " ")).rejects.toThrow(/reason must be a non-empty string/);
    // By filter: the same checks, and at least one condition.
    await expect(admin.bulk("fail", { tool: "pay" }, { reason: "" })).rejects.toThrow(/reason must be a non-empty string/);
    await expect(admin.bulk("retry", {})).rejects.toThrow(/give at least one condition/);
    expect(await admin.bulk("retry", { tool: "pay" })).toMatchObject({ matched: 1, changed: 0, skipped: [{ taskId, why: "not held for an operator" }] });
  });

  it("a held task is cancelled at once; fail without a reason says why it was held", async () => {
    const store = createMemoryStore();
    const { runtime } = instance(store, [payment({ up: false }, [])]);
    const admin = createTaskAdmin({ store });
    const one = await start(runtime, payment({ up: false }, []), { amount: 1 });
    const two = await start(runtime, payment({ up: false }, []), { amount: 2 });
    await reaches(runtime, one, isHeld);
    await reaches(runtime, two, isHeld);
    expect(await admin.cancel(one)).toBe("cancelled");
    await expect(admin.retry(one)).rejects.toThrow(/not held/);
    await admin.fail(two);
    expect((await get(runtime, two)).statusMessage).toBe('Failed by an operator: step("charge") failed after 2 attempts: Error: card service down');
  });

  it("a held task still ends at its lifetime, saying it was held and why", async () => {
    const store = createMemoryStore();
    const { runtime } = instance(store, [payment({ up: false }, [])], 1500);
    const taskId = await start(runtime, payment({ up: false }, []), { amount: 1 });
    await reaches(runtime, taskId, isHeld);
    const ended = await until(async () => {
      const t = await get(runtime, taskId);
      return t.status === "failed" ? t : undefined;
    }, 10_000);
    expect(ended.error).toMatchObject({
      message: 'The task reached the end of its lifetime (ttlMs 1500) while held for an operator (step("charge") failed after 2 attempts: Error: card service down)',
      data: { reason: "task_lifetime_ended" },
    });
  });

  it('onTaskFailure: "fail" ends the task as before: completed with an error result', async () => {
    const store = createMemoryStore();
    const { runtime, errors } = instance(store, [payment({ up: false }, [], "fail")]);
    const taskId = await start(runtime, payment({ up: false }, [], "fail"), { amount: 1 });
    const done = await reaches(runtime, taskId, (t) => t.status === "completed");
    expect(done.result!.isError).toBe(true);
    expect(errors.filter((e) => e instanceof StepFailedError)).toHaveLength(1);
    expect(() =>
      tool({
        name: "x",
        description: "",
        input: z.object({}),
        onTaskFailure: "later" as "hold",
        *run() {
          return "";
        },
      }),
    ).toThrow('tool "x": onTaskFailure must be "hold" or "fail"');
  });

  it("a replay that diverges after a deploy holds the task; retried after the fix is deployed, it completes — each step once", async () => {
    const store = createMemoryStore();
    const runs: string[] = [];
    let token = "";
    const approval = (stepName: string) =>
      tool({
        name: "approval",
        description: "",
        input: z.object({}),
        task: "required",
        async *run(_i, ctx) {
          const quote = yield* step(stepName, () => {
            runs.push(stepName);
            return 7;
          });
          token = ctx.signalToken("go");
          const go = yield* waitForSignal("go", z.boolean());
          const sent = yield* step("send", () => {
            runs.push("send");
            return "sent";
          });
          return `${quote} ${go.status === "received" ? go.value : "timeout"} ${sent}`;
        },
      });
    const v1 = instance(store, [approval("quote")]);
    const taskId = await start(v1.runtime, approval("quote"));
    await until(async () => token || undefined);
    await v1.runtime.close();
    // A deploy renamed the step (a bug): the signal wakes the task there, its replay diverges.
    const bad = instance(store, [approval("price")]);
    await bad.runtime.signal(token, true);
    const held = await reaches(bad.runtime, taskId, isHeld);
    expect(held.statusMessage).toMatch(/^needs attention: journal_divergence: at effect #0 the journal recorded step\("quote"\) but the code now runs step\("price"\)/);
    expect(bad.errors.some((e) => e instanceof DivergenceError)).toBe(true);
    await bad.runtime.close();
    // The fix deployed, the operator retries: the signal's value is kept, each step ran once.
    const fixed = instance(store, [approval("quote")]);
    await createTaskAdmin({ store }).retry(taskId);
    const done = await reaches(fixed.runtime, taskId, (t) => t.status === "completed");
    expect(done.result!.content[0]!.text).toBe("7 true sent");
    expect(runs).toEqual(["quote", "send"]);
  });

  it("a task of a retired version is held, not failed, and fails by the operator's word", async () => {
    const store = createMemoryStore();
    let token = "";
    const def = (version: string, retiredVersions: string[] = []) =>
      tool({
        name: "versioned",
        description: "",
        input: z.object({}),
        task: "required",
        version,
        retiredVersions,
        async *run(_i, ctx) {
          token = ctx.signalToken("go");
          yield* waitForSignal("go", z.boolean());
          return "done";
        },
      });
    const v1 = instance(store, [def("1")]);
    const taskId = await start(v1.runtime, def("1"));
    await until(async () => token || undefined);
    await v1.runtime.close();
    const v2 = instance(store, [def("2", ["1"])]);
    await v2.runtime.signal(token, true);
    const held = await reaches(v2.runtime, taskId, isHeld);
    expect(held.statusMessage).toBe('needs attention: journal_divergence: The tool "versioned" changed version (from "1" to "2") while the task ran');
    expect(await createTaskAdmin({ store }).fail(taskId)).toBe("failed");
  });
});
