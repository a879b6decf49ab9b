import type { IndexChange } from "../store.js";

// store/postgres/swap-groups.ts gathers the compare-and-swaps an instance asks for in one turn of
// the event loop into one statement. On PostgreSQL each statement is a round trip, a commit and a
// socket write that wakes a server process; a sweep that takes over 50 tasks, their runs saving
// their steps, their ends — each is a burst of swaps asked for together. Gathering them costs a
// swap at most the rest of the loop turn it was asked in: no cap on the statements in flight, no
// timer, so a running task's own writes (a lease renewal, a step's save) never wait behind other
// tasks' writes for more than that turn (an earlier design capped the grouped statements in
// flight, and under load a task's renewals queued behind them past its lease).

/** One compare-and-swap as the store was asked for it, its values checked. */
export interface GroupedSwap {
  key: string;
  expected: string;
  value: string;
  ttlMs: number;
  changes: readonly IndexChange[];
}

/** Swaps in one statement at most: a burst larger than this goes as several. */
export const MOST_SWAPS_PER_STATEMENT = 100;

/**
 * `swap(s)` resolves to whether `s` replaced its value. Swaps asked for in one turn of the event
 * loop go to `many` together (their keys distinct: a statement updates a row once), or to `one`
 * when alone; a statement that fails fails each of its swaps with its error.
 */
export function swapGroups(one: (swap: GroupedSwap) => Promise<boolean>, many: (swaps: readonly GroupedSwap[]) => Promise<readonly boolean[]>) {
  let waiting: Array<{ swap: GroupedSwap; settle: (outcome: Promise<boolean>) => void }> = [];
  // The keys and index entries the waiting swaps write: a row a statement would write twice.
  let keys = new Set<string>();
  let turnEnd = false;

  function send(): void {
    const group = waiting;
    waiting = [];
    keys = new Set();
    if (group.length <= 1) {
      for (const w of group) w.settle(one(w.swap));
      return;
    }
    const outcomes = many(group.map((w) => w.swap));
    for (const [i, w] of group.entries()) w.settle(outcomes.then((replaced) => replaced[i] === true));
  }

  return {
    swap(swap: GroupedSwap): Promise<boolean> {
      // The same row twice in one turn: the swaps asked for before it go now, in a statement of their own.
      const rows = [swap.key, ...swap.changes.map((c) => `\u0000${c.index}\u0000${c.member}`)];
      if (rows.some((row) => keys.has(row)) || waiting.length >= MOST_SWAPS_PER_STATEMENT) send();
      const outcome = new Promise<boolean>((resolve) => {
        waiting.push({ swap, settle: resolve });
      });
      for (const row of rows) keys.add(row);
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
