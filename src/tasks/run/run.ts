import { randomUuid } from "../../state/index.js";
import { StoreError } from "../../store/index.js";
import { capabilityCheck, ProtocolError } from "../../wire/index.js";
import { CallContext } from "../../replay/call-context.js";
import type { ToolDefinition } from "../../authoring/definitions.js";
import { AuthorCodeError, type ErrorInfo } from "../../replay/errors.js";
import type { LiveCalls } from "../../replay/live-calls.js";
import { Round, type RoundOutcome } from "../../replay/round/round.js";
import { deliverTrace, roundTrace, type RoundTrace, traceError } from "../../replay/round-trace.js";
import type { TaskRecord } from "../record/record.js";
import type { Parked } from "../types.js";
import type { createTaskRecords } from "../record/record-store.js";
import { signalFor, signalToken, type TextSigner } from "../signals.js";
import * as transition from "../record/transitions.js";
import { createRunEnds, Stop } from "./run-end.js";

// tasks/run/run.ts owns one run of a task on this instance, under a lease it holds: the generator
// driven through a Round until it parks on asks, sleeps, waits for a signal or ends, every
// write of its progress fenced on the run still holding the task, heartbeats that renew the
// lease and notice a cancel or a takeover. What its edges write is tasks/run/run-end.ts's.
//
// Invariants:
// 1. A run writes only while it holds the task (`transition.owns`): a run that lost its lease,
//    or whose task was cancelled, stops at its next write and writes nothing more.
// 2. A step's result is in the store before the code goes on; a write of progress is retried
//    through store failures until it lands or another run holds the task (past the lease's end
//    too: the write is fenced), so a failed write never loses a step nobody else ran.
// 3. A step never begins without the run knowing it still holds the task for half a lease.
// 4. Every run ends with an outcome written, a parked state, or the task left to the lease's
//    end (a store that does not answer): never in between.

/** What runs need from the engine that owns them. */
export interface RunParts {
  /** This instance's id in leases. */
  me: string;
  defs: ReadonlyMap<string, ToolDefinition>;
  records: ReturnType<typeof createTaskRecords>;
  time: { now(): number; uncertainty(): number };
  /** Local monotonic time for idleness of parked generators. */
  clock: () => number;
  report: (error: unknown, info: ErrorInfo) => void;
  signer: TextSigner;
  signalBaseUrl: string | undefined;
  onRound: ((trace: RoundTrace) => void) | undefined;
  /** Generators of tasks parked on asks, to resume when their answers come to this instance. */
  parked: LiveCalls<Parked & { owner: object }>;
  signals: { heard(taskId: string, name: string, ordinal: number, verdict: { ok: true } | { ok: false; message: string; lost?: boolean }): void };
  /** Take a task that is due now over at once (a value kept early for the wait a run just reached). */
  due: (id: string) => void;
  /** This instance lacks the code `id` was recorded by (tasks/run/lacking.ts). */
  lack: (id: string) => void;
  timing: { leaseMs: number; beatMs: number; graceMs: number; ttlMs: number };
}

/** The runs of one engine: start one (`launch`), end a task (`finish`), and what is running here. */
export function createTaskRuns(parts: RunParts) {
  const { me, defs, records, time, clock, report, signer, signalBaseUrl, onRound, parked, signals, due, lack, timing } = parts;
  const { load, update } = records;
  const { leaseMs, beatMs, graceMs, ttlMs } = timing;
  const running = new Map<string, { cancel: () => void; shutdown: () => void }>();
  const runs = new Set<Promise<void>>();

  /** A lease for one run on this instance (`run` fences a stale run of the same task here). */
  const lease = (run: string | undefined) => ({ owner: me, ...(run !== undefined ? { run } : {}), until: time.now() + leaseMs });
  const holderOf = (run: string | undefined): transition.Holder => ({ owner: me, run });
  const infoOf = (r: TaskRecord): ErrorInfo => ({ method: "tools/call", target: r.tool, round: 0, callId: r.call, taskId: r.id });
  /** A new run of a task on this instance: a lease of its own, and the task's runs counted. */
  const newRun: transition.NewRun = (r) => ({ lease: lease(randomUuid()), runs: (r.runs ?? 0) + 1 });

  const { finish, prepare, settle, settleFailure } = createRunEnds({ me, defs, update, report, parked, clock, ttlMs, time, due, lack });

  // Set by a shutdown: a task taken over after it (a sweep, a signal or a start in flight when
  // the instance began to close) is handed back at once rather than run by a closing instance.
  let shutDown = false;

  function launch(record: TaskRecord, resume: Parked | undefined): Promise<void> {
    const started = shutDown ? handBackUnrun(record) : drive(record, resume);
    const run = started.catch((error: unknown) => report(error, infoOf(record)));
    runs.add(run);
    void run.finally(() => runs.delete(run));
    return run;
  }

  /** A task leased here after the shutdown: its lease released, so another instance takes it over at once (a store that fails: at the lease's end). */
  async function handBackUnrun(record: TaskRecord): Promise<void> {
    await update(record.id, (r) => transition.release(r, holderOf(record.lease?.run))).catch(() => {});
  }

  /** Run the task (leased by this instance) until it parks on asks or ends. */
  async function drive(record: TaskRecord, resume: Parked | undefined): Promise<void> {
    const id = record.id;
    // This run's identity in the lease: every write below is conditional on it still holding.
    const run = record.lease?.run;
    const holder = holderOf(run);
    const prepared = await prepare(record, run);
    if (prepared === undefined) return;
    const { def, input } = prepared;
    const context = resume?.context ?? new CallContext(record.principal, record.call);
    const abort = context.callSignal.ensure();
    // This run as a round trace (when the runtime has an observer): numbered by the task's runs.
    const observed: RoundTrace | undefined =
      onRound === undefined
        ? undefined
        : roundTrace({
            method: "tools/call",
            target: def.name,
            definition: def.name,
            callId: record.call,
            round: record.runs ?? 0,
            path: resume ? "resumed" : record.journal.length > 0 ? "replayed" : "first",
            replayed: resume ? 0 : record.journal.length,
            taskId: id,
          });
    const startedMs = performance.now();
    let stop: Stop | undefined;
    let grace: ReturnType<typeof setTimeout> | undefined;
    const halt = (why: Stop["why"]) => {
      if (stop) return;
      stop = new Stop(why);
      abort.abort(stop);
      if (why === "cancelled") grace = setTimeout(() => void finish(id, { status: "cancelled" }).catch(() => {}), graceMs);
    };
    running.set(id, { cancel: () => halt("cancelled"), shutdown: () => halt("shutdown") });
    // Until when this run's lease holds, as this run last wrote it.
    let held = record.lease?.until ?? time.now() + leaseMs;
    // How long it holds yet, counted on the store's clock as late as it may be: another instance
    // whose clock reads early waits as long again past the end before it takes over (leaseEnded).
    const heldFor = () => held - time.now() - time.uncertainty();
    const holding = <T extends { record: TaskRecord | undefined; written: boolean }>(saved: T): T => {
      if (saved.written && saved.record?.lease?.owner === me) held = saved.record.lease.until;
      return saved;
    };
    /**
     * A write of this run's progress, retried through store failures: a step's result must not
     * be lost to one failed (or unacknowledged) write, or the task's next run would run the step
     * again. Past the lease's end too: the write is fenced on this run (a compare-and-swap on
     * who holds the task), so it lands if nobody took the task over meanwhile and is refused if
     * someone did — giving up at the lease's end lost steps nobody else ever ran. It stops when
     * the run is stopped (the heartbeat finds a successor, a cancel, a shutdown) or the task's
     * lifetime is over. Each try re-reads the record, so a write that landed after its timeout
     * is simply found (and written over with the same content).
     */
    const persisting = async <T>(write: () => Promise<T>): Promise<T> => {
      for (let delay = 10; ; delay = Math.min(delay * 2, 200)) {
        try {
          return await write();
        } catch (error) {
          if (!(error instanceof StoreError) || stop !== undefined || time.now() + delay >= record.created + record.ttlMs) throw error;
          await new Promise((r) => setTimeout(r, delay));
        }
      }
    };

    /**
     * Write what this run did, on the condition that it still holds the task (the transition is
     * fenced on its run); if it does not any more, it stops here — cancelled, or another run has it.
     */
    const persistOwned = async (change: (r: TaskRecord) => TaskRecord | false, charged: boolean): Promise<void> => {
      const saved = holding(await persisting(() => update(id, change, charged)));
      if (!saved.written) halt(saved.record?.cancel === true ? "cancelled" : "lost");
      if (stop) throw stop;
    };

    const heartbeat = setInterval(() => {
      void (async () => {
        const current = (await load(id))?.record;
        if (current === undefined || current.status === "completed" || current.status === "failed" || current.status === "cancelled" || !transition.holds(current, holder)) return halt("lost");
        if (current.cancel === true) return halt("cancelled");
        if (current.lease!.until - time.now() - time.uncertainty() < leaseMs / 2) holding(await update(id, (r) => transition.renew(r, holder, lease(run))));
      })().catch(() => {
        // A store that does not answer: the lease runs out and another instance takes over.
      });
    }, beatMs);

    const round = new Round(
      {
        start: () => def.run(input as Parameters<typeof def.run>[0], context),
        journal: record.journal,
        removedPatches: def.removedPatches,
        outstanding: record.outstanding,
        partial: record.partial,
        responses: new Map(Object.entries(record.answers)),
        declared: capabilityCheck(record.caps),
        signal: () => abort.signal,
        randomUUID: randomUuid,
        clock,
        task: "inside",
        onStep: (journal) => persistOwned((r) => transition.recordSteps(r, holder, journal.slice(), lease(run)), true),
        wakeClock: time.now,
        signalFor: (name, ordinal) => signalFor(record, name, ordinal, time.now()),
        onSignal: (name, ordinal, verdict) => signals.heard(id, name, ordinal, verdict),
        signalToken: (name, ordinal) => signalToken(signer, record, name, ordinal),
        ...(signalBaseUrl !== undefined ? { signalUrl: (token: string) => signalBaseUrl + token } : {}),
        onProgress: (message, done, total) => {
          const text = done === undefined ? message : `${message} (${done}${total === undefined ? "" : `/${total}`})`;
          return persistOwned((r) => transition.reportProgress(r, holder, text, lease(run)), true);
        },
        beforeStep: async () => {
          if (stop) throw stop;
          // A step's result must be written before the lease ends, or a successor runs the step
          // again: with less than half the lease ahead (heartbeats renew below that, so they
          // could not run — a long synchronous step, a paused process, a slow store — or are
          // about to), renew first, conditionally on still holding the task. A quarter was too
          // little on a loaded 2-core machine: a run began a step with 76 ms of a 300 ms lease
          // left and its successor ran the step again 76 ms later (the fault suite, in CI).
          if (heldFor() >= leaseMs / 2) return;
          await persistOwned((r) => transition.renew(r, holder, lease(run)), false);
        },
      },
      resume?.suspended,
    );
    try {
      let outcome: RoundOutcome;
      context.enter(round);
      try {
        outcome = await round.run();
      } finally {
        context.leave();
      }
      if (stop) throw stop;
      if (observed) {
        observed.steps = round.stepsRun;
        observed.outcome = outcome.type;
        if (outcome.type === "input_required") observed.asks = Object.entries(outcome.inputRequests).map(([key, r]) => ({ key, method: r.method }));
      }
      await persisting(() => settle(record, def, outcome, { suspended: outcome.type === "input_required" ? outcome.suspended : undefined, context }, run));
    } catch (error) {
      if (observed) {
        observed.steps = round.stepsRun;
        const stopped = stop ?? (error instanceof Stop ? error : undefined);
        if (stopped) [observed.outcome, observed.error] = ["stopped", { code: undefined, reason: stopped.why }];
        else if (error instanceof AuthorCodeError && !(error.cause instanceof ProtocolError)) observed.outcome = "author_error";
        else [observed.outcome, observed.error] = ["error", traceError(error instanceof AuthorCodeError ? error.cause : error)];
      }
      await settleFailure(record, def, error, stop, run);
    } finally {
      clearInterval(heartbeat);
      clearTimeout(grace);
      running.delete(id);
      if (observed) {
        observed.ms = performance.now() - startedMs;
        deliverTrace(onRound!, observed);
      }
    }
  }

  return {
    launch,
    finish,
    newRun,
    /** Whether a run of `id` is under way on this instance. */
    isRunning: (id: string) => running.has(id),
    /** Stop the run of `id` here now (a cancel acknowledged): it writes `cancelled`. */
    cancel: (id: string) => running.get(id)?.cancel(),
    /** Stop every run here for a shutdown: each hands its task back. */
    shutdownAll: () => {
      shutDown = true;
      for (const r of running.values()) r.shutdown();
    },
    /** Every run under way here. */
    inFlight: () => [...runs],
  };
}
