// tasks/engine.ts owns calls run as tasks on a store, wired together: creation, `tasks/get`,
// `tasks/update`, `tasks/cancel`, signals, and the parts that do the work — the runs under a
// lease (tasks/run/run.ts), the sweeper that takes over what is due (tasks/sweeper.ts), every change
// of a record as a named transition (tasks/transitions.ts). It knows nothing of transports or
// the SDK: the runtime calls it with parsed params.
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

import { randomUuid } from "../state/index.js";
import { ErrorCode, ProtocolError } from "../wire/index.js";
import type { ToolDefinition } from "../authoring/definitions.js";
import type { IndexChange } from "../store/index.js";
import { LiveCalls } from "../replay/live-calls.js";
import { createResultOf, detailedTaskOf, isTerminal, newTaskId, storedInput, type TaskRecord, taskRecord } from "./record/record.js";
import type { Deps, Parked, TaskEngine } from "./types.js";
import { listEntriesOf } from "./record/list-index.js";
import { CLEANUP_KEPT_MS, createTaskRecords, dueAt, keyOf, LEASES, shareOf, TASKS } from "./record/record-store.js";
import { createSignalDelivery } from "./signals.js";
import { createTaskRuns } from "./run/run.js";
import { createLacking } from "./run/lacking.js";
import { createSweeper } from "./sweeper.js";
import { createTaskWatches } from "./watch.js";
import * as transition from "./record/transitions.js";

/** The task was not found — or belongs to someone else, which must look the same. */
const unknownTask = (id: string) => new ProtocolError(ErrorCode.InvalidParams, `Unknown task: ${id}`, { reason: "unknown_task" });

/**
 * Tasks on a store: every transition is a compare-and-swap on the task's record, so two
 * instances never both act on one state (two `tasks/update`s completing the same asks: one
 * wins, one sees the task working and acknowledges). A running task holds a lease it renews;
 * each step's result is written before the code goes on, so an instance that dies loses at
 * most the step in flight, which the instance taking over runs again (same call id, same
 * `ctx.idempotencyKey`).
 */
export function createTaskEngine({ store, options, report, clock, time, bytes, signer, signalBaseUrl, onRound }: Deps): TaskEngine {
  const { ttlMs, pollIntervalMs: pollMs, leaseMs, sweepMs, cancelGraceMs: graceMs, maxPerPrincipal } = options;
  // Heartbeats read the record this often: a cancel reaches a run on another instance this fast.
  const beatMs = Math.max(1, Math.min(500, Math.floor(leaseMs / 4)));
  const me = randomUuid();
  const defs = new Map<string, ToolDefinition>();
  // Parked task generators wait for sleeps and signals: their idleness is timed on the engine's clock.
  const parked = new LiveCalls<Parked & { owner: object }>(1000, 16 * 1024 * 1024, clock, clock);
  const records = createTaskRecords({ store, time, bytes, onWake: (at) => sweeper.wakeAt(at), onWritten: (r) => watches.wrote(r) });
  const { load, update } = records;
  // A takeover that fails (the store out) is left to the sweeper, which finds the task due.
  const due = (id: string) => void sweeper.takeOver(id).catch(() => {});
  const lacking = createLacking(clock);
  const signals = createSignalDelivery({
    signer,
    time,
    update,
    newRun: (r) => runs.newRun(r),
    run: (r) => (sweeper.ensure(), runs.launch(r, undefined)),
    takeOver: async (id) => {
      sweeper.ensure();
      await sweeper.takeOverDue(id);
    },
  });
  const runs = createTaskRuns({ me, defs, records, time, clock, report, signer, signalBaseUrl, onRound, parked, signals, due, lack: lacking.mark, timing: { leaseMs, beatMs, graceMs, ttlMs } });
  const sweeper = createSweeper({
    store,
    time,
    update,
    peek: async (id) => (await records.peek(id))?.record,
    peekMany: records.peekMany,
    newRun: runs.newRun,
    launch: (r) => void runs.launch(r, undefined),
    cancelled: (id) => runs.finish(id, { status: "cancelled" }),
    lacks: lacking.has,
    runningHere: runs.isRunning,
    sweepMs,
  });

  // Callers following tasks: re-read every 5 s while the feed is up (a lost notice), at the poll interval while it is not.
  const watches = createTaskWatches({ store, load: async (id) => (await load(id))?.record, backstopMs: Math.max(5_000, pollMs), pollMs });

  /**
   * Refuse a start past the principal's allowance: its index's entries are counted by the store
   * — reading them back made every start cost as much as the tasks the principal has (20,000
   * sleeping tasks: a start 60 times slower than with 2,000). A task leaves it when the
   * sweeper forgets it; only at the limit are expired entries dropped here too (a task another
   * version never took out) and the rest counted again, and only then read: a repeated start of
   * one counted passes. One statement less per start than dropping them every time.
   */
  async function withinShare(share: string, id: string | undefined, now: number): Promise<void> {
    if ((await store.size(share)) < maxPerPrincipal) return;
    // In one operation: one by one, 1,000 round trips at the limit held every start of the
    // principal's for 0.3-1 s (one anonymous caller over HTTP, tasks living 0.5-2 s).
    const expired = await store.due(share, now, 1000);
    if (expired.length > 0) await store.index(expired.map((member) => ({ index: share, member, at: null })));
    if ((await store.size(share)) < maxPerPrincipal) return;
    const live = await store.due(share, Number.MAX_SAFE_INTEGER, maxPerPrincipal + 1);
    if (id === undefined || !live.includes(id)) {
      throw new ProtocolError(ErrorCode.InternalError, `This caller already has ${maxPerPrincipal} tasks kept by the server, its limit; wait for some to end and expire, or cancel them`, {
        reason: "principal_task_limit",
        limit: maxPerPrincipal,
      });
    }
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
      if (defs.size > 0) sweeper.ensure();
    },

    async start(task) {
      defs.set(task.def.name, task.def);
      sweeper.ensure();
      await time.sync();
      const now = time.now();
      const share = shareOf(task.principal);
      // A store that adds within a limit counts the share in the add itself (one statement on
      // PostgreSQL); otherwise it is counted first.
      const addIndexed = store.addIndexed?.bind(store);
      if (addIndexed === undefined) await withinShare(share, task.taskId, now);
      const record = transition.start(
        { id: task.taskId ?? newTaskId(), def: task.def, stored: storedInput(task), principal: task.principal, callId: task.callId, caps: task.caps, message: task.message, journal: task.journal },
        now,
        { ttlMs, pollMs },
        runs.newRun,
      );
      const text = JSON.stringify(record);
      await bytes.charge(record.principal, keyOf(record.id).length + text.length);
      // Indexed as it is created: the principal's share, the list of tasks and the indexes a
      // filtered list reads, the lease the sweepers watch — with the record in one operation
      // where the store can (addIndexed: one statement on PostgreSQL), else one operation after.
      const entries: IndexChange[] = [
        { index: share, member: record.id, at: now + ttlMs },
        { index: TASKS, member: record.id, at: now + ttlMs },
        ...listEntriesOf(record),
        { index: LEASES, member: record.id, at: record.lease!.until },
      ];
      // Durably created before the client hears of it: tasks/get resolves at once, anywhere.
      // Kept past its lifetime until it has ended (record-store.ts): its outcome stays readable.
      const keptMs = ttlMs + transition.OUTCOME_KEPT_MS + CLEANUP_KEPT_MS;
      let added: boolean;
      if (addIndexed === undefined) added = await store.add(keyOf(record.id), text, keptMs);
      else if (!(added = await addIndexed(keyOf(record.id), text, keptMs, entries, { index: share, below: maxPerPrincipal }))) {
        // Refused: the share looked full, or the record is there (an earlier attempt at this
        // start). The share is looked at the slow way — it refuses a start at the limit (and
        // its charge is given back) — then the add is tried without the limit.
        try {
          await withinShare(share, task.taskId, now);
        } catch (error) {
          bytes.refund(record.principal, keyOf(record.id).length + text.length);
          throw error;
        }
        added = await addIndexed(keyOf(record.id), text, keptMs, entries);
      }
      if (!added) {
        // Already there: an earlier attempt at this start whose answer was lost (a write that
        // landed after its timeout). The same call's task is that one; it is indexed (again) so
        // the sweeper runs it if nobody does, and reported as it is now.
        const raw = await store.get(keyOf(record.id));
        const existing = raw === undefined ? undefined : taskRecord.safeParse(JSON.parse(raw));
        if (!existing?.success || existing.data.call !== task.callId || task.taskId === undefined) throw new Error("task id collision");
        const found = existing.data;
        await store.index([
          { index: share, member: found.id, at: found.created + found.ttlMs },
          { index: TASKS, member: found.id, at: found.created + found.ttlMs },
          ...listEntriesOf(found),
          ...(found.lease !== undefined ? [{ index: LEASES, member: found.id, at: found.lease.until }] : []),
        ]);
        // Leased to this instance by that attempt, which never got to run it: run it now.
        if (found.status === "working" && found.lease?.owner === me && !runs.isRunning(found.id)) void runs.launch(found, undefined);
        return createResultOf(found);
      }
      records.created(record, text);
      if (addIndexed === undefined) await store.index(entries);
      void runs.launch(record, task.resume);
      return createResultOf(record);
    },

    async get(id, principal) {
      let record = await owning(id, principal);
      await time.sync();
      // Past its lifetime and not ended: ended now, with an outcome to read (the sweeper does
      // the same for tasks nobody polls).
      if (!isTerminal(record.status) && record.created + record.ttlMs <= time.now()) record = (await sweeper.outlive(id)) ?? record;
      const due = dueAt(record);
      if (due !== undefined && due <= time.now()) void sweeper.takeOverDue(id).catch(() => {});
      return detailedTaskOf(record);
    },

    async update(id, responses, principal) {
      await owning(id, principal);
      const result = await update(id, (r) => transition.answer(r, responses, runs.newRun), true);
      if (result.written && result.record?.status === "working") {
        sweeper.ensure();
        const def = defs.get(result.record.tool);
        const resume = result.record.park && def ? parked.take(`${id}.${result.record.park}`, def) : undefined;
        void runs.launch(result.record, resume);
      }
    },

    async cancel(id, principal) {
      await owning(id, principal);
      const result = await update(id, (r) => transition.cancel(r, time.now(), time.uncertainty()));
      // Running here: stop it now rather than at the next heartbeat.
      if (result.written) runs.cancel(id);
    },

    signal: (token, value) => signals.deliver(token, value),

    watch: (ids, principal, sink) => watches.watch(ids, principal, sink),

    async idle() {
      for (let inFlight = runs.inFlight(); inFlight.length > 0; inFlight = runs.inFlight()) await Promise.allSettled(inFlight);
    },

    async close() {
      const stopping = Promise.all([sweeper.stop(), watches.close()]);
      runs.shutdownAll();
      // Every run, those a sweep in flight launches too (each hands its task back at once):
      // once close resolves, nothing of this instance touches the store. Code that ignores its
      // signal is not waited for past the grace period.
      const settled = (async () => {
        await sweeper.idle();
        for (let inFlight = runs.inFlight(); inFlight.length > 0; inFlight = runs.inFlight()) await Promise.allSettled(inFlight);
      })();
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([settled, new Promise((r) => (timer = setTimeout(r, graceMs)))]);
      clearTimeout(timer);
      await stopping;
    },
  };
}
