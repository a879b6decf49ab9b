import { canonicalJson } from "../state/index.js";
import type { Capability } from "../wire/index.js";
import { CallContext } from "./call-context.js";
import type { RunContext, RunGenerator } from "../authoring/definitions.js";
import { describeChange } from "./divergence.js";
import { AuthorCodeError, DivergenceError, NondeterminismError } from "./errors.js";
import type { JournalRecord } from "../journal/journal.js";
import { type SeenTimes, withAmbient } from "./ambient.js";
import { Round, type RoundOutcome, type Traced } from "./round/round.js";
import type { RoundInput } from "./round/types.js";

/** What the double-run needs to replay a round the way another instance would. */
export interface ReplayCheck {
  round: number;
  start: (ctx: RunContext) => RunGenerator<unknown>;
  principal: string | undefined;
  callId: string;
  declared: (kind: Capability) => boolean;
  /** What the round's own run did at each position (to name the first difference). */
  trace: Map<number, Traced>;
  /** The `Date.now` values the call's code saw, in order (the replay is shown them shifted). */
  seenTimes: SeenTimes;
  /** A task's own round inputs the code may use while replayed (its signal tokens and URLs). */
  task?: Pick<RoundInput, "signalToken" | "signalUrl">;
}

/** What the replay must reproduce: the round's outcome as sealed (or, completed, its journal). */
export type Expected =
  | { type: "complete"; journal: readonly JournalRecord[]; result: string }
  | { type: "input_required"; journal: readonly JournalRecord[]; outstanding: Record<string, string>; partial: Record<string, string>; pending: string; inputRequests: string };

const NEVER = new AbortController().signal;
const refuse = () => {
  throw new Error("a verification replay never reads the clock or draws an id");
};

/**
 * The development double-run: replay the call from the top on what the round produced, with no
 * new input, as another instance would, and require the same outcome — the same asks, or the
 * same result (`shape` turns a completed value into the comparable result text). Nothing past
 * the journal runs: no step, no clock. Any difference throws `NondeterminismError` naming the
 * round, the position and what changed there.
 */
export async function checkReplay(check: ReplayCheck, expected: Expected, shape: (value: unknown) => string): Promise<void> {
  const trace = new Map<number, Traced>();
  const context = new CallContext(check.principal, check.callId);
  const round = new Round({
    start: () => check.start(context),
    journal: expected.journal,
    outstanding: expected.type === "input_required" ? expected.outstanding : undefined,
    partial: expected.type === "input_required" ? expected.partial : {},
    responses: new Map(),
    declared: check.declared,
    signal: () => NEVER,
    randomUUID: refuse,
    clock: refuse,
    verify: { pending: expected.type === "input_required" ? expected.pending : undefined },
    trace,
    ...check.task,
  });
  let outcome: RoundOutcome;
  context.enter(round);
  try {
    outcome = await withAmbient("replay", check.seenTimes, () => round.run());
  } catch (error) {
    if (error instanceof DivergenceError) {
      const change = describeChange(check.trace.get(error.index), trace.get(error.index));
      throw new NondeterminismError(check.round, `replayed from its state, ${change ? `at effect #${error.index} ${change}` : error.what}`, error.index);
    }
    if (error instanceof AuthorCodeError) throw new NondeterminismError(check.round, `replayed from its state, the code throws: ${error.message}`);
    throw error;
  } finally {
    context.leave();
  }
  if (outcome.type !== expected.type) throw new NondeterminismError(check.round, `the round ended ${expected.type}, replayed it ends ${outcome.type}`);
  if (outcome.type === "input_required" && expected.type === "input_required") {
    const asks = canonicalJson(outcome.inputRequests);
    if (asks !== expected.inputRequests) throw new NondeterminismError(check.round, `the round asked ${expected.inputRequests.slice(0, 200)}, replayed it asks ${asks.slice(0, 200)}`);
  } else if (outcome.type === "complete" && expected.type === "complete") {
    const result = shape(outcome.value);
    if (result !== expected.result) throw new NondeterminismError(check.round, `the round's result was ${expected.result.slice(0, 200)}, replayed it is ${result.slice(0, 200)}`);
  }
}
