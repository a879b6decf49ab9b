// A clock the test moves by hand: no sleeping, no flakiness.

/** A manual clock starting at `start` (ms): `now()` reads it, `advance(ms)` moves it, `set(ms)` jumps. */
export function manualClock(start = 1_800_000_000_000): { now: () => number; advance: (ms: number) => number; set: (ms: number) => void } {
  let t = start;
  return {
    now: () => t,
    advance: (ms) => (t += ms),
    set: (ms) => {
      t = ms;
    },
  };
}
