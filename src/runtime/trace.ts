import type { RoundTrace } from "../replay/round-trace.js";

export { type RoundOutcomeKind, type RoundPath, type RoundTrace, traceError } from "../replay/round-trace.js";

const ms = (n: number) => (n >= 10 ? n.toFixed(0) : n.toFixed(1));

/** Most characters of client text a trace line shows. */
const SHOWN = 200;

/**
 * Client text made safe for a log line: control characters, line and paragraph separators and
 * bidirectional overrides escaped as `\uXXXX` (so a uri cannot start a forged line or reorder
 * one), backslashes doubled, and long text cut.
 */
export function printable(text: string): string {
  const cut = text.length > SHOWN ? `${text.slice(0, SHOWN)}…` : text;
  return cut.replace(/[\\\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (c) => (c === "\\" ? "\\\\" : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`));
}

/** One line per round, for logs (the example server prints it with `MCP_YIELD_TRACE=1`). */
export function formatRoundTrace(t: RoundTrace): string {
  const target = t.target === t.definition ? t.target : `${t.definition} ${printable(t.target)}`;
  // A refused request ran no round: it is named by what refused it, not by a round number.
  const where = t.path === "refused" ? "refused" : t.taskId !== undefined && t.outcome !== "task" ? `task ${t.taskId.slice(0, 8)} run ${t.round}` : `round ${t.round}`;
  const parts = [`[mcp-yield] ${t.method} ${target} ${where}`];
  if (t.path !== "refused") parts.push(t.path === "replayed" ? `replayed ${t.replayed} record${t.replayed === 1 ? "" : "s"}` : t.path);
  if (t.steps.length > 0) parts.push(`steps ${t.steps.map((s) => `${s.name} ${ms(s.ms)} ms${s.ok ? "" : " FAILED"}`).join(", ")}`);
  if (t.asks.length > 0) parts.push(`asked ${t.asks.map((a) => a.key).join(", ")}`);
  if (t.taskId === undefined) parts.push(`state ${t.stateBytesIn} → ${t.stateBytesOut} B`);
  parts.push(`${ms(t.ms)} ms`);
  const why = t.error ? [t.error.code, t.error.reason].filter((x) => x !== undefined && x !== "").join(" ") : "";
  const outcome =
    (t.outcome === "error" || t.outcome === "stopped") && why !== "" ? `${t.outcome} ${why}` : t.outcome === "task" && t.taskId !== undefined ? `task ${t.taskId.slice(0, 8)}` : t.outcome;
  return `${parts.join(", ")} → ${outcome}${t.callId ? ` (call ${t.callId.slice(0, 8)})` : ""}`;
}
