import type { IndexChange } from "../store.js";

// store/postgres/turn-batches.ts gathers the operations an instance asks for in one turn of the
// event loop into one statement. On PostgreSQL each statement is a round trip, a commit and a
// socket write that wakes a server process — on a 2-core VM that write was the largest single
// cost of a task. A sweep that takes over 50 tasks, their runs saving their steps, their ends,
// the first reads of the callers listening to them — each is a burst asked for together.
// Gathering them costs an operation at most the rest of the loop turn it was asked in: no cap on
// the statements in flight, no timer, so a running task's own writes (a lease renewal, a step's
// save) never wait behind other tasks' writes for more than that turn (an earlier design capped
// the grouped statements in flight, and under load a task's renewals queued behind them past
// its lease).

/** One compare-and-swap as the store was asked for it, its values checked. */
export interface GroupedSwap {
  key: string;
  expected: string;
  value: string;
  ttlMs: number;
  changes: readonly IndexChange[];
}

/** Operations in one statement at most: a burst larger than this goes as several. */
export const MOST_PER_STATEMENT = 100;

/**
 * `ask(item)` resolves to the item's own answer. Items asked for in one turn of the event loop go
 * to `many` together, or to `one` when alone; a statement that fails fails each of its items with
 * its error. `rowsOf` names the rows an item writes: an item writing a row one already waiting
 * writes sends those first (a statement writes a row once).
 */
export function turnBatches<I, O>(one: (item: I) => Promise<O>, many: (items: readonly I[]) => Promise<readonly O[]>, rowsOf: (item: I) => readonly string[] = () => []) {
  let waiting: Array<{ item: I; settle: (outcome: Promise<O>) => void }> = [];
  let rows = new Set<string>();
  let turnEnd = false;

  function send(): void {
    const batch = waiting;
    waiting = [];
    rows = new Set();
    if (batch.length <= 1) {
      for (const w of batch) w.settle(one(w.item));
      return;
    }
    const outcomes = many(batch.map((w) => w.item));
    for (const [i, w] of batch.entries()) w.settle(outcomes.then((answers) => answers[i]!));
  }

  return {
    ask(item: I): Promise<O> {
      const written = rowsOf(item);
      if (written.some((row) => rows.has(row)) || waiting.length >= MOST_PER_STATEMENT) send();
      const outcome = new Promise<O>((resolve) => {
        waiting.push({ item, settle: resolve });
      });
      for (const row of written) rows.add(row);
      if (!turnEnd) {
        turnEnd = true;
        setImmediate(() => {
          turnEnd = false;
          send();
        });
      }
      return outcome;
    },
    /** Send what waits for the turn's end now (the store is closing). */
    flush: send,
  };
}

/** The rows a write names: its key and its index entries (an index entry as `rowsOf` tells them apart from keys). */
export const rowsWritten = (key: string, changes: readonly IndexChange[]): string[] => [key, ...changes.map((c) => `\u0000${c.index}\u0000${c.member}`)];

/** The rows a swap writes. */
export const rowsOfSwap = (swap: GroupedSwap): string[] => rowsWritten(swap.key, swap.changes);
