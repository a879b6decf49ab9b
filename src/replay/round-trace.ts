import type { StateBinding } from "../state/index.js";
import { type CreateTaskResult, ProtocolError } from "../wire/index.js";
import type { StepRun } from "./round/round.js";

/**
 * How a round got to where the previous one stopped: the call's first round, this instance's
 * suspended generator resumed, the journal replayed, or (with a store) a repeat of a round
 * already run, answered with its kept response and nothing run. `refused`: the request was
 * refused before any round ran (a bad or expired `requestState`, one already redeemed, ...):
 * `round` is 0 and `error` says why. A task's background runs are traced too (`taskId` set):
 * `first`, `resumed` (the generator parked here), or `replayed` (from the task's journal).
 */
export type RoundPath = "first" | "resumed" | "replayed" | "stored" | "refused";

/**
 * How a round ended. A task's run may also end asleep (`sleep`), waiting for a signal (`wait`), in a race with no winner yet (`race`),
 * or `stopped` (cancelled, its lease lost to another instance, or the instance shutting down:
 * `error.reason` says which).
 */
export type RoundOutcomeKind = "input_required" | "complete" | "task" | "author_error" | "error" | "sleep" | "wait" | "race" | "stopped";

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
  /** 1 for the first round of a call; for a task's run, 1 for its first run; 0 when refused. */
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
  /** For `error` (and `refused`): the JSON-RPC error's code and `data.reason` (or the error's name); for `stopped`, why. */
  error?: { code: number | undefined; reason: string } | undefined;
  /** Set on a task's background runs (and on the request that started the task): the task's id. */
  taskId?: string | undefined;
}

/** A failure as a trace names it: the JSON-RPC code and `data.reason`, or the error's class. */
export function traceError(error: unknown): { code: number | undefined; reason: string } {
  if (error instanceof ProtocolError) {
    const reason = error.data?.reason;
    if (typeof reason === "string" && reason !== "") return { code: error.code, reason };
    // -32021 has no reason: it names the capabilities the request lacked.
    const required = error.data?.requiredCapabilities;
    if (typeof required === "object" && required !== null) return { code: error.code, reason: `missing ${Object.keys(required).join(", ")}` };
    return { code: error.code, reason: error.name };
  }
  return { code: undefined, reason: error instanceof Error ? error.name : "thrown" };
}

/** Hand a finished trace to the observer; an observer that throws changes nothing about the round. */
export function deliverTrace(observe: (trace: RoundTrace) => void, trace: RoundTrace): void {
  try {
    observe(trace);
  } catch {
    // the round's response (or the task) must not depend on its observer
  }
}

/** What a trace is told when it starts; the rest starts empty and is filled as the round goes. */
export type TraceStart = Pick<RoundTrace, "method" | "target" | "definition" | "callId" | "round" | "path" | "replayed"> & { stateBytesIn?: number; taskId?: string };

/** A new trace of one round (or one task run), started now, its outcome `error` until it has another. */
export function roundTrace(start: TraceStart): RoundTrace {
  const { stateBytesIn = 0, taskId, ...named } = start;
  return { ...named, steps: [], asks: [], stateBytesIn, stateBytesOut: 0, startedAt: Date.now(), ms: 0, outcome: "error", ...(taskId !== undefined ? { taskId } : {}) };
}

/** `start()`, the request that starts a task from its first round, traced as that round (its runs are traced by the engine). */
export async function tracedTaskStart(observe: ((trace: RoundTrace) => void) | undefined, tool: string, callId: string, start: () => Promise<CreateTaskResult>): Promise<CreateTaskResult> {
  if (observe === undefined) return start();
  const trace = roundTrace({ method: "tools/call", target: tool, definition: tool, callId, round: 1, path: "first", replayed: 0 });
  const started = performance.now();
  try {
    const created = await start();
    [trace.outcome, trace.taskId] = ["task", created.taskId];
    return created;
  } catch (error) {
    trace.error = traceError(error);
    throw error;
  } finally {
    trace.ms = performance.now() - started;
    deliverTrace(observe, trace);
  }
}
