import { type JournalRecord, waitsOn } from "../../journal/journal.js";
import type { RaceWaiting } from "../../replay/round/types.js";
import type { InputRequest } from "../../wire/index.js";
import { isTerminal, leaseEnded, type TaskRecord, wireKeyFor } from "./record.js";

export { leaseEnded };

// tasks/transitions.ts owns every change of a task record, each a pure function of the record
// as read (and of the clock and lease it is given): `false` when the change does not apply to
// the record as it is now, the new record otherwise. The engine applies them with one
// compare-and-swap each (tasks/record-store.ts), so what a transition decides is decided on the
// record the store holds, never on a copy read earlier. Testable without a store.
//
// The states a record can be in (`stateOf`), and the transitions between them:
//
//   start ─► working·running ─┬─ park ────────► input_required ── answer (all keys) ─► working·running
//                              ├─ sleep ───────► working·asleep ─── wake ─────────────► working·running
//                              ├─ awaitSignal ─► working·awaiting ─ signal | wake ────► working·running
//                              ├─ awaitRace ───► working·racing ─── signal | wake ────► working·running
//                              ├─ park (a race's asks) ► input_required ─ answer (any key) | signal | wake ─► working·running
//                              ├─ release ─────► working·running, lease expired ─ wake (take over) ─► working·running
//                              ├─ hold ────────► working·held ───── retryHeld ─────────► working·asleep (due now)
//                              │                                └─ failHeld ──────────► failed
//                              ├─ complete ────► completed
//                              ├─ fail ────────► failed
//                              └─ cancel ──────► cancelled  (from any state but a terminal one)
//
// Invariants:
// 1. A terminal record (completed, failed, cancelled) never changes again.
// 2. Only the run holding the lease (`Holder`) records progress, parks, sleeps, waits, completes
//    or fails the task; a cancel is the one outcome anyone may write.
// 3. A cancel acknowledged before an outcome wins over that outcome.
// 4. A wire key is never issued twice in a task's life.

/** Which run of which instance acts: the fence every owner-only transition checks. */
export interface Holder {
  /** The instance. */
  owner: string;
  /** The run on that instance (absent for records leased before runs were fenced). */
  run: string | undefined;
}

/** A lease: who holds the task, until when (store clock). */
export type Lease = NonNullable<TaskRecord["lease"]>;

/** The phases of a working task. */
export type WorkingPhase = "running" | "asleep" | "awaiting_signal" | "racing" | "held";

/**
 * A task record as the union of its states, discriminated by `status` and, while working, by
 * `phase`. The store keeps one flat record (its format unchanged); this is the view transitions
 * and operators reason with.
 */
export type TaskState =
  | { status: "working"; phase: "running"; lease: Lease | undefined; cancelling: boolean }
  | { status: "working"; phase: "asleep"; wake: number }
  | { status: "working"; phase: "awaiting_signal"; signal: string; ordinal: number; deadline: number | undefined }
  | { status: "working"; phase: "racing"; signals: string[]; until: number | undefined }
  | { status: "working"; phase: "held"; reason: string; since: number }
  | { status: "input_required"; wireKeys: string[] }
  | { status: "completed"; result: Record<string, unknown> }
  | { status: "failed"; error: { code: number; message: string; data?: unknown } }
  | { status: "cancelled" };

/** The state `r` is in. */
export function stateOf(r: TaskRecord): TaskState {
  switch (r.status) {
    case "working":
      if (r.lease === undefined && r.held !== undefined) return { status: "working", phase: "held", reason: r.held.reason, since: r.held.at };
      if (r.lease === undefined && r.awaits !== undefined) return { status: "working", phase: "awaiting_signal", signal: r.awaits.name, ordinal: r.awaits.i, deadline: r.awaits.deadline };
      if (r.lease === undefined && r.race !== undefined) return { status: "working", phase: "racing", signals: r.race.w.map((w) => w.name), until: r.race.until };
      if (r.lease === undefined && r.wake !== undefined) return { status: "working", phase: "asleep", wake: r.wake };
      return { status: "working", phase: "running", lease: r.lease, cancelling: r.cancel === true };
    case "input_required":
      return { status: "input_required", wireKeys: r.waiting.filter((w) => !Object.hasOwn(r.answers, w.key)).map((w) => w.wire) };
    case "completed":
      return { status: "completed", result: r.result ?? {} };
    case "failed":
      return { status: "failed", error: r.error ?? { code: -32603, message: "The task failed" } };
    case "cancelled":
      return { status: "cancelled" };
  }
}

/** What a new task is made of: the call that becomes it. */
export interface TaskStart {
  id: string;
  def: { name: string; version?: string | undefined };
  /** The input as the record keeps it (record.ts `storedInput`). */
  stored: { args: Record<string, unknown>; input?: string };
  principal: string | undefined;
  callId: string;
  caps: unknown;
  message: string | undefined;
  /** What the call did before it became a task. */
  journal: JournalRecord[];
}

/** A new task (`tools/call` made it one): working, held by a new run on this instance, nothing asked yet. */
export function start(task: TaskStart, now: number, timing: { ttlMs: number; pollMs: number }, newRun: NewRun): TaskRecord {
  return {
    v: 1,
    id: task.id,
    rev: 0,
    tool: task.def.name,
    ...(task.def.version !== undefined ? { version: task.def.version } : {}),
    ...task.stored,
    ...(task.principal !== undefined ? { principal: task.principal } : {}),
    call: task.callId,
    caps: task.caps ?? {},
    status: "working",
    ...(task.message !== undefined ? { message: task.message } : {}),
    created: now,
    updated: now,
    ttlMs: timing.ttlMs,
    pollMs: timing.pollMs,
    journal: task.journal,
    outstanding: {},
    waiting: [],
    answers: {},
    partial: {},
    used: [],
    ...newRun({}),
  };
}

/** Whether `holder` holds the lease on `r`. */
export const holds = (r: TaskRecord, holder: Holder): boolean => r.lease?.owner === holder.owner && r.lease.run === holder.run;

/** Whether `holder` runs `r` now: working, its lease, and no cancel under way. */
export const owns = (r: TaskRecord, holder: Holder): boolean => r.status === "working" && holds(r, holder) && r.cancel !== true;

/** What a record keeps when nobody holds it any more: no lease, no live generator marker. */
function unheld(r: TaskRecord): TaskRecord {
  const { lease: _lease, park: _park, ...rest } = r;
  return rest;
}

/** No asks outstanding, no answers collected. */
const NO_ASKS = { outstanding: {}, partial: {}, answers: {}, waiting: [] } satisfies Partial<TaskRecord>;

/** How many waits on `name` the journal records (`W<name>` records, and races that waited on it): the ones the task has passed. */
export const waitsPassed = waitsOn;

/**
 * `r` with `journal`, and every wait the journal now records (one more `W<name>` record, or race
 * on it, than its ordinal) closed: the wait the task was on — its value and deadline dropped —
 * a race's waits once it ended, and any wait a value was kept for early; their keys kept so
 * their tokens are refused from now on.
 */
export function withJournal(r: TaskRecord, journal: JournalRecord[]): TaskRecord {
  if (r.awaits === undefined && r.early === undefined && r.race === undefined && r.arrived === undefined) return { ...r, journal };
  const passed = new Map<string, number>();
  const isPassed = (name: string, i: number) => {
    let n = passed.get(name);
    if (n === undefined) passed.set(name, (n = waitsPassed(journal, name)));
    return n > i;
  };
  const { awaits, arrived, early, closed, race, ...rest } = r;
  const nowClosed = new Set(closed);
  const next: TaskRecord = { ...rest, journal };
  if (awaits !== undefined && isPassed(awaits.name, awaits.i)) nowClosed.add(waitKey(awaits.name, awaits.i));
  else if (awaits !== undefined) next.awaits = awaits;
  if (arrived !== undefined && !isPassed(arrived.name, arrived.i)) next.arrived = arrived;
  // A race that ended (its end recorded at `at`): every wait it had is over, won or lost.
  if (race !== undefined && journal.length > race.at) for (const w of race.w) nowClosed.add(waitKey(w.name, w.i));
  else if (race !== undefined) next.race = race;
  const left: NonNullable<TaskRecord["early"]> = [];
  for (const e of early ?? []) {
    if (isPassed(e.name, e.i)) nowClosed.add(waitKey(e.name, e.i));
    else left.push(e);
  }
  if (left.length > 0) next.early = left;
  if (nowClosed.size > 0) next.closed = [...nowClosed];
  return next;
}

/** The key of one wait in `closed`. */
export const waitKey = (name: string, ordinal: number): string => `${name}#${ordinal}`;

/** Renew the holder's lease (a heartbeat, or before a step when the lease runs short). */
export function renew(r: TaskRecord, holder: Holder, lease: Lease): TaskRecord | false {
  return owns(r, holder) ? { ...r, lease } : false;
}

/**
 * Give the task up for another instance at once, its lease expired now: this instance shuts
 * down (`release`), or it has no definition for the tool (`handOver`, whatever the record's
 * state). The sweeper of any instance takes it over.
 */
export function release(r: TaskRecord, holder: Holder): TaskRecord | false {
  return owns(r, holder) ? { ...r, lease: { owner: holder.owner, until: 0 } } : false;
}

/** See `release`. */
export function handOver(r: TaskRecord, holder: Holder): TaskRecord | false {
  return holds(r, holder) ? { ...r, lease: { owner: holder.owner, until: 0 } } : false;
}

/** Steps the run recorded: the journal grows, the answers the parked asks got are in it now. */
export function recordSteps(r: TaskRecord, holder: Holder, journal: JournalRecord[], lease: Lease): TaskRecord | false {
  // The parked asks' answers are in the journal now: their bookkeeping goes, or a takeover
  // would take the journal's end for the park point (patched() = old code).
  return owns(r, holder) ? { ...withJournal(r, journal), ...NO_ASKS, lease } : false;
}

/** The run reported progress: the status message. */
export function reportProgress(r: TaskRecord, holder: Holder, message: string, lease: Lease): TaskRecord | false {
  return owns(r, holder) ? { ...r, message, lease } : false;
}

/** What a run parks on: the asks of its round and what the round recorded. */
export interface AsksOutcome {
  journal: JournalRecord[];
  /** The asks are a race's branches: what else the race waits for. */
  race?: RaceWaiting | undefined;
  /** Every ask outstanding (runtime key → fingerprint). */
  outstanding: Record<string, string>;
  partial: Record<string, string> | undefined;
  /** The asks to send (refusals already folded in), by runtime key. */
  requests: Record<string, InputRequest>;
}

/**
 * The task waits for answers (`input_required`): nobody holds it, each ask gets a wire key never
 * used before in this task, and `nonce` marks the generator parked live on this instance.
 */
export function park(r: TaskRecord, holder: Holder, outcome: AsksOutcome, nonce: string, now: number = r.updated): TaskRecord | false {
  if (!owns(r, holder)) return false;
  const used = new Set(r.used);
  const waiting = Object.entries(outcome.requests).map(([key, request]) => {
    const wire = wireKeyFor(key, used);
    used.add(wire);
    return { wire, key, fp: outcome.outstanding[key]!, request };
  });
  const { lease: _lease, ...rest } = r;
  const recorded = withJournal(rest, outcome.journal);
  return {
    ...(outcome.race === undefined ? recorded : { ...unraced(recorded), ...racing(recorded, outcome.race, outcome.journal.length, now) }),
    status: "input_required",
    message: "Waiting for input",
    outstanding: outcome.outstanding,
    partial: outcome.partial ?? {},
    waiting,
    answers: {},
    used: [...used],
    park: nonce,
  };
}

/** The task sleeps until `until` (store clock): held by nobody, due then in the store. */
export function sleep(r: TaskRecord, holder: Holder, journal: JournalRecord[], until: number): TaskRecord | false {
  if (!owns(r, holder)) return false;
  return { ...unheld(withJournal(r, journal)), ...NO_ASKS, wake: until };
}

/** A wait for a signal the run ended on. */
export interface WaitOutcome {
  journal: JournalRecord[];
  name: string;
  ordinal: number;
  timeoutMs: number | undefined;
  /** The wait's schema refused the value that came (why): it is dropped, the token usable again. */
  refusal?: string | undefined;
}

/**
 * The task waits for a signal: held by nobody (lease, park, wake and any refused value dropped),
 * due at the wait's deadline if it has one. A wait that was already on (a value its schema
 * refused) keeps its deadline. A value kept early for this wait that the run did not see (it
 * came while the run was on its way) makes the task due now: a new run takes it at once.
 */
export function awaitSignal(r: TaskRecord, holder: Holder, outcome: WaitOutcome, now: number): TaskRecord | false {
  if (!owns(r, holder)) return false;
  const { lease: _lease, park: _park, arrived: _arrived, wake: _wake, early, ...rest } = withJournal(r, outcome.journal);
  const same = r.awaits?.name === outcome.name && r.awaits.i === outcome.ordinal;
  const deadline = same ? r.awaits!.deadline : outcome.timeoutMs === undefined ? undefined : now + outcome.timeoutMs;
  const forThis = (e: { name: string; i: number }) => e.name === outcome.name && e.i === outcome.ordinal;
  const kept = outcome.refusal === undefined ? early : early?.filter((e) => !forThis(e));
  const due = kept?.some(forThis) === true ? now : deadline;
  return {
    ...rest,
    ...NO_ASKS,
    ...(kept !== undefined && kept.length > 0 ? { early: kept } : {}),
    ...(outcome.refusal !== undefined ? { refusedSignal: { wait: waitKey(outcome.name, outcome.ordinal), reason: outcome.refusal, at: now } } : {}),
    awaits: { name: outcome.name, i: outcome.ordinal, ...(deadline !== undefined ? { deadline } : {}) },
    ...(due !== undefined ? { wake: due } : {}),
  };
}

/** A race's wait (in its round's outcome) the task waits in now. */
export interface RaceOutcome extends RaceWaiting {
  journal: JournalRecord[];
}

/** A record without what a wait, a sleep or an earlier race left (`racing` puts the race's own). */
function unraced(r: TaskRecord): TaskRecord {
  const { arrived: _arrived, wake: _wake, early: _early, awaits: _awaits, race: _race, ...rest } = r;
  return rest;
}

/**
 * What a record waiting in a race holds: the race (its end recorded at `at`), values kept early
 * for its waits but refused by their schemas dropped (the tokens open again), and due at its
 * first timer — or now, when a value kept early for one of its waits was not seen by the run.
 */
function racing(r: TaskRecord, race: RaceWaiting, at: number, now: number): Partial<TaskRecord> {
  const refused = (e: { name: string; i: number }) => race.refusals.some((x) => x.name === e.name && x.ordinal === e.i);
  const kept = r.early?.filter((e) => !refused(e));
  const unseen = kept?.some((e) => race.signals.some((w) => w.name === e.name && w.ordinal === e.i)) === true;
  const due = unseen ? now : race.until;
  const last = race.refusals.at(-1);
  return {
    ...(kept !== undefined && kept.length > 0 ? { early: kept } : {}),
    ...(last !== undefined ? { refusedSignal: { wait: waitKey(last.name, last.ordinal), reason: last.message, at: now } } : {}),
    race: { at, w: race.signals.map((w) => ({ name: w.name, i: w.ordinal })), ...(race.until !== undefined ? { until: race.until } : {}) },
    ...(due !== undefined ? { wake: due } : {}),
  };
}

/**
 * The task waits in a race that has no ask: held by nobody, for any of its signals, due at its
 * first timer (the sweeper then runs it, and the timer's branch wins).
 */
export function awaitRace(r: TaskRecord, holder: Holder, outcome: RaceOutcome, now: number): TaskRecord | false {
  if (!owns(r, holder)) return false;
  const recorded = withJournal(r, outcome.journal);
  const { lease: _lease, park: _park, ...rest } = unraced(recorded);
  return { ...rest, ...NO_ASKS, ...racing(recorded, outcome, outcome.journal.length, now) };
}

/** A new run's lease and the record's run count advanced. */
export type NewRun = (r: Pick<TaskRecord, "runs">) => Pick<TaskRecord, "lease" | "runs">;

/**
 * Answers for the asks a task is parked on, by wire key (`tasks/update`): those not outstanding
 * are ignored; once every ask has an answer the task is working again under a new run here.
 */
export function answer(r: TaskRecord, responses: ReadonlyMap<string, unknown>, newRun: NewRun): TaskRecord | false {
  if (r.status !== "input_required") return false;
  const answers = { ...r.answers };
  let changed = false;
  for (const w of r.waiting) {
    if (responses.has(w.wire) && !Object.hasOwn(answers, w.key)) {
      answers[w.key] = responses.get(w.wire);
      changed = true;
    }
  }
  if (!changed) return false;
  // A race's asks: any one answer ends it (its timer no longer wakes the task).
  if (r.race !== undefined) {
    const { wake: _wake, ...rest } = r;
    return { ...rest, answers, status: "working", message: undefined, ...newRun(r) };
  }
  const complete = r.waiting.every((w) => Object.hasOwn(answers, w.key));
  return complete ? { ...r, answers, status: "working", message: undefined, ...newRun(r) } : { ...r, answers };
}

/** A race's asks are no longer asked: the task goes on (a signal or a timer won), the generator parked for them forgotten. */
function askingNoMore(r: TaskRecord): TaskRecord {
  if (r.status !== "input_required") return r;
  const { park: _park, ...rest } = r;
  return { ...rest, ...NO_ASKS, status: "working", message: undefined };
}

/** A signal's value for the wait the task is on: the task runs on under a new run here. */
export function signal(r: TaskRecord, name: string, ordinal: number, value: unknown, newRun: NewRun): TaskRecord {
  const { wake: _wake, ...rest } = askingNoMore(r);
  return { ...rest, arrived: { name, i: ordinal, value }, ...newRun(rest) };
}

/** A signal's value for a wait the task has not reached yet: kept in the task until it does. */
export function keepEarly(r: TaskRecord, name: string, ordinal: number, value: unknown): TaskRecord {
  return { ...r, early: [...(r.early ?? []), { name, i: ordinal, value }] };
}

/**
 * Wake a working task that is due: asleep past its wake time, waiting past its deadline, or
 * running under a lease that ran out (its instance died or shut down) — a new run takes it over.
 * Both times are judged as certainly past on the store's clock (`uncertainty`): a sleep never
 * ends early, however this instance's reading of the clock errs.
 */
export function wake(r: TaskRecord, now: number, newRun: NewRun, uncertainty = 0): TaskRecord | false {
  // A race's asks wait for answers, unless its timer ended.
  const racingAsks = r.status === "input_required" && r.race !== undefined && r.wake !== undefined;
  if (
    (r.status !== "working" && !racingAsks) ||
    r.held !== undefined ||
    r.cancel === true ||
    (r.lease !== undefined && !leaseEnded(r.lease, now, uncertainty)) ||
    (r.wake !== undefined && r.wake > now - uncertainty)
  )
    return false;
  const { wake: _wake, ...rest } = askingNoMore(r);
  return { ...rest, ...newRun(rest) };
}

/** How a task ends. */
export type Outcome =
  | { status: "completed"; result: Record<string, unknown>; journal?: JournalRecord[] }
  | { status: "failed"; message: string; error: { code: number; message: string; data?: unknown } }
  | { status: "cancelled" };

/** The record cancelled by a cancel that was acknowledged: at once, whoever holds it. */
function cancelled(r: TaskRecord): TaskRecord {
  return { ...unheld(r), status: "cancelled", message: "Cancelled", ...NO_ASKS };
}

/**
 * End the task with `outcome` — by the run that holds it (`holder`), or a cancellation by anyone.
 * A cancel acknowledged earlier wins over an outcome that arrives after it.
 */
export function finish(r: TaskRecord, outcome: Outcome, holder?: Holder): TaskRecord | false {
  if (isTerminal(r.status)) return false;
  if (r.cancel === true || outcome.status === "cancelled") return cancelled(r);
  if (holder === undefined || !holds(r, holder)) return false;
  // The waits its last journal passed closed (a value taken is charged then); values kept for
  // waits the task never reached go with its end (their tokens are refused now).
  const last = outcome.status === "completed" && outcome.journal !== undefined ? withJournal(r, outcome.journal) : r;
  const { early: _early, ...held } = unheld(last);
  const ended = { ...held, ...NO_ASKS, status: outcome.status, message: outcome.status === "failed" ? outcome.message : undefined };
  return outcome.status === "completed" ? { ...ended, result: outcome.result } : { ...ended, error: outcome.error };
}

/** How long the outcome of a task ended by its lifetime stays readable after that end. */
export const OUTCOME_KEPT_MS = 10 * 60_000;

/** What a task reaching its lifetime was doing, for its failure's message. */
function doing(r: TaskRecord): string {
  if (r.status === "input_required") return "waiting for answers to its asks";
  if (r.held !== undefined && r.lease === undefined) return `held for an operator (${r.held.reason})`;
  if (r.awaits !== undefined && r.lease === undefined) return `waiting for signal "${r.awaits.name}"`;
  if (r.race !== undefined && r.lease === undefined) return "waiting in a race";
  if (r.wake !== undefined && r.lease === undefined) return "asleep";
  return "running";
}

/**
 * A task that reached the end of its lifetime (`ttlMs` from its creation) without ending: failed
 * (`task_lifetime_ended`, and what it was doing), whoever holds it — a run still going finds
 * it ended at its next heartbeat — and kept `OUTCOME_KEPT_MS` more, so `tasks/get` reads that
 * outcome instead of an unknown task.
 */
export function outlive(r: TaskRecord, now: number): TaskRecord | false {
  if (isTerminal(r.status) || now < r.created + r.ttlMs) return false;
  const held = unraced(unheld(r));
  const message = `The task reached the end of its lifetime (ttlMs ${r.ttlMs}) while ${doing(r)}`;
  return { ...held, ...NO_ASKS, status: "failed", message, error: { code: -32603, message, data: { reason: "task_lifetime_ended" } }, keptUntil: now + OUTCOME_KEPT_MS };
}

/**
 * The record cancelled (`false`: nothing to change — it ended, or a cancel is under way). A task
 * running under a live lease is marked, and its run stops at its next heartbeat (it then writes
 * `cancelled`); any other task — asking, asleep, waiting for a signal, its owner gone — is
 * cancelled at once. One transition for `tasks/cancel` and for an operator's cancel.
 */
export function cancel(r: TaskRecord, now: number, uncertainty = 0): TaskRecord | false {
  if (isTerminal(r.status) || r.cancel === true) return false;
  const runningElsewhere = r.status === "working" && r.lease !== undefined && !leaseEnded(r.lease, now, uncertainty);
  return runningElsewhere ? { ...r, cancel: true } : { ...cancelled(r), cancel: true };
}

/** Why a task is held for an operator. */
export type Hold = Omit<NonNullable<TaskRecord["held"]>, "at">;

/** The status message of a held task. */
export const heldMessage = (reason: string): string => `needs attention: ${reason}`;

/**
 * The run holds the task for an operator instead of ending it (`onTaskFailure: "hold"`): working,
 * held by nobody, never due (no lease, no wake), its journal as the store has it — every step
 * the run completed is in it already.
 */
export function hold(r: TaskRecord, holder: Holder, why: Hold, now: number): TaskRecord | false {
  if (!owns(r, holder)) return false;
  const { wake: _wake, ...rest } = unheld(r);
  return { ...rest, ...NO_ASKS, message: heldMessage(why.reason), held: { ...why, at: now } };
}

/**
 * An operator retries a held task: due now (whichever instance sweeps next runs it), its journal
 * cut before the failed step's attempts (`cut`, from `journal.ts`'s `beforeFailedAttempts`) so
 * the step starts over at attempt 1 under the same key; a diverged task replays as it is (the
 * fix is the code deployed since). `false`: not held.
 */
export function retryHeld(r: TaskRecord, now: number, cut: (journal: JournalRecord[], step: string) => JournalRecord[]): TaskRecord | false {
  if (r.status !== "working" || r.held === undefined || r.cancel === true) return false;
  const { held, message: _message, ...rest } = r;
  return { ...rest, journal: held.step === undefined ? r.journal : cut(r.journal, held.step), wake: now, retried: now };
}

/** An operator ends a held task: failed, with `reason` (or why it was held). `false`: not held. */
export function failHeld(r: TaskRecord, reason: string | undefined): TaskRecord | false {
  const held = r.held;
  if (r.status !== "working" || held === undefined) return false;
  const { held: _held, ...rest } = unheld(r);
  const message = reason ?? `Failed by an operator: ${held.reason}`;
  return { ...rest, ...NO_ASKS, status: "failed", message, error: { code: -32603, message, data: { reason: "failed_by_operator", held: held.reason } } };
}
