import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createMemoryStore, createRuntime, elicit, type ErrorInfo, runAsTask, type Runtime, type RuntimeOptions, sample, step, tool } from "mcp-yield";
import { accept } from "mcp-yield/testing";
import { type FaultKind, faultyStore } from "../support/faulty-store.js";
import { testKey } from "../support/keys.js";

// A round whose steps ran is never run again from its token: whatever fails after them (a
// store write, shaping the result, a missing capability), the same request again gets the same
// outcome or continues from where the round got.

const keys = [testKey("x", 21)];
const elicitOnly = { clientCapabilities: { elicitation: {} } };
const tasksToo = { clientCapabilities: { elicitation: {}, extensions: { "io.modelcontextprotocol/tasks": {} } } };
const Ok = z.object({ ok: z.boolean() });
const runtimes: Runtime[] = [];
afterEach(async () => {
  for (const r of runtimes.splice(0)) await r.close();
});

// Every case both ways: the next round resumes this instance's suspended generator, or (as on
// another instance) replays from the state.
const PATHS = [
  ["resumed on this instance", 1000],
  ["replayed from the state", 0],
] as const;
const current = { liveCalls: 1000 };

function setup(options: Partial<RuntimeOptions> = {}) {
  const store = faultyStore(createMemoryStore());
  const errors: Array<{ error: unknown; info: ErrorInfo }> = [];
  const runtime = createRuntime({ state: { keys }, store, liveCalls: current.liveCalls, onError: (error, info) => errors.push({ error, info }), ...options });
  runtimes.push(runtime);
  return { store, runtime, errors };
}

describe.each(PATHS)("%s", (_path, liveCalls) => {
  beforeEach(() => {
    current.liveCalls = liveCalls;
  });

  describe.each<FaultKind>(["error", "late"])("a store write failing after steps ran (%s)", (kind) => {
    it("a journal the store cannot keep travels in the token when it fits: the round completes, its step ran once", async () => {
      const { store, runtime, errors } = setup({ spillBytes: 64 });
      let runs = 0;
      const big = tool({
        name: "big",
        description: "",
        input: z.object({}),
        *run() {
          yield* elicit("go?", Ok, { key: "go" });
          const blob = yield* step("blob", () => (runs++, "x".repeat(2000)));
          return `${blob.length} ${(yield* elicit("more?", Ok, { key: "more" })).action}`;
        },
      });
      const r1 = (await runtime.callTool(big, { name: "big", arguments: {} }, elicitOnly)) as { requestState: string };
      store.arm({ kind, when: (op, key) => op === "set" && key.startsWith("state:") });
      const r2 = (await runtime.callTool(big, { name: "big", arguments: {}, requestState: r1.requestState, inputResponses: { go: accept({ ok: true }) } }, elicitOnly)) as {
        resultType: string;
        requestState: string;
      };
      expect(r2.resultType).toBe("input_required");
      expect(store.failed).toEqual([expect.stringMatching(/^set state:/)]);
      expect(errors.map((e) => (e.error as Error).message)).toEqual([expect.stringContaining("injected")]);
      store.disarm();
      await store.settled();
      const done = await runtime.callTool(big, { name: "big", arguments: {}, requestState: r2.requestState, inputResponses: { more: accept({ ok: true }) } }, elicitOnly);
      expect(done).toMatchObject({ content: [{ text: "2000 accept" }] });
      expect(runs).toBe(1);
    });

    it("too large for the token: store_unavailable, and the retry continues from the steps that ran", async () => {
      const { store, runtime } = setup({ spillBytes: 64, state: { keys, maxTokenBytes: 1500 } });
      let runs = 0;
      const big = tool({
        name: "big",
        description: "",
        input: z.object({}),
        *run(_i, ctx) {
          yield* elicit("go?", Ok, { key: "go" });
          const receipt = yield* step("charge", () => (runs++, `${ctx.idempotencyKey("charge")}:${"x".repeat(2000)}`));
          const more = yield* elicit("more?", Ok, { key: "more" });
          return `${receipt.slice(0, 20)} ${more.action}`;
        },
      });
      const r1 = (await runtime.callTool(big, { name: "big", arguments: {} }, elicitOnly)) as { requestState: string };
      const round2 = { name: "big", arguments: {}, requestState: r1.requestState, inputResponses: { go: accept({ ok: true }) } };
      store.arm({ kind, when: (op, key) => op === "set" && key.startsWith("state:") });
      await expect(runtime.callTool(big, round2, elicitOnly)).rejects.toMatchObject({ code: -32603, data: { reason: "store_unavailable" } });
      expect(runs).toBe(1);
      store.disarm();
      await store.settled();
      // The client retries the same request, as the error says: the step does not run again.
      const r2 = (await runtime.callTool(big, round2, elicitOnly)) as { requestState: string };
      expect(runs).toBe(1);
      // And that response is now the round's: repeated, it is answered from the store.
      expect(await runtime.callTool(big, round2, elicitOnly)).toEqual(r2);
      const done = (await runtime.callTool(big, { name: "big", arguments: {}, requestState: r2.requestState, inputResponses: { more: accept({ ok: true }) } }, elicitOnly)) as unknown as {
        content: Array<{ text: string }>;
      };
      expect(done.content[0]!.text).toMatch(/^mcpy-\S+ accept$/);
      expect(runs).toBe(1);
    });

    it("the task record at runAsTask(): the retry finds the same task, and the step before it ran once", async () => {
      const { store, runtime } = setup();
      const runs = { before: 0, after: 0 };
      const job = tool({
        name: "job",
        description: "",
        input: z.object({}),
        task: "optional",
        taskFrom: "runAsTask",
        async *run() {
          yield* elicit("start?", Ok, { key: "start" });
          yield* step("before", () => runs.before++);
          yield* runAsTask("working");
          yield* step("after", () => runs.after++);
          return "done";
        },
      });
      const r1 = (await runtime.callTool(job, { name: "job", arguments: {} }, tasksToo)) as { requestState: string };
      const round2 = { name: "job", arguments: {}, requestState: r1.requestState, inputResponses: { start: accept({ ok: true }) } };
      store.arm({ kind, when: (op, key) => op === "add" && key.startsWith("task:") });
      await expect(runtime.callTool(job, round2, tasksToo)).rejects.toMatchObject({ data: { reason: "store_unavailable" } });
      store.disarm();
      await store.settled();
      const created = (await runtime.callTool(job, round2, tasksToo)) as { resultType: string; taskId: string };
      expect(created.resultType).toBe("task");
      for (let i = 0; i < 200; i++) {
        const t = (await runtime.getTask({ taskId: created.taskId }, tasksToo)) as { status: string };
        if (t.status === "completed") break;
        await new Promise((r) => setTimeout(r, 5));
      }
      await runtime.idle();
      expect(await runtime.getTask({ taskId: created.taskId }, tasksToo)).toMatchObject({ status: "completed", result: { content: [{ text: "done" }] } });
      expect(runs).toEqual({ before: 1, after: 1 });
    });
  });

  describe("shaping the result fails after the steps ran", () => {
    it("an output schema that throws, or a bigint in structured output: an isError result, onError told, the same on a repeat", async () => {
      const { runtime, errors } = setup();
      let runs = 0;
      const throwing = z.object({ n: z.number() }).superRefine(() => {
        throw new Error("schema bug");
      });
      const defs = [
        tool({
          name: "refines",
          description: "",
          input: z.object({}),
          output: throwing,
          *run() {
            yield* elicit("go?", Ok, { key: "go" });
            return { n: yield* step("n", () => ++runs) };
          },
        }),
        tool({
          name: "big",
          description: "",
          input: z.object({}),
          output: z.object({ n: z.bigint() }),
          *run() {
            yield* elicit("go?", Ok, { key: "go" });
            return { n: BigInt(yield* step("n", () => ++runs)) };
          },
        }),
      ];
      for (const def of defs) {
        const r1 = (await runtime.callTool(def, { name: def.name, arguments: {} }, elicitOnly)) as { requestState: string };
        const final = { name: def.name, arguments: {}, requestState: r1.requestState, inputResponses: { go: accept({ ok: true }) } };
        const result = await runtime.callTool(def, final, elicitOnly);
        expect(result).toMatchObject({ isError: true, content: [{ text: `Tool "${def.name}" failed; the error was reported to the server.` }] });
        expect(await runtime.callTool(def, final, elicitOnly)).toEqual(result);
      }
      expect(runs).toBe(2);
      expect(errors.map((e) => (e.error as Error).message)).toEqual([expect.stringContaining("schema bug"), expect.stringContaining("JSON cannot carry")]);
    });
  });

  describe("-32021 can be retried as it says", () => {
    const Topic = z.object({ topic: z.string() });
    function asker(runs: { n: number }) {
      return tool({
        name: "ask",
        description: "",
        input: z.object({}),
        *run() {
          const topic = yield* elicit("topic?", Topic, { key: "topic" });
          if (topic.action !== "accept") return "no topic";
          const id = yield* step("reserve", () => ++runs.n);
          const summary = yield* sample({ messages: [{ role: "user", content: { type: "text", text: topic.content.topic } }], maxTokens: 10 }, { key: "summary" });
          const content = summary.content as { type: string; text?: string };
          return `${id}: ${content.text ?? "?"}`;
        },
      });
    }

    it("the retry that declares the capability continues where the refused ask stood; the step before it ran once", async () => {
      const { runtime } = setup();
      const runs = { n: 0 };
      const def = asker(runs);
      const r1 = (await runtime.callTool(def, { name: "ask", arguments: {} }, elicitOnly)) as { requestState: string };
      const round2 = { name: "ask", arguments: {}, requestState: r1.requestState, inputResponses: { topic: accept({ topic: "tides" }) } };
      await expect(runtime.callTool(def, round2, elicitOnly)).rejects.toMatchObject({ code: -32021, data: { requiredCapabilities: { sampling: {} } } });
      // Again without the capability: the same refusal, still nothing run twice.
      await expect(runtime.callTool(def, round2, elicitOnly)).rejects.toMatchObject({ code: -32021 });
      const withSampling = { clientCapabilities: { elicitation: {}, sampling: {} } };
      const r2 = (await runtime.callTool(def, round2, withSampling)) as { resultType: string; inputRequests: Record<string, { method: string }>; requestState: string };
      expect(r2.resultType).toBe("input_required");
      expect(Object.keys(r2.inputRequests)).toEqual(["summary"]);
      const done = await runtime.callTool(
        def,
        { name: "ask", arguments: {}, requestState: r2.requestState, inputResponses: { summary: { role: "assistant", content: { type: "text", text: "moon" }, model: "m" } } },
        withSampling,
      );
      expect(done).toMatchObject({ content: [{ text: "1: moon" }] });
      expect(runs.n).toBe(1);
    });

    it("a -32021 before any step frees the state: the retry that declares the capability runs", async () => {
      const { runtime } = setup();
      const def = tool({
        name: "s",
        description: "",
        input: z.object({}),
        *run() {
          yield* elicit("go?", Ok, { key: "go" });
          const out = yield* sample({ messages: [], maxTokens: 1 }, { key: "s" });
          return out.model;
        },
      });
      const r1 = (await runtime.callTool(def, { name: "s", arguments: {} }, elicitOnly)) as { requestState: string };
      const round2 = { name: "s", arguments: {}, requestState: r1.requestState, inputResponses: { go: accept({ ok: true }) } };
      await expect(runtime.callTool(def, round2, elicitOnly)).rejects.toMatchObject({ code: -32021 });
      await expect(runtime.callTool(def, round2, { clientCapabilities: { elicitation: {}, sampling: {} } })).resolves.toMatchObject({ resultType: "input_required" });
    });
  });
});
