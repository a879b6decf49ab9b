// tasks/engine.ts owns calls run as tasks on a store: creation, leases and takeover, answers
// through tasks/update, cancellation, and the outcome kept for the task's lifetime. It knows
// nothing of transports or the SDK: the runtime calls it with parsed params.
//
// Invariants:
// 1. Every transition of a task is a compare-and-swap on its record: two instances never both
//    act on one state of a task.
// 2. A running task is held under a lease its owner renews; only an expired lease lets another
//    instance take it over.
// 3. A step's result is in the store before the code goes on, so a takeover replays every
//    recorded step from the journal and runs again at most the step that was in flight, with
//    the same call id and `ctx.idempotencyKey`.
// 4. A terminal status is final and stays readable until the task's time to live runs out.

import { integerOption } from "../util/options.js";
import { decodeValue, digestOf, encodeBase64url, randomBytes, randomUuid } from "../state/index.js";
import { StoreError } from "../store/index.js";
import { capabilityCheck, ErrorCode, ProtocolError } from "../wire/index.js";
import { CallContext } from "../replay/call-context.js";
import { withRefusals } from "../replay/answers.js";
import type { ToolDefinition } from "../authoring/definitions.js";
import { AuthorCodeError, type ErrorInfo } from "../replay/errors.js";
import { LiveCalls } from "../replay/live-calls.js";
import { Round, type RoundOutcome } from "../replay/round.js";
import { deliverTrace, type RoundTrace, traceError } from "../replay/round-trace.js";
import { errorToolResult, ResultShapeError, shapeToolResult } from "../authoring/results.js";
import { cancelTransition, createResultOf, detailedTaskOf, isTerminal, newTaskId, storedInput, type TaskRecord, taskRecord, wireKeyFor } from "./record.js";
import { type Deps, DEFAULT_TASK_TTL_MS, type Parked, type TaskEngine } from "./types.js";
import { createTaskRecords, keyOf, LEASES, TASKS } from "./record-store.js";
import { createSignalDelivery, parkedOnSignal, signalFor, signalToken, withJournal } from "./signals.js";


/** Why a run stopped without an outcome of its own. */
class Stop extends Error {
  constructor(readonly why: "cancelled" | "lost" | "shutdown") {
    super(`task run stopped: ${why}`);
  }
}

/** The task was not found — or belongs to someone else, which must look the same. */
const unknownTask = (id: string) => new ProtocolError(ErrorCode.InvalidParams, `Unknown task: ${id}`, { reason: "unknown_task" });

const positive = (name: string, value: number | undefined, fallback: number) => integerOption(`tasks.${name}`, value, fallback);

/**
 * Tasks on a store: every transition is a compare-and-swap on the task's record, so two
 * instances never both act on one state (two `tasks/update`s completing the same asks: one
 * wins, one sees the task working and acknowledges). A running task holds a lease it renews;
 * each step's result is written before the code goes on, so an instance that dies loses at
 * most the step in flight, which the instance taking over runs again (same call id, same
 * `ctx.idempotencyKey`).
 */
export function createTaskEngine({ store, options, report, clock, time, bytes, signer, signalBaseUrl, onRound }: Deps): TaskEngine {
  const ttlMs = positive("ttlMs", options.ttlMs, DEFAULT_TASK_TTL_MS);
  const pollMs = positive("pollIntervalMs", options.pollIntervalMs, 500);
  const leaseMs = positive("leaseMs", options.leaseMs, 10_000);
  const sweepMs = positive("sweepMs", options.sweepMs, Math.max(1, Math.floor(leaseMs / 2)));
  const graceMs = positive("cancelGraceMs", options.cancelGraceMs, 2000);
  const maxPerPrincipal = positive("maxPerPrincipal", options.maxPerPrincipal, 1000);
  // Heartbeats read the record this often: a cancel reaches a run on another instance this fast.
  const beatMs = Math.max(1, Math.min(500, Math.floor(leaseMs / 4)));
  const me = randomUuid();
  const defs = new Map<string, ToolDefinition>();
  // Parked task generators wait for sleeps and signals: their idleness is timed on the engine's clock.
  const parked = new LiveCalls<Parked & { owner: object }>(1000, 16 * 1024 * 1024, clock, clock);
  const running = new Map<string, { cancel: () => void; shutdown: () => void }>();
  const runs = new Set<Promise<void>>();
  let sweeper: ReturnType<typeof setInterval> | undefined;
  let closed = false;

  /** A lease for one run on this instance (`run` fences a stale run of the same task here). */
  const lease = (run: string | undefined) => ({ owner: me, ...(run !== undefined ? { run } : {}), until: time.now() + leaseMs });
  const infoOf = (r: TaskRecord): ErrorInfo => ({ method: "tools/call", target: r.tool, round: 0, callId: r.call, taskId: r.id });

  const { load, update } = createTaskRecords({ store, time, bytes });
  /** A new run of a task on this instance: a lease of its own, and the task's runs counted. */
  const newRun = (r: Pick<TaskRecord, "runs">) => ({ lease: lease(randomUuid()), runs: (r.runs ?? 0) + 1 });
  const signals = createSignalDelivery({ signer, time, update, newRun, run: (r) => (ensureSweeper(), launch(r, undefined)) });

  /** Whether the lease on `r` is this run's. */
  const holds = (r: TaskRecord, run: string | undefined) => r.lease?.owner === me && r.lease.run === run;
  /** Whether run `run` of this instance runs `r` now (and nothing ended or cancelled it). */
  const owned = (r: TaskRecord, run: string | undefined) => r.status === "working" && holds(r, run) && r.cancel !== true;

  /** End the task with `outcome`: by the run that holds it (`run`), or a cancellation by anyone. */
  const finish = (id: string, outcome: Partial<TaskRecord> & { status: TaskRecord["status"] }, run?: string) =>
    update(
      id,
      (r) => {
        if (isTerminal(r.status)) return false;
        // A cancel that was acknowledged wins over an outcome that arrived after it.
        if (r.cancel === true && outcome.status !== "cancelled") return { ...r, status: "cancelled", message: "Cancelled", lease: undefined, waiting: [], answers: {} };
        if (outcome.status !== "cancelled" && !holds(r, run)) return false;
        const { lease: _lease, park: _park, ...rest } = r;
        return { ...rest, waiting: [], answers: {}, ...outcome };
      },
      // A result is the principal's data; a failure or a cancellation must always be writable.
      outcome.status === "completed",
    );

  function launch(record: TaskRecord, resume: Parked | undefined): Promise<void> {
    const run = drive(record, resume).catch((error: unknown) => report(error, infoOf(record)));
    runs.add(run);
    void run.finally(() => runs.delete(run));
    return run;
  }

  /** Run the task (leased by this instance) until it parks on asks or ends. */
  async function drive(record: TaskRecord, resume: Parked | undefined): Promise<void> {
    const id = record.id;
    // This run's identity in the lease: every write below is conditional on it still holding.
    const run = record.lease?.run;
    const def = defs.get(record.tool);
    if (def === undefined) {
      // Another deployment's tool: let an instance that has it take the task over.
      await update(id, (r) => (holds(r, run) ? { ...r, lease: { owner: me, until: 0 } } : false));
      report(new Error(`task ${id}: this instance has no tool "${record.tool}"; released for another instance`), infoOf(record));
      return;
    }
    if (def.version !== record.version) {
      await finish(id, { status: "failed", message: "The tool changed", error: { code: ErrorCode.InvalidParams, message: `The tool "${def.name}" changed version (from ${JSON.stringify(record.version ?? null)} to ${JSON.stringify(def.version ?? null)}) while the task ran`, data: { reason: "journal_divergence" } } }, run);
      return;
    }
    // The parsed input the first run got (a value text), or — kept only when none could carry
    // it — the arguments, parsed again.
    const input = record.input !== undefined ? { success: true as const, data: decodeValue(record.input) as Parameters<typeof def.run>[0] } : def.input.safeParse(record.args);
    if (!input.success) {
      await finish(id, { status: "failed", message: "Invalid arguments", error: { code: ErrorCode.InvalidParams, message: `The task's arguments no longer fit the tool "${def.name}"`, data: { reason: "invalid_arguments" } } }, run);
      return;
    }
    const context = resume?.context ?? new CallContext(record.principal, record.call);
    const abort = context.callSignal.ensure();
    // This run as a round trace (when the runtime has an observer): numbered by the task's runs.
    const observed: RoundTrace | undefined =
      onRound === undefined
        ? undefined
        : {
            method: "tools/call",
            target: def.name,
            definition: def.name,
            callId: record.call,
            round: record.runs ?? 0,
            path: resume ? "resumed" : record.journal.length > 0 ? "replayed" : "first",
            replayed: resume ? 0 : record.journal.length,
            steps: [],
            asks: [],
            stateBytesIn: 0,
            stateBytesOut: 0,
            startedAt: Date.now(),
            ms: 0,
            outcome: "error",
            taskId: id,
          };
    const startedMs = performance.now();
    let stop: Stop | undefined;
    let grace: ReturnType<typeof setTimeout> | undefined;
    const halt = (why: Stop["why"]) => {
      if (stop) return;
      stop = new Stop(why);
      abort.abort(stop);
      if (why === "cancelled") grace = setTimeout(() => void finish(id, { status: "cancelled", message: "Cancelled" }).catch(() => {}), graceMs);
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
     * Write what this run did, on the condition that it still holds the task (fenced on its run);
     * if it does not any more, it stops here — cancelled, or another run has the task.
     */
    const persistOwned = async (change: (r: TaskRecord) => TaskRecord, charged: boolean): Promise<void> => {
      const saved = holding(await persisting(() => update(id, (r) => (owned(r, run) ? change(r) : false), charged)));
      if (!saved.written) halt(saved.record?.cancel === true ? "cancelled" : "lost");
      if (stop) throw stop;
    };

    const heartbeat = setInterval(() => {
      void (async () => {
        const current = (await load(id))?.record;
        if (current === undefined || isTerminal(current.status) || !holds(current, run)) return halt("lost");
        if (current.cancel === true) return halt("cancelled");
        if (current.lease!.until - time.now() < leaseMs / 2) holding(await update(id, (r) => (owned(r, run) ? { ...r, lease: lease(run) } : false)));
      })().catch(() => {
        // A store that does not answer: the lease runs out and another instance takes over.
      });
    }, beatMs);

    const round = new Round(
      {
        start: () => def.run(input.data, context),
        journal: record.journal,
        outstanding: record.outstanding,
        partial: record.partial,
        responses: new Map(Object.entries(record.answers)),
        declared: capabilityCheck(record.caps),
        signal: () => abort.signal,
        randomUUID: randomUuid,
        clock,
        task: "inside",
        onStep: (records) =>
          // The parked asks' answers are in the journal now: their bookkeeping goes, or a
          // takeover would take the journal's end for the park point (patched() = old code).
          persistOwned((r) => ({ ...withJournal(r, records.slice()), outstanding: {}, partial: {}, answers: {}, waiting: [], lease: lease(run) }), true),
        wakeClock: time.now,
        signalFor: (name, ordinal) => signalFor(record, name, ordinal, time.now()),
        onSignal: (name, ordinal, verdict) => signals.heard(id, name, ordinal, verdict),
        signalToken: (name, ordinal) => signalToken(signer, record, name, ordinal),
        ...(signalBaseUrl !== undefined ? { signalUrl: (token: string) => signalBaseUrl + token } : {}),
        onProgress: (message, done, total) => {
          const text = done === undefined ? message : `${message} (${done}${total === undefined ? "" : `/${total}`})`;
          return persistOwned((r) => ({ ...r, message: text, lease: lease(run) }), true);
        },
        beforeStep: async () => {
          if (stop) throw stop;
          // Heartbeats keep over a quarter of the lease ahead; less means they could not run (a
          // long synchronous step, a paused process, a slow store) and a successor may already
          // hold the task. Renew — conditionally on still holding it — before starting a step.
          if (held - time.now() >= leaseMs / 4) return;
          await persistOwned((r) => ({ ...r, lease: lease(run) }), false);
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
      if (outcome.type === "complete") {
        let result;
        try {
          result = shapeToolResult(def, outcome.value);
        } catch (error) {
          if (!(error instanceof ResultShapeError)) throw error;
          report(error, infoOf(record));
          result = errorToolResult(`Tool "${def.name}" failed; the error was reported to the server.`);
        }
        const completed = result;
        await persisting(() => finish(id, { status: "completed", message: undefined, result: completed, journal: outcome.journal }, run));
      } else if (outcome.type === "input_required") {
        await persisting(() => park(record, def, outcome, { suspended: outcome.suspended, context }, run));
      } else if (outcome.type === "sleep" && outcome.until >= record.created + record.ttlMs) {
        // The task would be gone (its record expired) before it woke: the author's mistake, said plainly.
        report(new Error(`task ${id}: sleep() until ${new Date(outcome.until).toISOString()} passes the task's lifetime (ttlMs ${record.ttlMs} from ${new Date(record.created).toISOString()}); raise tasks.ttlMs or sleep less`), infoOf(record));
        await persisting(() => finish(id, { status: "completed", message: undefined, result: errorToolResult(`Tool "${def.name}" failed; the error was reported to the server.`), journal: outcome.journal }, run));
      } else if (outcome.type === "sleep") {
        // Nobody holds a sleeping task: it waits in the store (due at its wake time), and the
        // sweeper of whichever instance finds it due replays it from the journal.
        await persisting(() =>
          update(id, (r) => {
            if (!owned(r, run)) return false;
            const { lease: _lease, park: _park, ...rest } = withJournal(r, outcome.journal);
            return { ...rest, outstanding: {}, partial: {}, answers: {}, waiting: [], wake: outcome.until };
          }, true),
        );
      } else if (outcome.type === "wait") {
        await persisting(() => parkOnSignal(id, outcome, run));
      }
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

  async function settleFailure(record: TaskRecord, def: ToolDefinition, error: unknown, stop: Stop | undefined, run: string | undefined): Promise<void> {
    const id = record.id;
    if (stop?.why === "cancelled" || (error instanceof Stop && error.why === "cancelled")) {
      await finish(id, { status: "cancelled", message: "Cancelled" });
    } else if (stop?.why === "lost" || (error instanceof Stop && error.why === "lost")) {
      // Someone else runs it (or it ended): nothing to write.
    } else if (stop?.why === "shutdown") {
      await update(id, (r) => (owned(r, run) ? { ...r, lease: { owner: me, until: 0 } } : false));
    } else if (error instanceof StoreError) {
      report(error, infoOf(record)); // the lease runs out; another instance takes over
    } else if (error instanceof AuthorCodeError && !(error.cause instanceof ProtocolError)) {
      // Like a foreground call: the tool failed, the model sees an isError result.
      report(error.cause, infoOf(record));
      await finish(id, { status: "completed", message: undefined, result: errorToolResult(`Tool "${def.name}" failed; the error was reported to the server.`) }, run);
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
    const parkedNow = await update(record.id, (r) => {
      if (!owned(r, run)) return false;
      const used = new Set(r.used);
      const waiting = Object.entries(withRefusals(outcome.inputRequests, outcome.refused)).map(([key, request]) => {
        const wire = wireKeyFor(key, used);
        used.add(wire);
        return { wire, key, fp: outcome.outstanding[key]!, request };
      });
      const { lease: _lease, ...rest } = r;
      return { ...withJournal(rest, outcome.journal), status: "input_required", message: "Waiting for input", outstanding: outcome.outstanding, partial: outcome.partial ?? {}, waiting, answers: {}, used: [...used], park: nonce };
    }, true);
    if (parkedNow.written) parked.put(`${record.id}.${nonce}`, { ...generator, owner: def }, clock() + ttlMs);
    else if (parkedNow.record?.cancel === true) await finish(record.id, { status: "cancelled", message: "Cancelled" });
  }

  /**
   * The task waits for a signal: held by nobody, due at the wait's deadline if it has one. A
   * wait that was already on (a value its schema refused) keeps its deadline.
   */
  function parkOnSignal(id: string, outcome: Extract<RoundOutcome, { type: "wait" }>, run: string | undefined) {
    return update(id, (r) => (owned(r, run) ? parkedOnSignal(r, outcome, time.now()) : false), true);
  }

  /** The index of one principal's tasks, by when each expires (the principal only as a digest). */
  const shareOf = (principal: string | undefined) => `principal-tasks:${principal === undefined ? "-" : digestOf(principal)}`;

  /**
   * Refuse a start past the principal's allowance: expired entries are dropped from its index
   * first, then its live tasks are counted (a repeated start of a task already counted passes).
   */
  async function withinShare(share: string, id: string | undefined, now: number): Promise<void> {
    for (const expired of await store.due(share, now, 1000)) await store.unschedule(share, expired);
    const live = await store.due(share, Number.MAX_SAFE_INTEGER, maxPerPrincipal + 1);
    if (live.length >= maxPerPrincipal && (id === undefined || !live.includes(id))) {
      throw new ProtocolError(ErrorCode.InternalError, `This caller already has ${maxPerPrincipal} tasks kept by the server, its limit; wait for some to end and expire, or cancel them`, { reason: "principal_task_limit", limit: maxPerPrincipal });
    }
  }

  /** Take over a working task whose lease ran out (its instance died or shut down). */
  async function takeOver(id: string): Promise<void> {
    const taken = await update(id, (r) => {
      const now = time.now();
      if (r.status !== "working" || r.cancel === true || (r.lease !== undefined && r.lease.until > now) || (r.wake !== undefined && r.wake > now)) return false;
      const { wake: _wake, ...rest } = r;
      return { ...rest, ...newRun(rest) };
    });
    const now = time.now();
    if (taken.written && taken.record) launch(taken.record, undefined);
    else if (taken.record === undefined || isTerminal(taken.record.status) || taken.record.status === "input_required") await store.unschedule(LEASES, id);
    else if (taken.record.cancel === true && (taken.record.lease === undefined || taken.record.lease.until <= now)) await finish(id, { status: "cancelled", message: "Cancelled" });
  }

  /** When this instance last dropped expired tasks from the list (store clock). */
  let listPruned = -Infinity;

  function ensureSweeper(): void {
    if (sweeper !== undefined || closed) return;
    sweeper = setInterval(() => {
      void (async () => {
        await time.sync();
        for (const id of await store.due(LEASES, time.now(), 25)) await takeOver(id);
        // Tasks whose records expired leave the list: up to 500 a minute per instance (the
        // list is for operators; an entry left a while longer only costs them a skipped read).
        if (time.now() - listPruned >= 60_000) {
          listPruned = time.now();
          for (const gone of await store.due(TASKS, listPruned, 500)) await store.unschedule(TASKS, gone);
        }
      })().catch(() => {
        // The store is unreachable now; the next sweep tries again.
      });
    }, sweepMs);
    sweeper.unref?.();
  }

  async function owning(id: string, principal: string | undefined): Promise<TaskRecord> {
    const found = await load(id);
    if (found === undefined || found.record.principal !== principal) throw unknownTask(id);
    return found.record;
  }

  return {
    define(list) {
      for (const def of list) if (def.task !== "never") defs.set(def.name, def);
      // An instance that can run tasks sweeps from the start: a task asleep or left by an
      // instance that died is due to whichever instance looks, not only one that started tasks.
      if (defs.size > 0) ensureSweeper();
    },

    async start(task) {
      defs.set(task.def.name, task.def);
      ensureSweeper();
      await time.sync();
      const now = time.now();
      const share = shareOf(task.principal);
      await withinShare(share, task.taskId, now);
      const record: TaskRecord = {
        v: 1,
        id: task.taskId ?? newTaskId(),
        rev: 0,
        tool: task.def.name,
        ...(task.def.version !== undefined ? { version: task.def.version } : {}),
        ...storedInput(task),
        ...(task.principal !== undefined ? { principal: task.principal } : {}),
        call: task.callId,
        caps: task.caps ?? {},
        status: "working",
        ...(task.message !== undefined ? { message: task.message } : {}),
        created: now,
        updated: now,
        ttlMs,
        pollMs,
        journal: task.journal,
        outstanding: {},
        waiting: [],
        answers: {},
        partial: {},
        used: [],
        ...newRun({}),
      };
      const text = JSON.stringify(record);
      await bytes.charge(record.principal, keyOf(record.id).length + text.length);
      // Durably created before the client hears of it: tasks/get resolves at once, anywhere.
      if (!(await store.add(keyOf(record.id), text, ttlMs))) {
        // Already there: an earlier attempt at this start whose answer was lost (a write that
        // landed after its timeout). The same call's task is that one; it is indexed (again) so
        // the sweeper runs it if nobody does, and reported as it is now.
        const raw = await store.get(keyOf(record.id));
        const existing = raw === undefined ? undefined : taskRecord.safeParse(JSON.parse(raw));
        if (!existing?.success || existing.data.call !== task.callId || task.taskId === undefined) throw new Error("task id collision");
        const found = existing.data;
        await Promise.all([
          store.schedule(share, found.id, found.created + found.ttlMs),
          store.schedule(TASKS, found.id, found.created + found.ttlMs),
          ...(found.lease !== undefined ? [store.schedule(LEASES, found.id, found.lease.until)] : []),
        ]);
        // Leased to this instance by that attempt, which never got to run it: run it now.
        if (found.status === "working" && found.lease?.owner === me && !running.has(found.id)) launch(found, undefined);
        return createResultOf(found);
      }
      // Indexed at once (independent writes, sent together): the principal's share, the list of
      // tasks, the lease the sweepers watch.
      await Promise.all([store.schedule(share, record.id, now + ttlMs), store.schedule(TASKS, record.id, now + ttlMs), store.schedule(LEASES, record.id, record.lease!.until)]);
      launch(record, task.resume);
      return createResultOf(record);
    },

    async get(id, principal) {
      const record = await owning(id, principal);
      await time.sync();
      const due = record.lease?.until ?? record.wake;
      if (record.status === "working" && due !== undefined && due <= time.now()) void takeOver(id).catch(() => {});
      return detailedTaskOf(record);
    },

    async update(id, responses, principal) {
      await owning(id, principal);
      const result = await update(id, (r) => {
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
        const complete = r.waiting.every((w) => Object.hasOwn(answers, w.key));
        return complete ? { ...r, answers, status: "working", message: undefined, ...newRun(r) } : { ...r, answers };
      }, true);
      if (result.written && result.record?.status === "working") {
        ensureSweeper();
        const def = defs.get(result.record.tool);
        const resume = result.record.park && def ? parked.take(`${id}.${result.record.park}`, def) : undefined;
        launch(result.record, resume);
      }
    },

    async cancel(id, principal) {
      await owning(id, principal);
      const result = await update(id, (r) => cancelTransition(r, time.now()));
      // Running here: stop it now rather than at the next heartbeat.
      if (result.written) running.get(id)?.cancel();
    },

    signal: (token, value) => signals.deliver(token, value),

    async idle() {
      while (runs.size > 0) await Promise.allSettled([...runs]);
    },

    async close() {
      closed = true;
      if (sweeper !== undefined) clearInterval(sweeper);
      for (const run of running.values()) run.shutdown();
      // Code that ignores its signal is not waited for past the grace period.
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([Promise.allSettled([...runs]), new Promise((r) => (timer = setTimeout(r, graceMs)))]);
      clearTimeout(timer);
    },
  };
}
