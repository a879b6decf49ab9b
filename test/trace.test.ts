import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { SpanStatusCode } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createMemoryStore, createRuntime, elicit, formatRoundTrace, ProtocolError, resourceTemplate, type RoundTrace, type Runtime, type RuntimeOptions, step, tool } from "mcp-yield";
import { openTelemetryObserver } from "mcp-yield/otel";

const keys = [{ id: "t", secret: new Uint8Array(32).fill(6) }];
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
  const call = (requestState?: string, inputResponses?: Record<string, unknown>) => runtime.callTool(plan, { name: "plan", arguments: {}, ...(requestState ? { requestState, inputResponses } : {}) }, caps) as Promise<Step>;
  const r1 = await call();
  const r2 = await call(r1.requestState, { "elicit-0": { action: "accept", content: { name: "a" } } });
  await call(r2.requestState, { "elicit-1": { action: "accept", content: { name: "b" } } });
  return traces;
}

describe("round traces", () => {
  it("each round: path, records replayed, steps run, asks, state sizes, outcome — resumed", async () => {
    const [r1, r2, r3] = await threeRounds({});
    expect(r1).toMatchObject({ method: "tools/call", target: "plan", round: 1, path: "first", replayed: 0, asks: [{ key: "elicit-0", method: "elicitation/create" }], stateBytesIn: 0, outcome: "input_required" });
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
    const runtime = createRuntime({ state: { keys }, onError: () => {}, onRound: (t) => { traces.push(t); throw new Error("observer bug"); } });
    const r1 = (await runtime.callTool(plan, { name: "plan", arguments: { fail: true } }, caps)) as Step;
    const failed = (await runtime.callTool(plan, { name: "plan", arguments: { fail: true }, requestState: r1.requestState, inputResponses: { "elicit-0": { action: "accept", content: { name: "a" } } } }, caps)) as { isError?: boolean };
    expect(failed.isError).toBe(true);
    expect(traces[1]).toMatchObject({ outcome: "author_error", steps: [{ name: "price", ok: false }] });
    await expect(runtime.callTool(plan, { name: "plan", arguments: { fail: true }, requestState: `${r1.requestState!.slice(0, -2)}AA` }, caps)).rejects.toBeInstanceOf(ProtocolError);
    expect(traces[2]).toMatchObject({ outcome: "error", error: { code: -32602, reason: "bad_signature" }, callId: undefined });
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
    expect(formatRoundTrace(r2!)).toMatch(/^\[mcp-yield\] tools\/call plan round 2, replayed 1 record, steps price \d+(\.\d)? ms, asked elicit-1, state \d+ → \d+ B, \d+(\.\d)? ms → input_required \(call [0-9a-f]{8}\)$/);
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
    expect(rounds[1]!.attributes).toMatchObject({ "mcp.method.name": "tools/call", "mcp_yield.round": 2, "mcp_yield.path": "replayed", "mcp_yield.replayed": 1, "mcp_yield.asks": ["elicit-1"], "mcp_yield.outcome": "input_required" });
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
  const notes = resourceTemplate({ uriTemplate: "notes://{+path}", name: "notes", *run({ path }) {
    return `note ${path.length}`;
  } });
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
