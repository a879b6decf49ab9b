import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createMemoryStore, createRuntime, elicit, ProtocolError, type Runtime, runAsTask, step, tool, toolError, all } from "mcp-yield";
import { getTaskResult, createTaskResult } from "mcp-yield/wire";
import { manualClock } from "../support/time.js";
import { testKey } from "../support/keys.js";
import { quickTask } from "../support/quick-task.js";

const keys = [testKey("k", 7)];
const TASKS = { extensions: { "io.modelcontextprotocol/tasks": {} } };
const caps = { elicitation: {}, ...TASKS };
const runtimes: Runtime[] = [];
const make = (options: Parameters<typeof createRuntime>[0] = { state: { keys } }) => {
  const r = createRuntime({ onError: () => {}, ...options });
  runtimes.push(r);
  return r;
};
afterEach(async () => {
  for (const r of runtimes.splice(0)) await r.close();
});
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(t);
        reject(signal.reason);
      },
      { once: true },
    );
  });
async function until(runtime: Runtime, taskId: string, done: (t: Record<string, unknown>) => boolean, info = { clientCapabilities: caps }) {
  for (let i = 0; i < 200; i++) {
    const t = (await runtime.getTask({ taskId }, info)) as unknown as Record<string, unknown>;
    if (done(t)) return t;
    await sleep(20);
  }
  throw new Error("task did not settle");
}

describe("tasks", () => {
  it("a task from the start: CreateTaskResult, then tasks/get until completed with the result inlined", async () => {
    const runtime = make();
    let runs = 0;
    const slow = tool({
      name: "slow",
      description: "",
      input: z.object({ ms: z.number() }),
      task: "optional",
      async *run({ ms }) {
        const out = yield* step("sleep", async (signal) => {
          runs++;
          await sleep(ms, signal);
          return `slept ${ms}`;
        });
        return out;
      },
    });
    const created = await runtime.callTool(slow, { name: "slow", arguments: { ms: 50 } }, { clientCapabilities: caps });
    expect(createTaskResult.safeParse(created).success).toBe(true);
    expect(created).toMatchObject({ resultType: "task", status: "working", ttlMs: 3_600_000, pollIntervalMs: 500 });
    const taskId = (created as { taskId: string }).taskId;
    const first = await runtime.getTask({ taskId }, { clientCapabilities: caps });
    expect(getTaskResult.safeParse(first).success).toBe(true);
    const done = await until(runtime, taskId, (t) => t.status === "completed");
    expect(done.result).toEqual({ resultType: "complete", content: [{ type: "text", text: "slept 50" }] });
    expect(getTaskResult.safeParse(done).success).toBe(true);
    expect(runs).toBe(1);
    // Without the extension the same tool runs in the foreground.
    const plain = await runtime.callTool(slow, { name: "slow", arguments: { ms: 1 } }, { clientCapabilities: { elicitation: {} } });
    expect(plain).toEqual({ resultType: "complete", content: [{ type: "text", text: "slept 1" }] });
  });

  it("asks inside a task: input_required, partial answers, keys unique for life, unknown keys ignored", async () => {
    const runtime = make();
    const two = tool({
      name: "two",
      description: "",
      input: z.object({}),
      task: "required",
      *run() {
        const r = yield* all({ name: elicit("name?", z.object({ name: z.string() }), { key: "name" }), ok: elicit("ok?", z.object({ confirm: z.boolean() }), { key: "ok" }) });
        const again = yield* elicit("sure?", z.object({ confirm: z.boolean() }), { key: "ok" }); // the same key again
        return `${r.name.action === "accept" ? r.name.content.name : "-"} ${r.ok.action} ${again.action}`;
      },
    });
    const info = { clientCapabilities: caps };
    const { taskId } = (await runtime.callTool(two, { name: "two", arguments: {} }, info)) as { taskId: string };
    let t = await until(runtime, taskId, (x) => x.status === "input_required");
    expect(Object.keys(t.inputRequests as object).sort()).toEqual(["name", "ok"]);
    await runtime.updateTask({ taskId, inputResponses: { name: { action: "accept", content: { name: "Ada" } }, bogus: { x: 1 } } }, info);
    t = (await runtime.getTask({ taskId }, info)) as unknown as Record<string, unknown>;
    expect(t.status).toBe("input_required");
    expect(Object.keys(t.inputRequests as object)).toEqual(["ok"]); // the answered key is gone at once
    await runtime.updateTask({ taskId, inputResponses: { ok: { action: "accept", content: { confirm: true } } } }, info);
    t = await until(runtime, taskId, (x) => x.status === "input_required" && !("ok" in (x.inputRequests as object)));
    expect(Object.keys(t.inputRequests as object)).toEqual(["ok~2"]); // "ok" was used: never again in this task
    await runtime.updateTask({ taskId, inputResponses: { "ok~2": { action: "decline" } } }, info);
    t = await until(runtime, taskId, (x) => x.status === "completed");
    expect((t.result as { content: Array<{ text: string }> }).content[0]!.text).toBe("Ada accept decline");
  });

  it("MRTR first, then a task from runAsTask(): round 1 asks, round 2 answers with the task", async () => {
    const runtime = make();
    const hello = tool({
      name: "hello",
      description: "",
      input: z.object({}),
      task: "required",
      taskFrom: "runAsTask",
      *run(_i, ctx) {
        const who = yield* elicit("name?", z.object({ name: z.string() }), { key: "user_name" });
        const key1 = ctx.idempotencyKey("x");
        yield* runAsTask("Greeting");
        const key2 = ctx.idempotencyKey("x");
        const greeting = yield* step("greet", () => `Hello, ${who.action === "accept" ? who.content.name : "?"}!`);
        return `${greeting} ${key1 === key2}`;
      },
    });
    const info = { clientCapabilities: caps };
    const r1 = (await runtime.callTool(hello, { name: "hello", arguments: {} }, info)) as { resultType: string; requestState: string };
    expect(r1.resultType).toBe("input_required");
    const r2 = (await runtime.callTool(
      hello,
      { name: "hello", arguments: {}, requestState: r1.requestState, inputResponses: { user_name: { action: "accept", content: { name: "Alice" } } } },
      info,
    )) as Record<string, unknown>;
    expect(r2).toMatchObject({ resultType: "task", status: "working", statusMessage: "Greeting" });
    expect("requestState" in r2).toBe(false);
    const done = await until(runtime, r2.taskId as string, (x) => x.status === "completed");
    expect((done.result as { content: Array<{ text: string }> }).content[0]!.text).toBe("Hello, Alice! true");
  });

  it("a tool error completes with isError; a protocol error fails; tasks/* need the extension; another principal sees nothing", async () => {
    const runtime = make();
    const failing = tool({
      name: "failing",
      description: "",
      input: z.object({}),
      task: "required",
      *run() {
        return toolError("nope");
      },
    });
    const broken = tool({
      name: "broken",
      description: "",
      input: z.object({}),
      task: "required",
      *run() {
        throw new ProtocolError(-32603, "boom", { reason: "crash" });
      },
    });
    const info = { clientCapabilities: caps, principal: "alice" };
    const a = (await runtime.callTool(failing, { name: "failing", arguments: {} }, info)) as { taskId: string };
    const ta = await until(runtime, a.taskId, (x) => x.status === "completed", info);
    expect(ta.result).toMatchObject({ isError: true, resultType: "complete" });
    const b = (await runtime.callTool(broken, { name: "broken", arguments: {} }, info)) as { taskId: string };
    const tb = await until(runtime, b.taskId, (x) => x.status === "failed", info);
    expect(tb.error).toEqual({ code: -32603, message: "boom", data: { reason: "crash" } });
    expect("result" in tb).toBe(false);
    await expect(runtime.callTool(failing, { name: "failing", arguments: {} }, { clientCapabilities: { elicitation: {} } })).rejects.toMatchObject({
      code: -32021,
      data: { requiredCapabilities: TASKS },
    });
    await expect(runtime.getTask({ taskId: "nope" }, { clientCapabilities: {} })).rejects.toMatchObject({ code: -32021 });
    await expect(runtime.getTask({ taskId: a.taskId }, { clientCapabilities: caps, principal: "eve" })).rejects.toMatchObject({ code: -32602, data: { reason: "unknown_task" } });
    await expect(runtime.getTask({ taskId: "nope" }, info)).rejects.toMatchObject({ code: -32602 });
  });

  it("cancel: cooperative through ctx.signal, cancelled within the grace, idempotent on a terminal task", async () => {
    const runtime = make({ state: { keys }, tasks: { cancelGraceMs: 300 } });
    const slow = tool({
      name: "slow",
      description: "",
      input: z.object({}),
      task: "optional",
      async *run() {
        yield* step("sleep", (signal) => sleep(60_000, signal));
        return "never";
      },
    });
    const stubborn = tool({
      name: "stubborn",
      description: "",
      input: z.object({}),
      task: "optional",
      async *run() {
        yield* step("sleep", () => sleep(1500));
        return "late";
      },
    });
    const info = { clientCapabilities: caps };
    for (const def of [slow, stubborn]) {
      const { taskId } = (await runtime.callTool(def, { name: def.name, arguments: {} }, info)) as { taskId: string };
      const started = Date.now();
      expect(await runtime.cancelTask({ taskId }, info)).toEqual({ resultType: "complete" });
      const t = await until(runtime, taskId, (x) => x.status !== "working");
      expect(t.status).toBe("cancelled");
      expect(Date.now() - started).toBeLessThan(1000);
      expect(await runtime.cancelTask({ taskId }, info)).toEqual({ resultType: "complete" });
    }
    await runtime.idle();
  });
});

describe("what a task record keeps", () => {
  it("the input as the schema parsed it, not the arguments as sent: members the schema strips take no room", async () => {
    const store = createMemoryStore();
    const runtime = make({ state: { keys }, store });
    const seen: unknown[] = [];
    const job = tool({
      name: "job",
      description: "",
      input: z.object({ when: z.coerce.date(), n: z.number().default(3) }),
      task: "required",
      *run(input) {
        seen.push(input);
        return `${input.when.toISOString()} ${input.n}`;
      },
    });
    const { taskId } = (await runtime.callTool(job, { name: "job", arguments: { when: "2026-01-02T03:04:05Z", junk: "j".repeat(100_000) } }, { clientCapabilities: caps })) as { taskId: string };
    const done = await until(runtime, taskId, (t) => t.status === "completed");
    expect(done).toMatchObject({ result: { content: [{ text: "2026-01-02T03:04:05.000Z 3" }] } });
    const raw = (await store.get(`task:${taskId}`))!;
    expect(raw).not.toContain("jjjj");
    expect(raw.length).toBeLessThan(4000);
    expect(JSON.parse(raw)).toMatchObject({ args: {}, input: expect.any(String) });
    // What a run after a takeover gets is the parsed input itself (a Date, the default filled in).
    expect(seen[0]).toEqual({ when: new Date("2026-01-02T03:04:05Z"), n: 3 });
  });
});

describe("a principal's share of the store", () => {
  const quick = quickTask;

  it("past maxPerPrincipal that principal's new tasks are refused (-32603 principal_task_limit); others are not; expired tasks free the share", async () => {
    const time = manualClock(1_800_000_000_000);
    const clock = time.now;
    const runtime = make({ state: { keys, clock }, store: createMemoryStore({ clock }), clock, tasks: { maxPerPrincipal: 2, ttlMs: 1000 } });
    const start = (principal: string) => runtime.callTool(quick, { name: "quick", arguments: {} }, { clientCapabilities: caps, principal });
    await start("alice");
    await start("alice");
    await expect(start("alice")).rejects.toMatchObject({ code: -32603, data: { reason: "principal_task_limit", limit: 2 } });
    await expect(start("bob")).resolves.toMatchObject({ resultType: "task" });
    await runtime.idle();
    time.advance(1001); // alice's two tasks have expired with their ttlMs
    await expect(start("alice")).resolves.toMatchObject({ resultType: "task" });
    await runtime.idle();
  });

  it("a task the sweeper forgets leaves its principal's share: nothing is left for a start to clean up", async () => {
    const { shareOf } = await import("../../src/tasks/record/record-store.js");
    const time = manualClock(1_800_000_000_000);
    const clock = time.now;
    const store = createMemoryStore({ clock });
    const runtime = make({ state: { keys, clock }, store, clock, tasks: { ttlMs: 1000, sweepMs: 10 } });
    await runtime.callTool(quick, { name: "quick", arguments: {} }, { clientCapabilities: caps, principal: "carol" });
    await runtime.idle();
    expect(await store.size(shareOf("carol"))).toBe(1);
    time.advance(1001); // past its lifetime: the next sweep forgets it
    for (let i = 0; i < 500 && (await store.size(shareOf("carol"))) > 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(await store.size(shareOf("carol"))).toBe(0);
    expect(await store.size("tasks")).toBe(0);
  });
});

describe("task ids", () => {
  it("are 22 base64url characters (128 random bits) and never start with '-', which a command line would read as an option", async () => {
    const { newTaskId } = await import("../../src/tasks/record/record.js");
    const ids = new Set<string>();
    // 20,000 ids: with one in 64 starting with "-" unchecked, ≈ 312 would.
    for (let i = 0; i < 20_000; i++) {
      const id = newTaskId();
      expect(id).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/);
      ids.add(id);
    }
    expect(ids.size).toBe(20_000);
  });
});
