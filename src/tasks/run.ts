import { decodeValue, encodeBase64url, randomBytes, randomUuid } from "../state/index.js";
import { StoreError } from "../store/index.js";
import { capabilityCheck, ErrorCode, ProtocolError } from "../wire/index.js";
import { CallContext } from "../replay/call-context.js";
import { withRefusals } from "../replay/answers.js";
import type { ToolDefinition } from "../authoring/definitions.js";
import { AuthorCodeError, authorFailureText, type ErrorInfo } from "../replay/errors.js";
import type { LiveCalls } from "../replay/live-calls.js";
import { Round, type RoundOutcome } from "../replay/round/round.js";
import { deliverTrace, roundTrace, type RoundTrace, traceError } from "../replay/round-trace.js";
import { errorToolResult, ResultShapeError, shapeToolResult } from "../authoring/results.js";
import type { TaskRecord } from "./record/record.js";
import type { Parked } from "./types.js";
import type { createTaskRecords } from "./record/record-store.js";
import { signalFor, signalToken, type TextSigner } from "./signals.js";
import * as transition from "./record/transitions.js";

// tasks/run.ts owns one run of a task on this instance, under a lease it holds: the generator
// driven through a Round until it parks on asks, sleeps, waits for a signal or ends, every
// write of its progress fenced on the run still holding the task, heartbeats that renew the
// lease and notice a cancel or a takeover, and what the run's end writes.
//
// Invariants:
// 1. A run writes only while it holds the task (`transition.owns`): a run that lost its lease,
//    or whose task was cancelled, stops at its next write and writes nothing more.
// 2. A step's result is in the store before the code goes on; a write of progress is retried
//    through store failures while the lease holds, so one failed write never loses a step.
// 3. A step never begins without the run knowing it still holds the task for a quarter lease.
// 4. Every run ends with an outcome written, a parked state, or the task left to the lease's
//    end (a store that does not answer): never in between.

/** Why a run stopped without an outcome of its own. */
export class Stop extends Error {
  constructor(readonly why: "cancelled" | "lost" | "shutdown") {
    super(`task run stopped: ${why}`);
  }
}

/** What runs need from the engine that owns them. */
export interface RunParts {
  /** This instance's id in leases. */
  me: string;
  defs: ReadonlyMap<string, ToolDefinition>;
  records: ReturnType<typeof createTaskRecords>;
  time: { now(): number };
  /** Local monotonic time for idleness of parked generators. */
  clock: () => number;
  report: (error: unknown, info: ErrorInfo) => void;
  signer: TextSigner;
  signalBaseUrl: string | undefined;
  onRound: ((trace: RoundTrace) => void) | undefined;
  /** Generators of tasks parked on asks, to resume when their answers come to this instance. */
  parked: LiveCalls<Parked & { owner: object }>;
  signals: { heard(taskId: string, name: string, ordinal: number, verdict: { ok: true } | { ok: false; message: string }): void };
  timing: { leaseMs: number; beatMs: number; graceMs: number; ttlMs: number };
}

/** The runs of one engine: start one (`launch`), end a task (`finish`), and what is running here. */
export function createTaskRuns(parts: RunParts) {
  const { me, defs, records, time, clock, report, signer, signalBaseUrl, onRound, parked, signals, timing } = parts;
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

  /** End the task with `outcome`: by the run that holds it (`run`), or a cancellation by anyone. */
  const finish = (id: string, outcome: transition.Outcome, run?: string) =>
    // A result is the principal's data; a failure or a cancellation must always be writable.
    update(id, (r) => transition.finish(r, outcome, outcome.status === "cancelled" ? undefined : holderOf(run)), outcome.status === "completed");

  function launch(record: TaskRecord, resume: Parked | undefined): Promise<void> {
    const run = drive(record, resume).catch((error: unknown) => report(error, infoOf(record)));
    runs.add(run);
    void run.finally(() => runs.delete(run));
    return run;
  }

  /** The definition and input a run needs, or `undefined` when the run already ended the task. */
  async function prepare(record: TaskRecord, run: string | undefined): Promise<{ def: ToolDefinition; input: unknown } | undefined> {
    const def = defs.get(record.tool);
    if (def === undefined) {
      // Another deployment's tool: let an instance that has it take the task over.
      await update(record.id, (r) => transition.handOver(r, holderOf(run)));
      report(new Error(`task ${record.id}: this instance has no tool "${record.tool}"; released for another instance`), infoOf(record));
      return undefined;
    }
    if (def.version !== record.version) {
      const message = `The tool "${def.name}" changed version (from ${JSON.stringify(record.version ?? null)} to ${JSON.stringify(def.version ?? null)}) while the task ran`;
      await finish(record.id, { status: "failed", message: "The tool changed", error: { code: ErrorCode.InvalidParams, message, data: { reason: "journal_divergence" } } }, run);
      return undefined;
    }
    // The parsed input the first run got (a value text), or — kept only when none could carry
    // it — the arguments, parsed again.
    if (record.input !== undefined) return { def, input: decodeValue(record.input) };
    const input = def.input.safeParse(record.args);
    if (input.success) return { def, input: input.data };
    await finish(
      record.id,
      {
        status: "failed",
        message: "Invalid arguments",
        error: { code: ErrorCode.InvalidParams, message: `The task's arguments no longer fit the tool "${def.name}"`, data: { reason: "invalid_arguments" } },
      },
      run,
    );
    return undefined;
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
    const holding = <T extends { record: TaskRecord | undefined; written: boolean }>(saved: T): T => {
      if (saved.written && saved.record?.lease?.owner === me) held = saved.record.lease.until;
      return saved;
    };
    /**
     * A write of this run's progress, retried through store failures while the lease holds: a
     * step's result must not be lost to one failed (or unacknowledged) write, or the instance
     * taking over would run the step again. Each try re-reads the record, so a write that
     * landed after its timeout is simply found (and written over with the same content).
     */
    const persisting = async <T>(write: () => Promise<T>): Promise<T> => {
      for (let delay = 10; ; delay = Math.min(delay * 2, 200)) {
        try {
          return await write();
        } catch (error) {
          if (!(error instanceof StoreError) || stop !== undefined || time.now() + delay >= held) throw error;
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
        if (current.lease!.until - time.now() < leaseMs / 2) holding(await update(id, (r) => transition.renew(r, holder, lease(run))));
      })().catch(() => {
        // A store that does not answer: the lease runs out and another instance takes over.
      });
    }, beatMs);

    const round = new Round(
      {
        start: () => def.run(input as Parameters<typeof def.run>[0], context),
        journal: record.journal,
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
          // Heartbeats keep over a quarter of the lease ahead; less means they could not run (a
          // long synchronous step, a paused process, a slow store) and a successor may already
          // hold the task. Renew — conditionally on still holding it — before starting a step.
          if (held - time.now() >= leaseMs / 4) return;
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

  /** Write where a run that reached an outcome of its round left the task. */
  async function settle(
    record: TaskRecord,
    def: ToolDefinition,
    outcome: RoundOutcome,
    generator: { suspended: Parked["suspended"] | undefined; context: CallContext },
    run: string | undefined,
  ): Promise<void> {
    const id = record.id;
    const holder = holderOf(run);
    switch (outcome.type) {
      case "complete": {
        let result: ReturnType<typeof shapeToolResult>;
        try {
          result = shapeToolResult(def, outcome.value);
        } catch (error) {
          if (!(error instanceof ResultShapeError)) throw error;
          report(error, infoOf(record));
          result = errorToolResult(authorFailureText("Tool", def.name));
        }
        await finish(id, { status: "completed", result, journal: outcome.journal }, run);
        return;
      }
      case "input_required":
        await park(record, def, outcome, { suspended: generator.suspended!, context: generator.context }, run);
        return;
      case "sleep":
        if (outcome.until >= record.created + record.ttlMs) {
          // The task would be gone (its record expired) before it woke: the author's mistake, said plainly.
          report(
            new Error(
              `task ${id}: sleep() until ${new Date(outcome.until).toISOString()} passes the task's lifetime (ttlMs ${record.ttlMs} from ${new Date(record.created).toISOString()}); raise tasks.ttlMs or sleep less`,
            ),
            infoOf(record),
          );
          await finish(id, { status: "completed", result: errorToolResult(authorFailureText("Tool", def.name)), journal: outcome.journal }, run);
          return;
        }
        // Nobody holds a sleeping task: it waits in the store (due at its wake time), and the
        // sweeper of whichever instance finds it due replays it from the journal.
        await update(id, (r) => transition.sleep(r, holder, outcome.journal, outcome.until), true);
        return;
      case "wait":
        await update(id, (r) => transition.awaitSignal(r, holder, outcome, time.now()), true);
        return;
      case "task":
        throw new Error("a task cannot become a task again");
    }
  }

  async function settleFailure(record: TaskRecord, def: ToolDefinition, error: unknown, stop: Stop | undefined, run: string | undefined): Promise<void> {
    const id = record.id;
    const why = stop?.why ?? (error instanceof Stop ? error.why : undefined);
    if (why === "cancelled") {
      await finish(id, { status: "cancelled" });
    } else if (why === "lost") {
      // Someone else runs it (or it ended): nothing to write.
    } else if (stop?.why === "shutdown") {
      await update(id, (r) => transition.release(r, holderOf(run)));
    } else if (error instanceof StoreError) {
      report(error, infoOf(record)); // the lease runs out; another instance takes over
    } else if (error instanceof AuthorCodeError && !(error.cause instanceof ProtocolError)) {
      // Like a foreground call: the tool failed, the model sees an isError result.
      report(error.cause, infoOf(record));
      await finish(id, { status: "completed", result: errorToolResult(authorFailureText("Tool", def.name)) }, run);
    } else {
      const protocol = error instanceof AuthorCodeError ? (error.cause as ProtocolError) : error instanceof ProtocolError ? error : undefined;
      if (protocol === undefined) report(error, infoOf(record));
      const failure = protocol?.toJSON() ?? { code: ErrorCode.InternalError, message: "Internal error" };
      await finish(id, { status: "failed", message: failure.message, error: failure }, run);
    }
  }

  /** The task waits for answers: new asks get wire keys never used before in this task. */
  async function park(record: TaskRecord, def: ToolDefinition, outcome: Extract<RoundOutcome, { type: "input_required" }>, generator: Parked, run: string | undefined): Promise<void> {
    const nonce = encodeBase64url(randomBytes(16));
    const asks = { journal: outcome.journal, outstanding: outcome.outstanding, partial: outcome.partial, requests: withRefusals(outcome.inputRequests, outcome.refused) };
    const parkedNow = await update(record.id, (r) => transition.park(r, holderOf(run), asks, nonce), true);
    if (parkedNow.written) parked.put(`${record.id}.${nonce}`, { ...generator, owner: def }, clock() + ttlMs);
    else if (parkedNow.record?.cancel === true) await finish(record.id, { status: "cancelled" });
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
      for (const r of running.values()) r.shutdown();
    },
    /** Every run under way here. */
    inFlight: () => [...runs],
  };
}
