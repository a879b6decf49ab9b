import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { SpanStatusCode } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createMemoryStore, createRuntime, elicit, formatRoundTrace, ProtocolError, resourceTemplate, type RoundTrace, type Runtime, type RuntimeOptions, step, tool } from "mcp-yield";
import { openTelemetryObserver } from "mcp-yield/otel";
import { tamperedEnd } from "../support/tamper.js";
import { testKey } from "../support/keys.js";

const keys = [testKey("t", 6)];
const Name = z.object({ name: z.string() });
const caps = { clientCapabilities: { elicitation: {} } };
const plan = tool({
  name: "plan",
  description: "",
  input: z.object({ fail: z.boolean().default(false) }),
  *run({ fail }) {
    const found = yield* step("search", () => 3);
    const a = yield* elicit("Who?", Name);
    yield* step("price", () => {
      if (fail) throw new Error("price service down");
      return found * 2;
    });
    const b = yield* elicit("And?", Name);
    return `${a.action} ${b.action}`;
  },
});
type Step = { resultType: string; requestState?: string };

async function threeRounds(options: Partial<RuntimeOptions>): Promise<RoundTrace[]> {
  const traces: RoundTrace[] = [];
  const runtime: Runtime = createRuntime({ state: { keys }, onRound: (t) => traces.push(t), ...options });
  const call = (requestState?: string, inputResponses?: Record<string, unknown>) =>
    runtime.callTool(plan, { name: "plan", arguments: {}, ...(requestState ? { requestState, inputResponses } : {}) }, caps) as Promise<Step>;
  const r1 = await call();
  const r2 = await call(r1.requestState, { "elicit-0": { action: "accept", content: { name: "a" } } });
  await call(r2.requestState, { "elicit-1": { action: "accept", content: { name: "b" } } });
  return traces;
}

describe("round traces", () => {
  it("each round: path, records replayed, steps run, asks, state sizes, outcome — resumed", async () => {
    const [r1, r2, r3] = await threeRounds({});
    expect(r1).toMatchObject({
      method: "tools/call",
      target: "plan",
      round: 1,
      path: "first",
      replayed: 0,
      asks: [{ key: "elicit-0", method: "elicitation/create" }],
      stateBytesIn: 0,
      outcome: "input_required",
    });
    expect(r1!.steps.map((s) => [s.name, s.ok])).toEqual([["search", true]]);
    expect(r1!.stateBytesOut).toBeGreaterThan(100);
    expect(r2).toMatchObject({ round: 2, path: "resumed", replayed: 0, stateBytesIn: r1!.stateBytesOut, outcome: "input_required" });
    expect(r2!.steps.map((s) => s.name)).toEqual(["price"]);
    expect(r3).toMatchObject({ round: 3, path: "resumed", steps: [], asks: [], stateBytesOut: 0, outcome: "complete" });
    expect(new Set([r1!.callId, r2!.callId, r3!.callId]).size).toBe(1);
    for (const t of [r1!, r2!, r3!]) expect(t.ms).toBeGreaterThanOrEqual(0);
  });

  it("replayed: the records fed back are counted, and replayed steps are not listed as run", async () => {
    const [, r2, r3] = await threeRounds({ liveCalls: 0 });
    expect(r2).toMatchObject({ path: "replayed", replayed: 1 }); // step("search")
    expect(r2!.steps.map((s) => s.name)).toEqual(["price"]);
    expect(r3).toMatchObject({ path: "replayed", replayed: 3, steps: [], outcome: "complete" }); // search, elicit-0, price
  });

  it("errors and author failures are traced, and an observer that throws changes nothing", async () => {
    const traces: RoundTrace[] = [];
    const runtime = createRuntime({
      state: { keys },
      onError: () => {},
      onRound: (t) => {
        traces.push(t);
        throw new Error("observer bug");
      },
    });
    const r1 = (await runtime.callTool(plan, { name: "plan", arguments: { fail: true } }, caps)) as Step;
    const failed = (await runtime.callTool(
      plan,
      { name: "plan", arguments: { fail: true }, requestState: r1.requestState, inputResponses: { "elicit-0": { action: "accept", content: { name: "a" } } } },
      caps,
    )) as { isError?: boolean };
    expect(failed.isError).toBe(true);
    expect(traces[1]).toMatchObject({ outcome: "author_error", steps: [{ name: "price", ok: false }] });
    await expect(runtime.callTool(plan, { name: "plan", arguments: { fail: true }, requestState: tamperedEnd(r1.requestState!, 2) }, caps)).rejects.toBeInstanceOf(ProtocolError);
    expect(traces[2]).toMatchObject({ outcome: "error", path: "refused", round: 0, error: { code: -32602, reason: "bad_signature" }, callId: undefined });
    // A refused request is named by what refused it, not by a "round 0".
    expect(formatRoundTrace(traces[2]!)).toMatch(/^\[mcp-yield\] tools\/call plan refused, state \d+ → 0 B, \d+(\.\d)? ms → error -32602 bad_signature$/);
    // -32021 carries no reason: the trace names what the request lacked.
    await expect(runtime.callTool(plan, { name: "plan", arguments: {} }, { clientCapabilities: {} })).rejects.toBeInstanceOf(ProtocolError);
    expect(traces[3]).toMatchObject({ outcome: "error", path: "first", round: 1, error: { code: -32021, reason: "missing elicitation" } });
  });

  it("a task's start and each of its background runs are traced, numbered by the task's runs", async () => {
    const traces: RoundTrace[] = [];
    const runtime = createRuntime({ state: { keys }, onRound: (t) => traces.push(t) });
    const inTask = tool({ ...plan, name: "plan_task", task: "required", run: plan.run });
    const info = { clientCapabilities: { elicitation: {}, extensions: { "io.modelcontextprotocol/tasks": {} } } };
    try {
      const { taskId } = (await runtime.callTool(inTask, { name: "plan_task", arguments: {} }, info)) as { taskId: string };
      const waitFor = async (n: number) => {
        for (let i = 0; i < 500 && traces.length < n; i++) await new Promise((r) => setTimeout(r, 10));
        expect(traces.length).toBeGreaterThanOrEqual(n);
      };
      const answer = async (content: { name: string }) => {
        const t = (await runtime.getTask({ taskId }, info)) as unknown as { inputRequests: Record<string, unknown> };
        await runtime.updateTask({ taskId, inputResponses: { [Object.keys(t.inputRequests)[0]!]: { action: "accept", content } } }, info);
      };
      await waitFor(2);
      await answer({ name: "a" });
      await waitFor(3);
      await answer({ name: "b" });
      await waitFor(4);
      const [start, run1, run2, run3] = traces;
      expect(start).toMatchObject({ round: 1, path: "first", outcome: "task", taskId });
      expect(run1).toMatchObject({ taskId, round: 1, path: "first", outcome: "input_required", asks: [{ key: "elicit-0" }] });
      expect(run1!.steps.map((s) => s.name)).toEqual(["search"]);
      expect(run2).toMatchObject({ taskId, round: 2, path: "resumed", replayed: 0, outcome: "input_required" });
      expect(run2!.steps.map((s) => s.name)).toEqual(["price"]);
      expect(run3).toMatchObject({ taskId, round: 3, path: "resumed", outcome: "complete", steps: [] });
      expect(new Set(traces.map((t) => t.callId)).size).toBe(1);
      expect(formatRoundTrace(start!)).toMatch(
        new RegExp(`^\\[mcp-yield\\] tools/call plan_task round 1, first, \\d+(\\.\\d)? ms → task ${taskId.slice(0, 8).replace(/[-]/g, "\\-")} \\(call [0-9a-f]{8}\\)$`),
      );
      expect(formatRoundTrace(run2!)).toMatch(
        new RegExp(
          `^\\[mcp-yield\\] tools/call plan_task task ${taskId.slice(0, 8).replace(/[-]/g, "\\-")} run 2, resumed, steps price \\d+(\\.\\d)? ms, asked elicit-1, \\d+(\\.\\d)? ms → input_required`,
        ),
      );
    } finally {
      await runtime.close();
    }
  });

  it("a task's run on another instance (answered there, no generator held) is traced as replayed from the task's journal", async () => {
    const store = createMemoryStore();
    const aTraces: RoundTrace[] = [];
    const bTraces: RoundTrace[] = [];
    const a = createRuntime({ state: { keys }, store, onRound: (t) => aTraces.push(t) });
    const b = createRuntime({ state: { keys }, store, onRound: (t) => bTraces.push(t) });
    const inTask = tool({ ...plan, name: "plan_task2", task: "required", run: plan.run });
    a.define([inTask]);
    b.define([inTask]);
    const info = { clientCapabilities: { elicitation: {}, extensions: { "io.modelcontextprotocol/tasks": {} } } };
    try {
      const { taskId } = (await a.callTool(inTask, { name: "plan_task2", arguments: {} }, info)) as { taskId: string };
      for (let i = 0; i < 500 && aTraces.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
      const t = (await b.getTask({ taskId }, info)) as unknown as { inputRequests: Record<string, unknown> };
      await b.updateTask({ taskId, inputResponses: { [Object.keys(t.inputRequests)[0]!]: { action: "accept", content: { name: "a" } } } }, info);
      for (let i = 0; i < 500 && bTraces.length < 1; i++) await new Promise((r) => setTimeout(r, 10));
      expect(bTraces[0]).toMatchObject({ taskId, round: 2, path: "replayed", replayed: 1, outcome: "input_required" }); // step("search"); elicit-0 is answered from the task's answers
      expect(bTraces[0]!.steps.map((s) => s.name)).toEqual(["price"]);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("with a store, a repeated request is traced as answered from the store, nothing run", async () => {
    const traces: RoundTrace[] = [];
    const runtime = createRuntime({ state: { keys }, store: createMemoryStore(), onRound: (t) => traces.push(t) });
    const r1 = (await runtime.callTool(plan, { name: "plan", arguments: {} }, caps)) as Step;
    const again = { name: "plan", arguments: {}, requestState: r1.requestState, inputResponses: { "elicit-0": { action: "accept", content: { name: "a" } } } };
    const first = await runtime.callTool(plan, again, caps);
    expect(await runtime.callTool(plan, again, caps)).toEqual(first);
    expect(traces[2]).toMatchObject({ path: "stored", steps: [], outcome: "input_required" });
  });

  it("one log line per round", async () => {
    const [, r2] = await threeRounds({ liveCalls: 0 });
    expect(formatRoundTrace(r2!)).toMatch(
      /^\[mcp-yield\] tools\/call plan round 2, replayed 1 record, steps price \d+(\.\d)? ms, asked elicit-1, state \d+ → \d+ B, \d+(\.\d)? ms → input_required \(call [0-9a-f]{8}\)$/,
    );
  });
});

describe("OpenTelemetry spans (mcp-yield/otel)", () => {
  it("a span per round with its attributes, a child span per step, errors marked", async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const observer = openTelemetryObserver({ tracer: provider.getTracer("test") });
    await threeRounds({ liveCalls: 0, onRound: observer });
    const spans = exporter.getFinishedSpans();
    const rounds = spans.filter((s) => s.name.startsWith("tools/call plan round"));
    expect(rounds.map((s) => s.name)).toEqual(["tools/call plan round 1", "tools/call plan round 2", "tools/call plan round 3"]);
    expect(rounds[1]!.attributes).toMatchObject({
      "mcp.method.name": "tools/call",
      "mcp_yield.round": 2,
      "mcp_yield.path": "replayed",
      "mcp_yield.replayed": 1,
      "mcp_yield.asks": ["elicit-1"],
      "mcp_yield.outcome": "input_required",
    });
    expect(rounds[1]!.attributes["mcp_yield.call_id"]).toBe(rounds[0]!.attributes["mcp_yield.call_id"]);
    const price = spans.find((s) => s.name === "step price")!;
    expect(price.parentSpanContext?.spanId).toBe(rounds[1]!.spanContext().spanId);
    expect(price.parentSpanContext?.traceId).toBe(rounds[1]!.spanContext().traceId);
    expect(spans.filter((s) => s.name.startsWith("step ")).map((s) => s.name)).toEqual(["step search", "step price"]);

    exporter.reset();
    const runtime = createRuntime({ state: { keys }, onRound: observer });
    await expect(runtime.callTool(plan, { name: "plan", arguments: {}, requestState: "y2e.t.AAAA" }, caps)).rejects.toBeInstanceOf(ProtocolError);
    const [failed] = exporter.getFinishedSpans();
    expect(failed!.status.code).toBe(SpanStatusCode.ERROR);
    expect(failed!.attributes["mcp_yield.error.reason"]).toBe("bad_signature");
  });
});

describe("client text in traces", () => {
  const notes = resourceTemplate({
    uriTemplate: "notes://{+path}",
    name: "notes",
    *run({ path }) {
      return `note ${path.length}`;
    },
  });
  // A client-chosen uri: a forged second log line, a bidi override, a backslash, and bulk.
  const uri = `notes://a\n[mcp-yield] tools/call pay round 1, first → complete\r\u202e\\${"x".repeat(500)}`;

  it("a log line escapes the uri (no forged line, no reordering) and names the template", async () => {
    const traces: RoundTrace[] = [];
    const runtime = createRuntime({ state: { keys }, onRound: (t) => traces.push(t) });
    await runtime.readResource(notes, { uri }, caps);
    const line = formatRoundTrace(traces[0]!);
    expect(line).not.toMatch(/[\n\r\u202e]/);
    expect(line).toContain("resources/read notes://{+path} notes://a\\u000a[mcp-yield] tools/call pay");
    expect(line).toContain("\\u202e\\\\x");
    expect(line).toContain("x…");
    expect(line.length).toBeLessThan(400);
  });

  it("spans are named by the template; the uri is an attribute", async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const runtime = createRuntime({ state: { keys }, onRound: openTelemetryObserver({ tracer: provider.getTracer("test") }) });
    await runtime.readResource(notes, { uri }, caps);
    const [span] = exporter.getFinishedSpans();
    expect(span!.name).toBe("resources/read notes://{+path} round 1");
    expect(span!.attributes).toMatchObject({ "mcp_yield.target": uri, "mcp_yield.definition": "notes://{+path}" });
  });
});
