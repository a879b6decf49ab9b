import type { Store } from "../store/index.js";
import { listRemovalsOf } from "./record/list-index.js";
import { isTerminal, type TaskRecord } from "./record/record.js";
import { dueAt, endOfLife, keyOf, LEASES, TASKS } from "./record/record-store.js";
import * as transition from "./record/transitions.js";

// tasks/sweeper.ts owns finding the tasks that are due and taking them over: a sleeping task at
// its wake time, a waiting one at its deadline, a running one whose lease ran out (its instance
// died, stalled or shut down). One timer per instance, whatever the number of tasks; the due
// index in the store says which tasks to look at.
//
// Invariants:
// 1. A task is taken over only by the `wake` transition's compare-and-swap: two sweepers never
//    both run it.
// 2. A task that can no longer be due (ended, parked on asks, gone) leaves the due index.
// 3. A cancel that its runner never completed (the runner died) is completed here.
// 4. A task that reaches its lifetime without ending is ended here (`outlive`: failed,
//    task_lifetime_ended) if no tasks/get did it first, and its outcome stays readable a while.
// 5. A task past its end of life leaves the list and its indexes, and its record is deleted.

/** Wake times are kept to this grain (one sweep for the tasks due within it). */
const WAKE_GRAIN_MS = 10;
/** Wake times kept in memory at most (the earliest): later ones are found by the sweep. */
const MAX_WAKES = 10_000;

/** What the sweeper needs from the engine. */
export interface SweeperParts {
  store: Store;
  time: { sync(): Promise<void>; now(): number; uncertainty(): number };
  update: (id: string, change: (r: TaskRecord) => TaskRecord | false) => Promise<{ record: TaskRecord | undefined; written: boolean }>;
  /** The record as stored, past its end of life too. */
  peek: (id: string) => Promise<TaskRecord | undefined>;
  newRun: transition.NewRun;
  launch: (r: TaskRecord) => void;
  cancelled: (id: string) => Promise<unknown>;
  /** Tasks recorded by code this instance lacks (tasks/run/lacking.ts): left to other instances. */
  lacks: (id: string) => boolean;
  sweepMs: number;
}

/** The sweeper of one engine: `takeOver(id)` for one task, `ensure()` starts the timer, `stop()` ends it. */
export function createSweeper({ store, time, update, peek, newRun, launch, cancelled, lacks, sweepMs }: SweeperParts) {
  let timer: ReturnType<typeof setInterval> | undefined;
  let stopped = false;
  // One timer, for the earliest wake this instance knows of (store clock); the later ones wait
  // in `wakes` (sorted, a 10 ms grain, at most MAX_WAKES: past that the sweep finds them).
  let wake: { at: number; timer: ReturnType<typeof setTimeout> } | undefined;
  const wakes: number[] = [];
  let sweeping: Promise<void> | undefined;
  let again = false;

  /** Sweep now, or once more right after the sweep under way. */
  function sweepSoon(): void {
    if (stopped) return;
    if (sweeping !== undefined) {
      again = true;
      return;
    }
    sweeping = sweep()
      .catch(() => {
        // The store is unreachable now; the next sweep tries again.
      })
      .finally(() => {
        sweeping = undefined;
        if (again) {
          again = false;
          sweepSoon();
        }
      });
  }

  /** Arm the timer for the earliest pending wake. */
  function arm(): void {
    if (wake !== undefined) clearTimeout(wake.timer);
    wake = undefined;
    const at = wakes[0];
    if (at === undefined || stopped) return;
    const timer = setTimeout(
      () => {
        wake = undefined;
        const now = time.now();
        while (wakes.length > 0 && wakes[0]! <= now) wakes.shift();
        sweepSoon();
        arm();
        // A couple of ms late: a sweep at the very time could read the store's clock just before it.
      },
      Math.max(0, at - time.now()) + 2,
    );
    timer.unref?.();
    wake = { at, timer };
  }

  /** Take over a working task that is due (asleep past its time, or its lease ran out). */
  async function takeOver(id: string): Promise<void> {
    if (lacks(id)) return;
    const taken = await update(id, (r) => transition.wake(r, time.now(), newRun, time.uncertainty()));
    const now = time.now();
    const due = taken.record === undefined ? undefined : dueAt(taken.record);
    if (taken.written && taken.record) launch(taken.record);
    else if (taken.record === undefined || isTerminal(taken.record.status) || due === undefined) await store.unschedule(LEASES, id);
    else if (taken.record.cancel === true && (taken.record.lease === undefined || transition.leaseEnded(taken.record.lease, now, time.uncertainty()))) await cancelled(id);
    // An entry earlier than the task is due (an index write lost, a wait re-armed): moved to its time.
    else if (due > now) await store.schedule(LEASES, id, due);
  }

  /**
   * End a task that reached its lifetime without ending (`outlive`): failed, its outcome kept a
   * while, and listed until then. The record as it is now (`undefined`: gone).
   */
  async function outlive(id: string): Promise<TaskRecord | undefined> {
    const ended = await update(id, (r) => transition.outlive(r, time.now()));
    if (ended.written && ended.record?.keptUntil !== undefined) await store.schedule(TASKS, id, ended.record.keptUntil);
    return ended.record;
  }

  /**
   * A task past its end of life: out of the list indexes by what its record says (kept a while
   * past its end for this: record-store.ts CLEANUP_KEPT_MS), its record deleted, then out of the list.
   */
  async function forget(id: string): Promise<void> {
    const gone = await peek(id);
    if (gone !== undefined && endOfLife(gone) <= time.now()) {
      await store.index(listRemovalsOf(gone));
      await store.delete(keyOf(id));
    }
    await store.unschedule(TASKS, id);
  }

  async function sweep(): Promise<void> {
    await time.sync();
    // Due tasks 25 at a time, and on while there are more (up to 500 a sweep): many may wake at once.
    for (let batch = 0; batch < 20; batch++) {
      const due = await store.due(LEASES, time.now(), 25);
      // A batch taken over together: one round trip's wait for 25 tasks, not 25.
      await Promise.all(due.map((id) => takeOver(id)));
      if (due.length < 25) break;
    }
    // Tasks at the end of their lifetime (the list holds each at that time): one that has not
    // ended ends now, with an outcome to read; one that has leaves the list once its record is
    // gone. Up to 25 at a time, and on while there are more (up to 500 a sweep per instance):
    // tasks end as fast as they start.
    for (let batch = 0; batch < 20; batch++) {
      const due = await store.due(TASKS, time.now(), 25);
      for (const id of due) {
        const found = await outlive(id);
        const until = found === undefined ? undefined : isTerminal(found.status) ? (found.keptUntil ?? found.created + found.ttlMs) : found.created + found.ttlMs;
        if (until === undefined || until <= time.now()) await forget(id);
        else await store.schedule(TASKS, id, until); // kept a while past it (or listed too early): due again then
      }
      if (due.length < 25) break;
    }
  }

  return {
    takeOver,
    outlive,
    ensure(): void {
      if (timer !== undefined || stopped) return;
      timer = setInterval(sweepSoon, sweepMs);
      timer.unref?.();
    },
    /**
     * A task this instance wrote becomes due at `at` (store clock): sweep then, not at the next
     * sweep (a 100 ms retry delay would otherwise wait up to `sweepMs`).
     */
    wakeAt(at: number): void {
      if (stopped) return;
      const grain = Math.ceil(at / WAKE_GRAIN_MS) * WAKE_GRAIN_MS;
      let i = 0;
      for (let hi = wakes.length; i < hi; ) {
        const mid = (i + hi) >>> 1;
        if (wakes[mid]! < grain) i = mid + 1;
        else hi = mid;
      }
      if (wakes[i] === grain || (i >= MAX_WAKES && wakes.length >= MAX_WAKES)) return;
      wakes.splice(i, 0, grain);
      if (wakes.length > MAX_WAKES) wakes.pop();
      if (i === 0) arm();
    },
    stop(): void {
      stopped = true;
      if (timer !== undefined) clearInterval(timer);
      if (wake !== undefined) clearTimeout(wake.timer);
    },
  };
}
