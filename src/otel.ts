// `mcp-yield/otel`: round traces as OpenTelemetry spans, in its own entry point so that only its
// users load @opentelemetry/api (an optional peer dependency).
import { context, SpanStatusCode, trace, type Attributes, type Tracer } from "@opentelemetry/api";
import type { RoundTrace } from "./runtime/trace.js";

/** Options of `openTelemetryObserver`. */
export interface OpenTelemetryObserverOptions {
  /** Default: `trace.getTracer("mcp-yield")` from the global tracer provider. */
  tracer?: Tracer;
}

/**
 * An `onRound` observer that records each round as a span (`tools/call book_flight round 2`),
 * with a child span per step run, at the times they happened. The round span is a child of the
 * span active when the round ends (the SDK's or your HTTP server's request span, if any).
 * Spans are named by the definition (`tools/call book_flight round 2`; a resource template by its template, never by the uri a client sent);
 * a request refused before any round ran is `tools/call book_flight refused`, a task's background
 * run `tools/call book_flight task run 2`. Attributes: `mcp.method.name`, `mcp_yield.target` (the uri, for resources), `mcp_yield.definition`, `mcp_yield.call_id`, `mcp_yield.round`,
 * `mcp_yield.path` (first, resumed, replayed, stored, refused), `mcp_yield.replayed`, `mcp_yield.asks`,
 * `mcp_yield.state_bytes_in`/`_out`, `mcp_yield.outcome`, `mcp_yield.task_id` on a task's runs, and `mcp_yield.error.reason` on errors.
 */
export function openTelemetryObserver(options: OpenTelemetryObserverOptions = {}): (round: RoundTrace) => void {
  const tracer = options.tracer ?? trace.getTracer("mcp-yield");
  return (round) => {
    const attributes: Attributes = {
      "mcp.method.name": round.method,
      "mcp_yield.target": round.target,
      "mcp_yield.definition": round.definition,
      "mcp_yield.round": round.round,
      "mcp_yield.path": round.path,
      "mcp_yield.replayed": round.replayed,
      "mcp_yield.asks": round.asks.map((a) => a.key),
      "mcp_yield.state_bytes_in": round.stateBytesIn,
      "mcp_yield.state_bytes_out": round.stateBytesOut,
      "mcp_yield.outcome": round.outcome,
    };
    if (round.callId !== undefined) attributes["mcp_yield.call_id"] = round.callId;
    if (round.error) attributes["mcp_yield.error.reason"] = round.error.reason;
    if (round.taskId !== undefined) attributes["mcp_yield.task_id"] = round.taskId;
    // Named by the definition (the server's text, bounded in number), never by the client's uri.
    // A refused request ran no round; a task's background run is numbered among the task's runs.
    const which = round.path === "refused" ? "refused" : round.taskId !== undefined && round.outcome !== "task" ? `task run ${round.round}` : `round ${round.round}`;
    const span = tracer.startSpan(`${round.method} ${round.definition} ${which}`, { startTime: round.startedAt, attributes });
    const parent = trace.setSpan(context.active(), span);
    for (const step of round.steps) {
      const child = tracer.startSpan(`step ${step.name}`, { startTime: step.startedAt, attributes: { "mcp_yield.step.name": step.name, "mcp_yield.step.ok": step.ok } }, parent);
      if (!step.ok) child.setStatus({ code: SpanStatusCode.ERROR, message: "the step threw" });
      child.end(step.startedAt + step.ms);
    }
    if (round.outcome === "error" || round.outcome === "author_error" || round.path === "refused") {
      span.setStatus({ code: SpanStatusCode.ERROR, message: round.outcome === "error" ? `JSON-RPC error ${round.error?.code ?? ""} ${round.error?.reason ?? ""}`.trim() : "the tool's code failed" });
    }
    span.end(round.startedAt + round.ms);
  };
}
