import { LETTER } from "../../authoring/effect-kinds.js";
import { canonicalEntries, digestOfText } from "../../state/canonical.js";
import { recordLines, type StatePayload } from "../../journal/journal.js";
import type { ErrorInfo } from "../../replay/errors.js";
import type { LiveCalls } from "../../replay/live-calls.js";
import type { Round } from "../../replay/round/round.js";
import type { RoundTrace } from "../../replay/round-trace.js";
import { ErrorCode, type InputRequiredResult, ProtocolError } from "../../wire/index.js";
import { StoreError } from "../../store/index.js";
import { storeSafe, storeSafeNow } from "../admission.js";
import type { Presented } from "../call-state.js";
import type { RequestInfo } from "../options.js";
import type { Continuation, Expiry, Redemption, RoundResponse, Ticket } from "./redeem.js";
import type { CallSpec } from "../call-spec.js";
import type { RoundShare } from "./round-share.js";

// runtime/single-use.ts owns single use of a presented state with a store: the choreography of
// one round around its redemption — run without a claim until a step or a task needs one, keep
// the response with one write, answer a repeat from the store, keep a continuation when a round
// fails after its steps ran. The records themselves are runtime/redeem.ts's.
//
// Invariants:
// 1. A presented state runs at most one round; the same request again gets that round's
//    response from the store, another request `state_redeemed`.
// 2. Every step body runs under a claim: the claim is taken right before the first step (or
//    before creating a task), and a claim that finds the round answered, or an earlier attempt's
//    continuation, drops this attempt — which ran nothing.
// 3. A claim is released only when nothing ran; once steps ran, the round keeps a continuation.
// 4. While a claimed round runs, its record carries how far it got, written once per step,
//    right before it (with the claim, for the first): the values recorded since the last write
//    and the previous step's result. An instance taking over after this one died replays them,
//    and only the step in flight runs again (under the same key) — or the step just completed,
//    if the instance died before its result reached the next write or the response.
// 5. A round whose own request was aborted (the client went away) keeps no outcome: what it
//    recorded after the abort is dropped, and the same request again goes on from before it.

/** Runs one round of a call: the runtime's `execute`, told how far the round got through `progress`. */
export type Execute = <R, T>(
  spec: CallSpec<R, T>,
  request: RequestInfo,
  state: Presented | undefined,
  responses: Map<string, unknown>,
  observed: RoundTrace | undefined,
  progress?: Progress,
) => Promise<R | InputRequiredResult | T>;

/** What single use needs from the round host. */
export interface SingleUseParts {
  redemption: Redemption;
  live: LiveCalls;
  report: (error: unknown, info: ErrorInfo) => void;
  execute: Execute;
  /** The principals' shares the records of presented states' rounds are charged to (none: not charged). */
  share?: RoundShare | undefined;
}

/**
 * What a round is redeemed under: a presented state (its nonce and expiry), or a first request's
 * idempotency key (runtime/single-use/idempotency.ts). `digest` binds the request: the same one again gets
 * the kept response, another one is refused.
 */
export interface Guard {
  nonce: string;
  expiresAt: Expiry;
  digest: string;
  /** The principals' shares this guard's records are charged to (none: not charged). */
  share?: RoundShare | undefined;
}

/** What kind of response a stored one is, for its trace. */
function outcomeOf(result: unknown): RoundTrace["outcome"] {
  const kind = (result as { resultType?: unknown }).resultType;
  return kind === "input_required" ? "input_required" : kind === "task" ? "task" : "complete";
}

/** How far a round got, for the redemption when it fails. */
export interface Progress {
  /** The continuation the round started from, if an earlier attempt left one. */
  from: Continuation | undefined;
  /** For a round run without a claim: claim the state now (before a step, or creating a task). */
  claim?: () => Promise<void>;
  /** Right before a step's body runs: no step starts once the request was aborted; then `claim`. */
  beforeStep?: () => Promise<void>;
  round?: Round;
  payload?: StatePayload | undefined;
  /** Set once the round has started creating its task. */
  taskId?: string;
  /** The state the round's codec sealed, once it has (its response's `requestState`), when that codec's tokens are base64url (ours). */
  minted?: string;
  /** Before each step, when the round recorded more since the last save: record how far the round got. */
  onStep?: () => Promise<void>;
  /** How many records the round had made when its request was aborted (set once, by the abort). */
  cut?: number;
}

const requestAborted = () => new ProtocolError(ErrorCode.InternalError, "The request was cancelled before its round ended; send the same request again to go on", { reason: "request_aborted" });

/**
 * Thrown out of a round run without a claim when its claim finds the round answered already, or
 * an earlier attempt's continuation to go on from: this attempt (which ran nothing) is dropped.
 */
class ClaimedElsewhere extends Error {
  constructor(readonly ticket: Ticket) {
    super("the round is answered, or continued, under another claim");
  }
}

/** Store failures and other conditions a retry of the same request may get past. */
const RETRYABLE = new Set(["store_unavailable", "store_full", "round_in_progress", "request_aborted", "code_unknown"]);

/** No step starts for a request that was aborted: its client is gone, and the step would run for nobody (its retry runs it). */
const stopIfAborted = (progress: Progress) => {
  if (progress.cut !== undefined) throw requestAborted();
};

/**
 * A JSON-RPC error that is the round's own answer to this request (kept, so a repeat gets it),
 * not a store failure or a missing capability — which a retry of the same request can get past.
 */
const isClientMistake = (error: unknown): error is ProtocolError => error instanceof ProtocolError && !RETRYABLE.has(String(error.data?.reason)) && error.code !== ErrorCode.MissingClientCapability;

/** Single use over `redemption`: `(spec, request, state, responses, observed)` serves one redeemed round. */
export function createSingleUse({ redemption, live, report, execute, share }: SingleUseParts) {
  const infoFor = (spec: CallSpec<unknown, unknown>): ErrorInfo => ({ method: spec.binding.method, target: spec.binding.target, round: 0, callId: "" });

  /**
   * A round whose state is redeemed once in the store (see `run`). It runs without a claim
   * ("lazy"): a round that runs no step and creates no task keeps its response with one write
   * (`commit`), one store round trip. Right before its first step, or before creating its task,
   * it claims the state as a round always did — so every step body runs under a claim, exactly
   * as before; a claim that finds the round already answered, or an earlier attempt's
   * continuation, drops this attempt (it ran nothing) and goes on the claimed path.
   */
  async function redeemed<R, T>(spec: CallSpec<R, T>, request: RequestInfo, state: Presented, responses: Map<string, unknown>, observed: RoundTrace | undefined): Promise<R | InputRequiredResult | T> {
    return guarded(spec, request, state, responses, observed, { nonce: state.nonce, expiresAt: state.expiresAt, digest: digestOfText(canonicalEntries(responses)), share });
  }

  /** `redeemed`, for any guard: a presented state's, or a first request's idempotency key's (`state` then undefined). */
  async function guarded<R, T>(
    spec: CallSpec<R, T>,
    request: RequestInfo,
    state: Presented | undefined,
    responses: Map<string, unknown>,
    observed: RoundTrace | undefined,
    guard: Guard,
  ): Promise<R | InputRequiredResult | T> {
    const { nonce, digest, expiresAt } = guard;
    const principal = spec.binding.principal;
    // Past its share a principal's round is refused here, before anything runs (round-share.ts).
    const admitted = guard.share?.admit(principal);
    if (admitted !== undefined) await storeSafe(() => admitted);
    /** Bytes a record of this round now takes in the store, charged to its principal. */
    const spent = (bytes: number | undefined) => guard.share?.spend(principal, bytes ?? 0);
    let ticket: Extract<Ticket, { kind: "run" }> | undefined;
    const progress: Progress = {
      from: undefined,
      claim: async () => {
        if (ticket !== undefined) return;
        const got = await storeSafe(() => redemption.claim(nonce, digest, expiresAt, journalSoFar(progress)));
        if (got.kind === "stored" || got.continuation !== undefined) throw new ClaimedElsewhere(got);
        ticket = got;
      },
      onStep: () => (ticket === undefined ? Promise.resolve() : advance(ticket, progress)),
      beforeStep: async () => {
        stopIfAborted(progress);
        await progress.claim!();
      },
    };
    let result: R | InputRequiredResult | T;
    try {
      result = await execute(spec, request, state, responses, observed, progress);
    } catch (error) {
      if (error instanceof ClaimedElsewhere) return settled(spec, request, state, responses, observed, error.ticket, spent);
      if (ticket !== undefined) return failed(spec, ticket, progress, error, spent);
      // Nothing ran: a client mistake is this round's response; a store failure or a missing
      // capability leaves the state unredeemed, so the retry they ask for can run. A client
      // that went away gets nothing kept: its retry runs the round.
      if (isClientMistake(error) && progress.cut === undefined) {
        const kept = await storeSafe(() => redemption.commit(nonce, digest, expiresAt, { error: error.toJSON() }));
        if (kept.kind === "kept") spent(kept.bytes);
        if (kept.kind === "stored") return storedResponse<R | InputRequiredResult | T>(kept.response, observed);
      }
      throw error;
    }
    if (progress.cut !== undefined) {
      // The client went away during the round: its outcome (perhaps a step stopped by the
      // abort, shaped as the author's failure) is not this call's. Keep where it got.
      if (ticket !== undefined) return failed(spec, ticket, progress, requestAborted(), spent);
      dropParked(spec, result);
      throw requestAborted();
    }
    if (ticket !== undefined) {
      // The round ran; if its response cannot be kept now, the client still gets it, and the
      // redemption keeps trying to store it while the state lives (a repeat finds it then).
      await ticket.finish({ result }).then(spent, (e: unknown) => report(e, infoFor(spec)));
      return result;
    }
    // An in-process store keeps the response at once (no promise per layer); any other, or a
    // state with a record already, goes the way of `commit`.
    const keptNow = storeSafeNow(() => redemption.commitInProcess(nonce, digest, expiresAt, { result }, progress.minted));
    if (keptNow > 0) {
      spent(keptNow);
      return result;
    }
    const kept = await storeSafe(() => redemption.commit(nonce, digest, expiresAt, { result }, progress.minted));
    if (kept.kind === "kept") {
      spent(kept.bytes);
      return result;
    }
    // This round's own response goes nowhere: the generator it parked for its state is dropped.
    dropParked(spec, result);
    if (kept.kind === "stored") return storedResponse<R | InputRequiredResult | T>(kept.response, observed);
    return settled(spec, request, state, responses, observed, await storeSafe(() => redemption.claim(nonce, digest, expiresAt)), spent);
  }

  /** A round's response that goes nowhere: the generator it parked for its new state is dropped. */
  function dropParked(spec: CallSpec<unknown, unknown>, result: unknown): void {
    const minted = (result as { requestState?: unknown } | null)?.requestState;
    if (typeof minted === "string") live.take(minted, spec.owner);
  }

  /**
   * Write how far a claimed round got into its record (see invariant 4). Best effort against a
   * store that is out: the round goes on (its claim is still its own, renewed with this
   * progress once the store is back), and its response reaches the client as before; only an
   * instance dying before then would replay from the last progress written. A claim taken over
   * meanwhile stops the round: another instance runs it now.
   */
  async function advance(ticket: Extract<Ticket, { kind: "run" }>, progress: Progress): Promise<void> {
    const sofar = journalSoFar(progress);
    if (sofar === undefined) return;
    try {
      await ticket.advance(sofar);
    } catch (error) {
      if (!(error instanceof StoreError)) throw error;
    }
  }

  /** The response a round of the same request already gave, as this request's. */
  function storedResponse<X>(response: RoundResponse, observed: RoundTrace | undefined): X {
    if (observed) observed.path = "stored";
    if ("error" in response) throw new ProtocolError(response.error.code, response.error.message, response.error.data);
    const stored = response.result as X;
    if (observed) [observed.outcome, observed.steps, observed.asks] = [outcomeOf(stored), [], []];
    return stored;
  }

  /** A round run under its claim (`ticket`), from the continuation an earlier attempt left if any. */
  async function settled<R, T>(
    spec: CallSpec<R, T>,
    request: RequestInfo,
    state: Presented | undefined,
    responses: Map<string, unknown>,
    observed: RoundTrace | undefined,
    ticket: Ticket,
    spent: (bytes: number | undefined) => void,
  ): Promise<R | InputRequiredResult | T> {
    if (ticket.kind === "stored") return storedResponse<R | InputRequiredResult | T>(ticket.response, observed);
    let result: R | InputRequiredResult | T;
    const progress: Progress = { from: ticket.continuation, onStep: () => advance(ticket, progress), beforeStep: async () => stopIfAborted(progress) };
    try {
      result = await execute(spec, request, state, responses, observed, progress);
    } catch (error) {
      return failed(spec, ticket, progress, error, spent);
    }
    if (progress.cut !== undefined) {
      dropParked(spec, result);
      return failed(spec, ticket, progress, requestAborted(), spent);
    }
    await ticket.finish({ result }).then(spent, (e: unknown) => report(e, infoFor(spec)));
    return result;
  }

  /** A claimed round that failed: keep where it got, its error, or free the state; then the error. */
  async function failed(spec: CallSpec<unknown, unknown>, ticket: Extract<Ticket, { kind: "run" }>, progress: Progress, error: unknown, spent: (bytes: number | undefined) => void): Promise<never> {
    const keep = (e: unknown) => report(e, infoFor(spec));
    // Steps ran (or a task was being created): keep where the call got. The same request
    // again continues from there — after a store failure, or declaring the capability a
    // -32021 asked for — and no step body runs a second time.
    const continuation = continuationOf(progress);
    if (continuation) await ticket.suspend(continuation).then(spent, keep);
    // Nothing ran: a client mistake is this round's response; a store failure or a missing
    // capability frees the state, so the retry they ask for can run.
    else if (isClientMistake(error)) await ticket.finish({ error: error.toJSON() }).then(spent, keep);
    else await ticket.release().catch(keep);
    throw error;
  }

  /** Where a failed round got, if it must not be run again from the token. */
  function continuationOf(progress: Progress): Continuation | undefined {
    const { round } = progress;
    if (round === undefined || (round.stepsRun.length === 0 && progress.taskId === undefined)) return progress.from;
    return journalSoFar(progress);
  }

  /**
   * The round's journal so far as a continuation (the token's records and the ones the round
   * added, up to its request's abort if that came), or where it started from if it has not begun.
   */
  function journalSoFar(progress: Progress): Continuation | undefined {
    const { round, payload } = progress;
    if (round === undefined || payload === undefined) return progress.from;
    const h: Continuation["h"] = { r: payload.r, c: payload.c, o: payload.o };
    if (payload.p !== undefined) h.p = payload.p;
    if (payload.v !== undefined) h.v = payload.v;
    const n = progress.from?.n ?? payload.j.length;
    // Recorded after the client went away: not this call's (a step stopped by the abort runs
    // again) — but for the step in flight at the abort, if it completed: it ran, and its result
    // is kept (the next record made is its own; a step that failed, or was stopped, made none).
    let records = round.records;
    if (progress.cut !== undefined) {
      let end = Math.max(progress.cut, n);
      const next = records[end]?.[0];
      if (next !== undefined && (next.startsWith(LETTER.step) || next.startsWith(LETTER.attempt))) end++;
      records = records.slice(0, end);
    }
    // A round stopped while creating its task ends with the record of `runAsTask()` becoming
    // one; continued, it must reach that point again (and become the same task), not replay it.
    if (progress.taskId !== undefined && records.at(-1)?.[0].startsWith(LETTER.task)) records = records.slice(0, -1);
    const continuation: Continuation = { h, t: recordLines(records), n };
    const task = progress.taskId ?? progress.from?.task;
    if (task !== undefined) continuation.task = task;
    return continuation;
  }

  return { redeemed, guarded };
}
