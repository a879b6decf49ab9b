import type { PrincipalBytes, Store, StoreClock } from "../../store/index.js";
import { StoreError } from "../../store/index.js";
import { isTerminal, type TaskRecord, taskRecord } from "./record.js";
import { OUTCOME_KEPT_MS, waitKey } from "./transitions.js";

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

export function createTaskRecords({ store, time, bytes }: { store: Store; time: StoreClock; bytes: PrincipalBytes }) {
  // A task that has not ended is kept past its lifetime, so whoever finds it there can end it
  // (`outlive`) with an outcome to read; an ended one until its lifetime, or as `outlive` said.
  const storeTtl = (r: TaskRecord) => Math.max(1, (isTerminal(r.status) ? (r.keptUntil ?? r.created + r.ttlMs) : r.created + r.ttlMs + OUTCOME_KEPT_MS) - time.now());

  async function load(id: string): Promise<{ raw: string; record: TaskRecord } | undefined> {
    const raw = await store.get(keyOf(id));
    if (raw === undefined) return undefined;
    const parsed = taskRecord.safeParse(JSON.parse(raw));
    if (!parsed.success) throw new Error(`task ${id}: the stored record is not a task record this version understands`);
    return { raw, record: parsed.data };
  }

  /**
   * Apply `change` to the task's record atomically: read, change, compare-and-swap, again on a
   * conflict. `change` returns the new record, or `false` to leave it. Returns the record as it
   * now is (`undefined`: no such task) and whether this call wrote it. With `charged`, the
   * record's growth counts against its principal's share of the store (a refusal throws
   * before anything is written); lease, cancel and failure writes are not charged — they
   * barely change its size, and refusing them would strand a task.
   */
  async function update(id: string, change: (r: TaskRecord) => TaskRecord | false, charged = false): Promise<{ record: TaskRecord | undefined; written: boolean }> {
    await time.sync();
    // Growth already counted by an attempt that lost its compare-and-swap: not counted twice.
    let counted = 0;
    for (let attempt = 0; attempt < 50; attempt++) {
      const current = await load(id);
      if (current === undefined) return { record: undefined, written: false };
      const next = change(current.record);
      if (next === false) return { record: current.record, written: false };
      const written: TaskRecord = { ...next, rev: current.record.rev + 1, updated: time.now() };
      const text = JSON.stringify(written);
      const growth = charged ? text.length - current.raw.length + takenSignalBytes(current.record, written) : 0;
      if (growth > counted) {
        await bytes.charge(written.principal, growth - counted);
        counted = growth;
      }
      if (await store.swap(keyOf(id), current.raw, text, storeTtl(written))) {
        // The due index follows the lease, or a sleeping task's wake time (best effort: a stale
        // entry is only re-checked).
        const due = dueAt(written);
        if (due !== undefined) await store.schedule(LEASES, id, due);
        // An entry left behind only costs the sweeper a look: its failure must not turn a
        // written transition into a failed one (whose retry would find the record changed).
        else if (dueAt(current.record) !== undefined) await store.unschedule(LEASES, id).catch(() => {});
        return { record: written, written: true };
      }
    }
    throw new StoreError("store_unavailable", `task ${id}: too many concurrent writers`);
  }

  return { load, update };
}
