import { describe, expect, it } from "vitest";
import { createMemoryStore, type Store } from "mcp-yield";
import type { StoredRecord } from "../../src/tasks/record/known-records.js";
import type { TaskRecord } from "../../src/tasks/record/record.js";
import type { NewRun } from "../../src/tasks/record/transitions.js";
import { createSweeper } from "../../src/tasks/sweeper.js";
import { taskRecord } from "../support/task-record.js";

// The sweeper's take-over of one due task (tasks/sweeper.ts `takeOver`), against a record the
// sweep read in its batch: a task another instance took over first leaves the due index as that
// instance's write set it (no write of this sweep's own, which its batch would wait for); an
// entry earlier than its task is due, the record as read, is moved to the task's time — and one
// left behind by a write whose index move was lost is moved by the next sweep that reads it.

const NOW = 1_000_000;
const newRun: NewRun = (r) => ({ lease: { owner: "me", run: "n1", until: NOW + 30_000 }, runs: (r.runs ?? 0) + 1 });

const record = (over: Partial<TaskRecord>): TaskRecord => taskRecord({ rev: 3, ttlMs: 3_600_000, runs: 1, ...over });
const stored = (r: TaskRecord): StoredRecord => ({ raw: JSON.stringify(r), record: r });

/** A sweeper whose `update` finds `now` in the store (the transition refuses it: not due), and the due-index writes it makes. */
function sweeperFinding(now: TaskRecord) {
  const store = createMemoryStore();
  const scheduled: Array<[string, string, number]> = [];
  const counted: Store = { ...store, schedule: async (index, member, at) => (scheduled.push([index, member, at]), store.schedule(index, member, at)) };
  const sweeper = createSweeper({
    store: counted,
    time: { sync: async () => {}, now: () => NOW, uncertainty: () => 0 },
    update: async () => ({ record: now, written: false }),
    peekMany: async () => new Map(),
    peek: async () => now,
    newRun,
    launch: () => {
      throw new Error("nothing is due: nothing is launched");
    },
    cancelled: async () => {},
    lacks: () => false,
    runningHere: () => false,
    sweepMs: 60_000,
  });
  return { sweeper, scheduled };
}

describe("the sweeper's take-over of a due task it read in its batch", () => {
  // Asleep until now when the sweep read it; another instance's take-over wrote it since (rev 4, leased).
  const asRead = record({ rev: 3, wake: NOW - 5 });
  const takenElsewhere = record({ rev: 4, lease: { owner: "them", run: "r9", until: NOW + 30_000 } });

  it("taken over by another instance since the read: no due-index write of its own, and the batch counts it as moved", async () => {
    const { sweeper, scheduled } = sweeperFinding(takenElsewhere);
    expect(await sweeper.takeOver("T", stored(asRead))).toBe(true);
    expect(scheduled).toEqual([]);
    await sweeper.stop();
  });

  it("the record as read, its entry earlier than its wake: the entry is moved to the wake time", async () => {
    const later = record({ rev: 3, wake: NOW + 2_000 });
    const { sweeper, scheduled } = sweeperFinding(later);
    expect(await sweeper.takeOver("T", stored(later))).toBe(true);
    expect(scheduled).toEqual([["task-leases", "T", NOW + 2_000]]);
    await sweeper.stop();
  });

  it("an entry left behind by a write whose index move was lost is moved by the next sweep that reads the record", async () => {
    const { sweeper, scheduled } = sweeperFinding(takenElsewhere);
    await sweeper.takeOver("T", stored(asRead)); // this sweep: the record changed since its read
    await sweeper.takeOver("T", stored(takenElsewhere)); // the next: read as it is now
    expect(scheduled).toEqual([["task-leases", "T", NOW + 30_000]]);
    await sweeper.stop();
  });

  it("found due without a read of the sweep's (a tasks/get, a signal): the entry is moved as before", async () => {
    const { sweeper, scheduled } = sweeperFinding(takenElsewhere);
    expect(await sweeper.takeOverDue("T")).toBe(true);
    expect(scheduled).toEqual([["task-leases", "T", NOW + 30_000]]);
    await sweeper.stop();
  });
});
