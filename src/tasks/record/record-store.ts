import type { IndexChange, PrincipalBytes, Store, StoreClock } from "../../store/index.js";
import { digestOf } from "../../state/index.js";
import { StoreError } from "../../store/index.js";
import { createKnownRecords, type StoredRecord } from "./known-records.js";
import { listChanges, moveInList, putBack } from "./list-index.js";
import { isTerminal, type TaskRecord, taskRecord } from "./record.js";
import { OUTCOME_KEPT_MS, waitKey } from "./transitions.js";
import { taskNoticeOf } from "./task-feed.js";

// Task records in the store: reading one, and changing one atomically (compare-and-swap, the
// principal's share charged for growth, the due index kept in step with the lease or the wake
// time). Every transition of the engine goes through `update`.

/**
 * When a task is due for a sweeper (`undefined`: it is not): a running task at its lease's end,
 * a sleeping or waiting one at its wake time, one asking in a race at its timer's end.
 */
export function dueAt(r: TaskRecord): number | undefined {
  if (r.status === "working") return r.lease?.until ?? r.wake;
  return r.status === "input_required" && r.race !== undefined ? r.wake : undefined;
}

/** The due index the sweepers read: a running task at its lease's end, a sleeping or waiting one at its wake time. */
export const LEASES = "task-leases";

/** Every task the store keeps, at the time its record expires: what listing reads (no key scan). */
export const TASKS = "tasks";

/** The tasks a principal has kept by the server (`maxPerPrincipal`), each at its lifetime's end. */
export const shareOf = (principal: string | undefined): string => `principal-tasks:${principal === undefined ? "-" : digestOf(principal)}`;

/**
 * When a record stops being a task (`tasks/get`: no such task): an ended one at its lifetime's
 * end, or as `outlive` said; one that has not ended kept a while past it, so whoever finds it
 * there can end it with an outcome to read.
 */
export const endOfLife = (r: TaskRecord): number => (isTerminal(r.status) ? (r.keptUntil ?? r.created + r.ttlMs) : r.created + r.ttlMs + OUTCOME_KEPT_MS);

/**
 * How long the store keeps a record past its end of life: read by nobody but the sweeper, which
 * takes the task out of the list indexes by what the record says (tool, principal, status) and
 * then deletes it. A sweeper this late leaves entries for the list to drop when it reads them.
 */
export const CLEANUP_KEPT_MS = 10 * 60_000;

/** A task's key in the store. */
export const keyOf = (id: string): string => `task:${id}`;

/**
 * The bytes of signal values this write moved into the journal: values that came for waits
 * (`arrived`, or kept `early`) whose waits `after` closes. They were written uncharged when they
 * came — a value a schema refuses costs nobody's share — so the write that records one pays for
 * it (the record barely grows then: the value only moves).
 */
export function takenSignalBytes(before: TaskRecord, after: TaskRecord): number {
  if (before.arrived === undefined && before.early === undefined) return 0;
  const closedBefore = new Set(before.closed);
  const closedNow = new Set(after.closed);
  let bytes = 0;
  for (const v of [...(before.arrived ? [before.arrived] : []), ...(before.early ?? [])]) {
    const key = waitKey(v.name, v.i);
    if (closedNow.has(key) && !closedBefore.has(key)) bytes += JSON.stringify(v.value)?.length ?? 0;
  }
  return bytes;
}

/**
 * `after` with the time of each journal record it added (its `updated`): records `before` had
 * keep theirs, as far as the two journals agree (a retry of a held task cuts its failed attempts).
 * 0: not known (recorded before the call became a task, or by a version that kept no times).
 */
export function stampTimes(before: TaskRecord, after: TaskRecord): TaskRecord {
  if (after.journal === before.journal && after.times === before.times) return after;
  let same = 0;
  const kept = before.times ?? before.journal.map(() => 0);
  while (
    same < after.journal.length &&
    same < before.journal.length &&
    same < kept.length &&
    after.journal[same]![0] === before.journal[same]![0] &&
    after.journal[same]![1] === before.journal[same]![1]
  )
    same++;
  if (same === after.journal.length && kept.length === same) return { ...after, times: kept };
  return { ...after, times: [...kept.slice(0, same), ...Array.from({ length: after.journal.length - same }, () => after.updated)] };
}

/**
 * `onWake`: told the store-clock time a write made a task due when nobody holds it (asleep, a
 * retry delay, a wait's timeout, a race's timer): the instance wakes it then rather than at its
 * next sweep.
 */
export function createTaskRecords({
  store,
  time,
  bytes,
  onWake,
  onWritten,
}: {
  store: Store;
  time: StoreClock;
  bytes: PrincipalBytes;
  onWake?: (at: number) => void;
  /** A transition this instance just wrote, as stored (its watchers here need not read it back). */
  onWritten?: (record: TaskRecord) => void;
}) {
  const storeTtl = (r: TaskRecord) => Math.max(1, endOfLife(r) + CLEANUP_KEPT_MS - time.now());
  const known = createKnownRecords();

  /** The record as stored, past its end of life too (what only the sweeper's cleanup reads). */
  async function peek(id: string): Promise<{ raw: string; record: TaskRecord } | undefined> {
    const raw = await store.get(keyOf(id));
    return raw === undefined ? undefined : parsedRecord(id, raw);
  }

  function parsedRecord(id: string, raw: string): StoredRecord {
    const parsed = taskRecord.safeParse(JSON.parse(raw));
    if (!parsed.success) throw new Error(`task ${id}: the stored record is not a task record this version understands`);
    const stored = { raw, record: parsed.data };
    known.remember(id, stored);
    return stored;
  }

  /**
   * The records of `ids` as stored, read together where the store can (one round trip for a
   * sweep's batch of due tasks, each of which `update` would otherwise read alone). Only what
   * could be read and understood: a task missing here is read by its own `update`.
   */
  async function peekMany(ids: readonly string[]): Promise<Map<string, StoredRecord>> {
    const found = new Map<string, StoredRecord>();
    if (store.getMany === undefined || ids.length < 2) return found;
    const raws = await store.getMany(ids.map(keyOf));
    ids.forEach((id, i) => {
      const raw = raws[i];
      if (raw === undefined) return;
      try {
        found.set(id, parsedRecord(id, raw));
      } catch {
        // Not a record this version understands: its own read says so.
      }
    });
    return found;
  }

  /** The task's record, `undefined` when there is no such task (never was, or past its end of life). */
  async function load(id: string): Promise<{ raw: string; record: TaskRecord } | undefined> {
    const found = await peek(id);
    return found === undefined || endOfLife(found.record) <= time.now() ? undefined : found;
  }

  /**
   * Apply `change` to the task's record atomically: read, change, compare-and-swap, again on a
   * conflict. `change` returns the new record, or `false` to leave it. Returns the record as it
   * now is (`undefined`: no such task) and whether this call wrote it. With `charged`, the
   * record's growth counts against its principal's share of the store (a refusal throws
   * before anything is written); lease, cancel and failure writes are not charged — they
   * barely change its size, and refusing them would strand a task.
   */
  async function update(id: string, change: (r: TaskRecord) => TaskRecord | false, charged = false, read?: StoredRecord): Promise<{ record: TaskRecord | undefined; written: boolean }> {
    await time.sync();
    // Growth already counted by an attempt that lost its compare-and-swap: not counted twice.
    let counted = 0;
    for (let attempt = 0; attempt < 50; attempt++) {
      // First what this instance last read or wrote (no read, if nobody wrote it since), or what
      // the caller read just now (`read`: a batch of due tasks read together); a refusal or a
      // lost swap on it is not an answer: read the record then.
      const recalled = attempt === 0 ? (read ?? known.recall(id)) : undefined;
      const current: StoredRecord | undefined = recalled !== undefined && endOfLife(recalled.record) > time.now() ? recalled : await load(id);
      if (current === undefined) return { record: undefined, written: false };
      const next = change(current.record);
      if (next === false && current === recalled) continue;
      if (next === false) return { record: current.record, written: false };
      const written: TaskRecord = stampTimes(current.record, { ...next, rev: current.record.rev + 1, updated: time.now() });
      const text = JSON.stringify(written);
      const growth = charged ? text.length - current.raw.length + takenSignalBytes(current.record, written) : 0;
      if (growth > counted) {
        await bytes.charge(written.principal, growth - counted);
        counted = growth;
      }
      // The due index follows the lease, or a sleeping task's wake time, and the list indexes
      // its status. With the write in one operation where the store can (swapIndexed: one
      // statement on PostgreSQL); otherwise one operation after it — best effort then: a stale
      // entry is only re-checked, and a failure to remove one must not turn a written
      // transition into a failed one (whose retry would find the record changed).
      const due = dueAt(written);
      const leases: IndexChange[] = due !== undefined ? [{ index: LEASES, member: id, at: due }] : dueAt(current.record) !== undefined ? [{ index: LEASES, member: id, at: null }] : [];
      const reload = async () => (await load(id))?.record;
      const notice = taskNoticeOf(current.record, written);
      const moves = store.swapIndexed !== undefined ? listChanges(current.record, written, leases) : undefined;
      const swapped =
        moves !== undefined
          ? await store.swapIndexed!(keyOf(id), current.raw, text, storeTtl(written), notice, moves.changes)
          : await store.swap(keyOf(id), current.raw, text, storeTtl(written), notice);
      if (!swapped) known.forget(id);
      else {
        onWritten?.(written);
        if (isTerminal(written.status)) known.forget(id);
        else known.remember(id, { raw: text, record: written });
        if (moves !== undefined) await putBack(store, moves.left, reload);
        else await moveInList(store, current.record, written, reload, leases);
        if (due !== undefined && written.lease === undefined) onWake?.(due);
        return { record: written, written: true };
      }
    }
    throw new StoreError("store_unavailable", `task ${id}: too many concurrent writers`);
  }

  /** `record` was just written as `raw` by other means than `update` (a task's start): its next write needs no read. */
  const created = (record: TaskRecord, raw: string) => known.remember(record.id, { raw, record });

  return { load, peek, peekMany, update, created };
}
