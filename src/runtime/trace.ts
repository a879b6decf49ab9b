import type { StateBinding } from "../state/index.js";
import type { StepRun } from "../replay/round.js";

/**
 * How a round got to where the previous one stopped: the call's first round, this instance's
 * suspended generator resumed, the journal replayed, or (with a store) a repeat of a round
 * already run, answered with its kept response and nothing run.
 */
export type RoundPath = "first" | "resumed" | "replayed" | "stored";

/** How a round ended. */
export type RoundOutcomeKind = "input_required" | "complete" | "task" | "author_error" | "error";

/**
 * What one request of a call did, as `onRound` observers (and `openTelemetryObserver`) receive it.
 * Replay is visible here: `path` says whether the generator was resumed on this instance or
 * replayed from the state, `replayed` how many journal records that took, `steps` which steps
 * actually ran this round.
 */
export interface RoundTrace {
  method: StateBinding["method"];
  /** Tool or prompt name, or resource uri — for a resource template, the uri the client sent (its text is the client's). */
  target: string;
  /** The definition that ran: the tool's or prompt's name, the resource's uri, or the resource template (the server's own text). */
  definition: string;
  /** The call's id (the same in every round), or `undefined` when the round failed before it was known. */
  callId: string | undefined;
  /** 1 for the first round of a call. */
  round: number;
  path: RoundPath;
  /** Journal records fed back to the code before it reached new work (0 when resumed). */
  replayed: number;
  /** Steps run this round (replayed steps are not run again, so they are not here). */
  steps: StepRun[];
  /** Asks sent to the client this round, by key. */
  asks: Array<{ key: string; method: string }>;
  /** Size of the `requestState` this round presented (0 on a first round). */
  stateBytesIn: number;
  /** Size of the `requestState` it minted (0 when it minted none). */
  stateBytesOut: number;
  /** When the round started (ms since the epoch) and how long it took. */
  startedAt: number;
  ms: number;
  outcome: RoundOutcomeKind;
  /** For `error`: the JSON-RPC error's code and `data.reason` (or the error's name). */
  error?: { code: number | undefined; reason: string };
}

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
  const parts = [`[mcp-yield] ${t.method} ${target} round ${t.round}`, t.path === "replayed" ? `replayed ${t.replayed} record${t.replayed === 1 ? "" : "s"}` : t.path];
  if (t.steps.length > 0) parts.push(`steps ${t.steps.map((s) => `${s.name} ${ms(s.ms)} ms${s.ok ? "" : " FAILED"}`).join(", ")}`);
  if (t.asks.length > 0) parts.push(`asked ${t.asks.map((a) => a.key).join(", ")}`);
  parts.push(`state ${t.stateBytesIn} → ${t.stateBytesOut} B`, `${ms(t.ms)} ms`);
  const outcome = t.outcome === "error" && t.error ? `error ${t.error.code ?? ""} ${t.error.reason}`.replace("  ", " ") : t.outcome;
  return `${parts.join(", ")} → ${outcome}${t.callId ? ` (call ${t.callId.slice(0, 8)})` : ""}`;
}
