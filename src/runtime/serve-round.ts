import { canonicalJson, randomUuid } from "../state/index.js";
import { parseLines, payloadFrom, recordLines, type StateHeader, type StatePayload } from "../journal/journal.js";
import { CallContext } from "../replay/call-context.js";
import { checkReplay } from "../replay/double-run.js";
import { withAmbient } from "../replay/ambient.js";
import { withRefusals } from "../replay/answers.js";
import { AuthorCodeError, DivergenceError, type ErrorInfo, NondeterminismError } from "../replay/errors.js";
import type { LiveCall, LiveCalls } from "../replay/live-calls.js";
import { Round, type RoundOutcome, type Traced } from "../replay/round/round.js";
import type { StateBinding } from "../state/index.js";
import { capabilityCheck, type InputRequiredResult, ProtocolError } from "../wire/index.js";
import { checkRounds, ownResponses, storeSafe } from "./admission.js";
import type { CallState, Presented } from "./call-state.js";
import type { RequestInfo, RuntimeLimits } from "./options.js";
import type { Redemption } from "./single-use/redeem.js";
import { createSingleUse, type Progress } from "./single-use/single-use.js";
import type { CallSpec } from "./call-spec.js";
import { idempotencyGuard, keyed } from "./single-use/idempotency.js";
import type { RoundShare } from "./single-use/round-share.js";

export type { CallSpec } from "./call-spec.js";
import { newTaskId } from "../tasks/record/record.js";
import { deliverTrace, roundTrace, type RoundTrace, traceError } from "../replay/round-trace.js";

/**
 * One round of one call, end to end: the presented state opened (or its suspended generator
 * resumed), the generator run to its next ask or its end, the result shaped or the next state
 * minted, the round redeemed once with a store, traced when asked.
 *
 * Invariants:
 * 1. A suspended generator is resumed only for the token it was suspended under, after that
 *    token verified (held tokens by exact match), under the same definition.
 * 2. With a store, each round goes through single use (runtime/single-use.ts).
 * 3. Author failures are reported (`onError`) and answered without their internals; JSON-RPC
 *    errors the author throws on purpose go out as they are.
 */

/**
 * Whether `presented` (a verified journal of the same call) extends what the held
 * generator had seen: a later round, the same binding, every record it saw byte for byte, and
 * at its position the very ask it is waiting on. Only then is resuming it the same as replaying.
 *
 * Compared record by record (each record's two strings), not as the text they were sealed as
 * (`presented.text.startsWith(held.payload.text)`, the same verdict for lines that end where
 * records end). That prefix test, here from 3baca5d to 5ec8335, cost three instances without
 * affinity at R = 30 6 % of their CPU — paired fresh processes, 8 sets: this loop 0.938 of it
 * (0.904–0.984); at R = 10 0.987 (0.971–1.061). Measured only at R = 10 (1.001), it had looked
 * free, and the full bench's three-instance a/b at R = 30 rose from 1.38–1.44 to 1.48–1.53.
 */
function extendsHeld(held: LiveCall, presented: StatePayload, binding: StateBinding): boolean {
  const { records, pending } = held.suspended;
  const m = held.minted;
  if (pending === undefined || held.payload.r >= presented.r || presented.j.length <= records.length) return false;
  if (m.method !== binding.method || m.target !== binding.target || m.argumentsDigest !== binding.argumentsDigest || m.principal !== binding.principal) return false;
  if (presented.j[records.length]![0] !== pending.fp) return false;
  for (let i = 0; i < records.length; i++) {
    const a = records[i]!;
    const b = presented.j[i]!;
    if (a[0] !== b[0] || a[1] !== b[1]) return false;
  }
  return true;
}

/** What running rounds needs from the runtime. */
export interface RoundHostParts {
  limits: Required<RuntimeLimits>;
  calls: CallState;
  live: LiveCalls;
  redemption: Redemption | undefined;
  /** The principals' shares the single-use records of presented states' rounds are charged to. */
  share?: RoundShare | undefined;
  /**
   * Where first requests with an idempotency key are redeemed, how long a key's record is kept
   * from each write, and the shares those records are charged to.
   */
  idempotency: { redemption: Redemption; keepMs: number; share?: RoundShare | undefined };
  clock: () => number;
  report: (error: unknown, info: ErrorInfo) => void;
  onRound: ((trace: RoundTrace) => void) | undefined;
  verifyReplay: boolean;
}

/** A result as comparable text, or why shaping it failed (for the double-run). */
const shapeText =
  <R, T>(spec: CallSpec<R, T>) =>
  (value: unknown): string => {
    try {
      return canonicalJson(spec.shape(value));
    } catch (error) {
      return `(the result could not be shaped: ${error instanceof Error ? error.message : String(error)})`;
    }
  };

/** A failed double-run is a server-side fault: reported, then the round's error. */
async function checked(report: (error: unknown, info: ErrorInfo) => void, verification: Promise<void>, info: ErrorInfo): Promise<void> {
  try {
    await verification;
  } catch (error) {
    if (error instanceof NondeterminismError) report(error, info);
    throw error;
  }
}

/** A round traced: `runRound` run with a trace that `observe` receives, whatever the round's end. */
async function runObserved<R, T>(
  runRound: (spec: CallSpec<R, T>, request: RequestInfo, observed: RoundTrace) => Promise<R | InputRequiredResult | T>,
  spec: CallSpec<R, T>,
  request: RequestInfo,
  observe: (trace: RoundTrace) => void,
): Promise<R | InputRequiredResult | T> {
  const trace = roundTrace({
    method: spec.binding.method,
    target: spec.binding.target,
    definition: spec.definition,
    callId: undefined,
    round: 0,
    path: spec.requestState === undefined ? "first" : "replayed",
    replayed: 0,
    stateBytesIn: spec.requestState?.length ?? 0,
  });
  const started = performance.now();
  try {
    return await runRound(spec, request, trace);
  } catch (error) {
    trace.outcome = "error";
    trace.error = traceError(error);
    // Refused before any round ran (round still 0): bad, expired or redeemed state, ...
    if (trace.round === 0) trace.path = "refused";
    throw error;
  } finally {
    trace.ms = performance.now() - started;
    deliverTrace(observe, trace);
  }
}

/** The round runner of one runtime: `run(spec, request)` serves one request of a multi-round call. */
export function createRoundHost({ limits, calls, live, redemption, share, idempotency, clock, report, onRound, verifyReplay }: RoundHostParts) {
  /**
   * One round. With a store, the state it presents is redeemed once: the same request again
   * gets this round's response from the store, a different one is refused (`state_redeemed`).
   */
  function run<R, T = never>(spec: CallSpec<R, T>, request: RequestInfo): Promise<R | InputRequiredResult | T> {
    // Not async itself: each async layer a round passes through costs a promise and microtask
    // hops, measured on the resume path. Callers are async, so a throw here still rejects.
    const observe = onRound;
    if (observe === undefined) return runRound(spec, request, undefined);
    return runObserved(runRound, spec, request, observe);
  }

  function runRound<R, T>(spec: CallSpec<R, T>, request: RequestInfo, observed: RoundTrace | undefined): Promise<R | InputRequiredResult | T> {
    const responses = ownResponses(spec.inputResponses, limits);
    if (spec.requestState === undefined) {
      if (spec.idempotencyKey === undefined) return execute(spec, request, undefined, responses, observed);
      const guard = idempotencyGuard(spec.binding, spec.idempotencyKey, responses, clock, idempotency.keepMs);
      return keyed(() => keyedUse.guarded(spec, request, undefined, responses, observed, { ...guard, share: idempotency.share }));
    }
    const state = calls.presented(spec.owner, spec.binding, spec.requestState);
    if (singleUse === undefined) return execute(spec, request, state, responses, observed);
    return singleUse.redeemed(spec, request, state, responses, observed);
  }

  /** This instance's generator for the call at an earlier round, taken if `presented` extends it (see `extendsHeld`). */
  function takeEarlier(spec: CallSpec<unknown, unknown>, presented: StatePayload): LiveCall | undefined {
    return live.takeEarlier(
      presented.c,
      spec.owner,
      (held) => extendsHeld(held, presented, spec.binding),
      // A journal of a later round that does not extend it: the call went on without it.
      (held) => presented.r > held.payload.r,
    );
  }

  const singleUse = redemption === undefined ? undefined : createSingleUse({ redemption, live, report, execute, share });
  const keyedUse = idempotency.redemption === redemption && singleUse ? singleUse : createSingleUse({ redemption: idempotency.redemption, live, report, execute });

  async function execute<R, T>(
    spec: CallSpec<R, T>,
    request: RequestInfo,
    state: Presented | undefined,
    responses: Map<string, unknown>,
    observed: RoundTrace | undefined,
    progress?: Progress,
  ): Promise<R | InputRequiredResult | T> {
    let payload: StatePayload | undefined;
    let resumed: LiveCall | undefined;
    /** This instance's generator for the call at an earlier round, when the presented journal extends it. */
    let earlier: LiveCall | undefined;
    const from = progress?.from;
    if (from !== undefined) {
      // An earlier attempt at this very request ran steps and stopped: go on from its journal
      // (read from the store, where this server put it). A generator this instance holds for
      // the token knows only the token's journal: it is dropped, never resumed.
      if (state !== undefined) live.take(state.token, spec.owner);
      const lines = parseLines(from.t);
      if (lines === undefined) throw new Error("a kept continuation is not a journal");
      payload = payloadFrom(from.h, lines, from.t);
      checkRounds(payload, limits);
    } else if (state !== undefined) {
      // Only after the token verified, bound to this call: resume this instance's suspended
      // generator. Its journal is the very one that was sealed into this token, so nothing is
      // decoded; otherwise (another instance's token, or a parallel round took the generator)
      // the journal comes out of the verified token.
      resumed = live.take(state.token, spec.owner);
      if (resumed) payload = resumed.payload;
      else {
        const reading = calls.payloadOf(state.opened ?? calls.verifyState(state.token, spec.binding), spec.code);
        payload = reading instanceof Promise ? await reading : reading;
        // Without affinity: this instance may hold the call's generator from an earlier round
        // (other instances served the rounds since). Resumed only if this verified journal
        // extends what it saw byte for byte; it then replays just the newer records.
        if (live.holds) earlier = takeEarlier(spec, payload);
      }
      checkRounds(payload, limits);
    }
    const round = (payload?.r ?? 0) + 1;
    const callId = payload?.c ?? randomUuid();
    const info: ErrorInfo = { method: spec.binding.method, target: spec.binding.target, round, callId };
    if (observed) {
      observed.callId = callId;
      observed.round = round;
      observed.path = resumed || earlier ? "resumed" : state ? "replayed" : "first";
      observed.replayed = resumed ? 0 : earlier ? payload!.j.length - earlier.suspended.records.length : (payload?.j.length ?? 0);
    }
    const ctx = (resumed ?? earlier)?.context ?? new CallContext(spec.binding.principal, callId);
    const declared = capabilityCheck(request.clientCapabilities);
    const trace = verifyReplay ? new Map<number, Traced>() : undefined;
    // Records carried in as lines are not written again: the new ones are appended.
    const carried = payload?.j.length ?? 0;
    const current = new Round(
      {
        start: () => spec.start(ctx),
        journal: payload?.j ?? [],
        removedPatches: spec.code.removedPatches,
        // Optional parts passed as undefined rather than spread in (no temporary objects per round).
        suspendedAt: from?.n,
        outstanding: payload?.o,
        partial: payload?.p ?? {},
        responses,
        declared,
        undeclared: request.clientCapabilities === undefined,
        signal: () => ctx.signal,
        randomUUID: randomUuid,
        clock,
        task: spec.becomeTask ? "become" : "foreground",
        trace,
        beforeStep: progress?.beforeStep,
        onStep: progress?.onStep,
        deferStepSaves: progress !== undefined,
        onProgress: request.progress,
      },
      (resumed ?? earlier)?.suspended,
    );
    // The request's own abort (the client went away) marks how far the round got: single use
    // keeps nothing it recorded after it (single-use.ts, invariant 5).
    const signal = progress !== undefined ? request.signal : undefined;
    const onAbort = signal && (() => (progress!.cut ??= current.records.length));
    if (progress) {
      progress.round = current;
      // A first round (guarded by an idempotency key) has no state yet: its header is round 0's.
      progress.payload = payload ?? { r: 0, c: callId, o: {}, j: [], text: "" };
      if (signal?.aborted) onAbort!();
      else signal?.addEventListener("abort", onAbort!, { once: true });
    }
    ctx.enter(current, request.signal);
    let outcome: RoundOutcome;
    try {
      outcome = verifyReplay ? await withAmbient("round", ctx.seenTimes, () => current.run()) : await current.run();
    } catch (error) {
      // Author code that throws a ProtocolError asks for exactly that JSON-RPC error.
      if (error instanceof AuthorCodeError && error.cause instanceof ProtocolError) throw error.cause;
      if (error instanceof AuthorCodeError) {
        report(error.cause, info);
        if (observed) observed.outcome = "author_error";
        return spec.onAuthorFailure();
      }
      if (error instanceof DivergenceError) report(error, info);
      throw error;
    } finally {
      ctx.leave();
      if (onAbort) signal!.removeEventListener("abort", onAbort);
      if (observed) observed.steps = current.stepsRun;
    }
    // A foreground round has no wake clock and no signals: sleep() and waitForSignal() there
    // end as author errors, never here.
    if (outcome.type === "sleep" || outcome.type === "wait" || outcome.type === "race") throw new Error("a foreground round cannot sleep or wait for a signal");
    if (observed) observed.outcome = outcome.type;
    if (outcome.type === "task") {
      // The task's id is chosen before anything is written and kept with the continuation: a
      // repeat after a failed or unacknowledged creation finds the same task, never a second.
      await progress?.claim?.();
      const taskId = from?.task ?? newTaskId();
      if (progress) progress.taskId = taskId;
      return storeSafe(() => spec.becomeTask!({ journal: outcome.journal, message: outcome.message, callId, taskId, resume: { suspended: outcome.suspended, context: ctx } }));
    }
    const check = trace && { round, start: spec.start, principal: spec.binding.principal, callId, declared, trace, seenTimes: ctx.seenTimes };
    if (outcome.type === "complete") {
      let result: R;
      try {
        result = spec.shape(outcome.value);
      } catch (error) {
        // Whatever shaping throws (an output schema's own refinement, a value JSON cannot carry)
        // is the author's failure: reported, and answered as one. Never a raw internal error.
        report(error, info);
        if (observed) observed.outcome = "author_error";
        return spec.onAuthorFailure();
      }
      if (check) await checked(report, checkReplay(check, { type: "complete", journal: outcome.journal, result: canonicalJson(result) }, shapeText(spec)), info);
      return result;
    }
    const header: StateHeader = { r: round, c: callId, o: outcome.outstanding };
    if (spec.code.version !== undefined) header.v = spec.code.version;
    if (outcome.partial !== undefined) header.p = outcome.partial;
    const text = (carried > 0 ? payload!.text : "") + recordLines(outcome.journal, carried);
    const minting = calls.mintState(spec.binding, header, text, info);
    const minted = minting instanceof Promise ? await minting : minting;
    const requestState = minted.token;
    if (progress !== undefined && calls.verbatimTokens) progress.minted = requestState;
    if (check) {
      // Replay from the sealed state itself, decoded as another instance would decode it.
      const reopened = await calls.payloadOf(calls.verifyState(requestState, spec.binding), spec.code);
      const expected = {
        type: "input_required" as const,
        journal: reopened.j,
        outstanding: reopened.o,
        partial: reopened.p ?? {},
        pending: outcome.suspended.pending!.fp,
        inputRequests: canonicalJson(outcome.inputRequests),
      };
      await checked(report, checkReplay(check, expected, shapeText(spec)), info);
    }
    // A call whose signal fired is not resumed: its next round replays with a fresh one. With
    // `liveCalls: 0` (several instances without affinity) the entry is not even built.
    if (live.holds && !ctx.callSignal.aborted) {
      live.put(
        requestState,
        {
          suspended: outcome.suspended,
          context: ctx,
          owner: spec.owner,
          payload: payloadFrom(header, outcome.journal, text),
          minted: {
            nonce: minted.nonce,
            expiresAt: minted.expiresAt,
            method: spec.binding.method,
            target: spec.binding.target,
            argumentsDigest: spec.binding.argumentsDigest!,
            principal: spec.binding.principal,
          },
        },
        minted.expiresAt,
        callId,
        // Warm: this round resumed a generator held here (the call's rounds do come back).
        resumed !== undefined || earlier !== undefined,
        spec.argumentBytes,
      );
    }
    if (observed) {
      observed.asks = Object.entries(outcome.inputRequests).map(([key, r]) => ({ key, method: r.method }));
      observed.stateBytesOut = requestState.length;
    }
    return { resultType: "input_required", inputRequests: withRefusals(outcome.inputRequests, outcome.refused), requestState };
  }

  return run;
}
