import type { TaskRecord } from "./record.js";

// tasks/record/known-records.ts owns what an instance last read or wrote of each task record it
// touched lately: a write tries it as the compare-and-swap's expected value before reading the
// record again. A run writes its task several times in a row (taken over, a step recorded,
// ended), and each write re-read the record first: one store round trip per transition saved
// when nobody else wrote it meanwhile. A stale entry costs a swap that fails and a read — the
// swap compares the whole stored value, so a stale entry is never written over anything.

/** A record as stored: its exact text (the swap's expected value) and what it says. */
export interface StoredRecord {
  raw: string;
  record: TaskRecord;
}

/** At most this many records, and this many characters of them: the most recently used are kept. */
const MAX_RECORDS = 2_000;
const MAX_CHARS = 8 * 1024 * 1024;

export function createKnownRecords() {
  const known = new Map<string, StoredRecord>();
  let chars = 0;
  const drop = (id: string) => {
    const was = known.get(id);
    if (was === undefined) return;
    known.delete(id);
    chars -= was.raw.length;
  };
  return {
    /** What this instance last saw of `id`, if it still holds it. */
    recall: (id: string): StoredRecord | undefined => known.get(id),
    /**
     * `id` is `stored` now, as this instance just read or wrote it. Only a task someone holds
     * (a run under way, writing it again soon) is kept: one nobody holds — asleep, waiting for a
     * signal or an answer — costs the instance nothing while it waits, and its next write (a
     * takeover, an answer) reads it.
     */
    remember(id: string, stored: StoredRecord): void {
      drop(id);
      if (stored.record.lease === undefined || stored.raw.length > MAX_CHARS / 16) return;
      known.set(id, stored);
      chars += stored.raw.length;
      // Oldest first (a Map iterates in insertion order; remember re-inserts).
      for (const [oldest] of known) {
        if (known.size <= MAX_RECORDS && chars <= MAX_CHARS) break;
        drop(oldest);
      }
    },
    /** What this instance saw of `id` is not what the store holds (a swap against it failed), or no longer matters. */
    forget: drop,
  };
}
