import type { Listening, Store } from "../store/index.js";
import { randomPart } from "../util/random-part.js";
import { listRemovalsOf } from "./record/list-index.js";
import type { StoredRecord } from "./record/known-records.js";
import { isTerminal, type TaskRecord } from "./record/record.js";
import { dueAt, endOfLife, keyOf, LEASES, shareOf, TASKS } from "./record/record-store.js";
import { readTaskNotice, TASK_FEED } from "./record/task-feed.js";
import * as transition from "./record/transitions.js";

// tasks/sweeper.ts owns finding the tasks that are due and taking them over: a sleeping task at
// its wake time, a waiting one at its deadline, a running one whose lease ran out (its instance
// died, stalled or shut down). One timer per instance, whatever the number of tasks, armed for
// the earliest due time it knows: its own tasks' wake times, those the store's change feed
// announces from other instances, and after each sweep the earliest entry of the due index (a
// lease that will run out). The periodic sweep (`sweepMs`) is the backstop for a lost notice.
//
// Invariants:
// 1. A task is taken over only by the `wake` transition's compare-and-swap: two sweepers never
//    both run it.
// 2. A task that can no longer be due (ended, parked on asks, gone) leaves the due index.
// 3. A cancel that its runner never completed (the runner died) is completed here.
// 4. A task that reaches its lifetime without ending is ended here (`outlive`: failed,
//    task_lifetime_ended) if no tasks/get did it first, and its outcome stays readable a while.
// 5. A task past its end of life leaves the list and its indexes, and its record is deleted.
// 6. A task whose run is under way on this instance is not taken over here, its lease ended or
//    not: a second run would do the step in flight again (other instances cannot tell, and do).

/**
 * Read the due index again at least this often (a task another instance started, its lease
 * running out when that instance dies: taken over within its lease and this) and at most this
 * often (many running tasks: their leases' ends are always near, and each would be a sweep).
 */
const INDEX_RECHECK_MS = { most: 1_000, least: 250 };
/** Due tasks read at once, and of those taken over together (a random part: see `sweep`). */
const DUE_WINDOW = 200;
const DUE_BATCH = 50;
/** Wake times are kept to this grain (one sweep for the tasks due within it). */
const WAKE_GRAIN_MS = 10;
/** Wake times kept in memory at most (the earliest): later ones are found by the sweep. */
const MAX_WAKES = 10_000;

/** What the sweeper needs from the engine. */
export interface SweeperParts {
  store: Store;
  time: { sync(): Promise<void>; now(): number; uncertainty(): number };
  update: (id: string, change: (r: TaskRecord) => TaskRecord | false, charged?: boolean, read?: StoredRecord) => Promise<{ record: TaskRecord | undefined; written: boolean }>;
  /** The records of many tasks as stored, read together where the store can (those it could not read are absent). */
  peekMany: (ids: readonly string[]) => Promise<Map<string, StoredRecord>>;
  /** The record as stored, past its end of life too. */
  peek: (id: string) => Promise<TaskRecord | undefined>;
  newRun: transition.NewRun;
  launch: (r: TaskRecord) => void;
  cancelled: (id: string) => Promise<unknown>;
  /** Tasks recorded by code this instance lacks (tasks/run/lacking.ts): left to other instances. */
  lacks: (id: string) => boolean;
  /** A run of the task is under way here: its lease may have ended (a slow write, a starved process), it has not. */
  runningHere: (id: string) => boolean;
  sweepMs: number;
}

/** The sweeper of one engine: `takeOver(id)` / `takeOverDue(id)` for one task, `ensure()` starts the timer, `stop()` ends it. */
export function createSweeper({ store, time, update, peek, peekMany, newRun, launch, cancelled, lacks, runningHere, sweepMs }: SweeperParts) {
  let timer: ReturnType<typeof setInterval> | undefined;
  let stopped = false;
  // One timer, for the earliest wake this instance knows of (store clock); the later ones wait
  // in `wakes` (sorted, a 10 ms grain, at most MAX_WAKES: past that the sweep finds them).
  let wake: { at: number; timer: ReturnType<typeof setTimeout> } | undefined;
  const wakes: number[] = [];
  let sweeping: Promise<void> | undefined;
  let again = false;
  // The change feed: tasks other instances put to sleep, and a reset (notices missed) sweeps now.
  let listening: Listening | undefined;

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

  /**
   * A task becomes due at `at` (store clock): sweep then, not at the next periodic sweep (a
   * 100 ms retry delay would otherwise wait up to `sweepMs`).
   */
  function wakeAt(at: number): void {
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
      // Past the time as the store's clock may read it (a sleep never ends early: transitions.wake).
      Math.max(0, at - time.now() + Math.ceil(time.uncertainty())) + 2,
    );
    timer.unref?.();
    wake = { at, timer };
  }

  /**
   * Take over a working task that is due (asleep past its time, or its lease ran out). `false`
   * when its due entry stays as it was (code this instance lacks, a time not certainly past yet).
   */
  async function takeOver(id: string, read?: StoredRecord): Promise<boolean> {
    if (lacks(id) || stopped) return false;
    const taken = await update(id, (r) => transition.wake(r, time.now(), newRun, time.uncertainty()), false, read);
    const now = time.now();
    const due = taken.record === undefined ? undefined : dueAt(taken.record);
    if (taken.written && taken.record) launch(taken.record);
    else if (taken.record === undefined || isTerminal(taken.record.status) || due === undefined) await store.unschedule(LEASES, id);
    else if (taken.record.cancel === true && (taken.record.lease === undefined || transition.leaseEnded(taken.record.lease, now, time.uncertainty()))) await cancelled(id);
    else if (due > now) {
      // An entry earlier than the task is due (an index write lost, a wait re-armed): moved to
      // its time — unless the record changed since the sweep read it (another instance took the
      // task first): that write moved the entry with it, and the sweep's batch would wait for a
      // write that changes nothing. Were that move lost (a store without swapIndexed), the next
      // sweep finds the record as it read it and moves the entry then.
      if (read === undefined || read.record.rev === taken.record.rev) await store.schedule(LEASES, id, due);
    } else return false;
    return true;
  }

  /**
   * `takeOver`, unless a run of the task is under way here (invariant 6): for what finds a task
   * due — a sweep, a tasks/get, a signal. A run that asks to be taken over at once (a wait it
   * reached is already satisfied) calls `takeOver` itself.
   */
  const takeOverDue = async (id: string, read?: StoredRecord): Promise<boolean> => (runningHere(id) ? false : takeOver(id, read));

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
      await store.index([...listRemovalsOf(gone), { index: shareOf(gone.principal), member: id, at: null }]);
      await store.delete(keyOf(id));
    }
    await store.unschedule(TASKS, id);
  }

  /** Arm for the earliest entry of the due index still to come (a lease's end as another instance may read it), within INDEX_RECHECK_MS. */
  async function armForIndex(): Promise<void> {
    const now = time.now();
    const [next] = await store.members(LEASES, 1, { at: now, member: "\u{10ffff}" });
    const at = next === undefined ? Number.POSITIVE_INFINITY : next.at + Math.ceil(time.uncertainty());
    wakeAt(Math.min(Math.max(at, now + INDEX_RECHECK_MS.least), now + INDEX_RECHECK_MS.most));
  }

  async function sweep(): Promise<void> {
    await time.sync();
    // Due tasks in batches, and on while there are more (up to 20 batches a sweep, then another
    // sweep at once): many may wake at once. Each batch is a random part of the earliest due, so
    // instances sweeping together mostly take different tasks (the compare-and-swap decides a
    // clash, at the cost of a read). A batch that moved no entry (tasks this instance cannot
    // take: code it lacks, another instance's) ends the sweep rather than reading them again.
    for (let batch = 0; ; batch++) {
      const due = await store.due(LEASES, time.now(), DUE_WINDOW);
      // A batch taken over together: one round trip's wait for the batch, not one per task, and
      // its records read in one (a swap against a record read here is as safe as against one
      // read alone: a record changed since fails the swap and is read again).
      const part = randomPart(due, DUE_BATCH).filter((id) => !runningHere(id) && !lacks(id));
      const read = await peekMany(part);
      const moved = await Promise.all(part.map((id) => takeOverDue(id, read.get(id))));
      if (stopped || due.length <= DUE_BATCH || !moved.includes(true)) break;
      if (batch === 19) {
        again = true;
        break;
      }
    }
    await armForIndex();
    // Tasks at the end of their lifetime (the list holds each at that time): one that has not
    // ended ends now, with an outcome to read; one that has leaves the list once its record is
    // gone. Up to 25 at a time, and on while there are more (up to 500 a sweep per instance):
    // tasks end as fast as they start.
    for (let batch = 0; batch < 20 && !stopped; batch++) {
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
    takeOverDue,
    outlive,
    ensure(): void {
      if (timer !== undefined || stopped) return;
      timer = setInterval(sweepSoon, sweepMs);
      timer.unref?.();
      sweepSoon();
      // Not listening (a store without a feed, or it could not open one): the sweep alone finds
      // tasks. Stopped before the listener is up (a PostgreSQL probe takes up to two time
      // limits): it closes as soon as it is, rather than holding up the stop.
      store
        .listen?.(TASK_FEED, {
          message: (message) => {
            const notice = readTaskNotice(message);
            if (notice?.d !== undefined) wakeAt(notice.d);
          },
          reset: sweepSoon,
        })
        .then(
          (opened) => {
            if (stopped) void opened?.close().catch(() => {});
            else listening = opened;
          },
          () => {},
        );
    },
    wakeAt,
    /** Stop the timers and the feed's listener (resolves once it is closed); a sweep under way stops at its next batch. */
    async stop(): Promise<void> {
      stopped = true;
      if (timer !== undefined) clearInterval(timer);
      if (wake !== undefined) clearTimeout(wake.timer);
      const open = listening;
      listening = undefined;
      await open?.close().catch(() => {});
    },
    /** Resolves once no sweep is under way (after `stop`: for good). */
    async idle(): Promise<void> {
      while (sweeping !== undefined) await sweeping;
    },
  };
}
