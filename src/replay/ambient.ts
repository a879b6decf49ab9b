/**
 * What `verifyReplay` does to ambient nondeterminism, so that code branching on `Math.random`
 * or `Date.now` outside `step`/`now()`/`uuid()` is caught every time, not by chance. While a
 * round runs, the generator's own code gets `Math.random` values in (0, 0.001] and the real
 * `Date.now`, each time noted on the call; while the check replays it, the same calls, in the
 * same order, get values in [0.999, 1) and the noted times plus 12 hours and 1 ms (morning
 * becomes evening, even becomes odd). A threshold on a random number, a parity or a half of the
 * day then goes the other way on the replay. Code inside a step is left alone (its result is
 * recorded, not replayed, and it may need real time). A development check: the two functions
 * are patched process-wide while a checked round and its replay run.
 */

/** The `Date.now` values a call's generator code saw, in order (kept on its context across rounds). */
export type SeenTimes = number[];

const SHIFT_MS = 12 * 60 * 60 * 1000 + 1;

interface Scope {
  readonly run: "round" | "replay";
  readonly seen: SeenTimes;
  times: number;
  randoms: number;
  inStep: number;
}

let scope: Scope | undefined;
let depth = 0;
let saved: { random: () => number; now: () => number } | undefined;

function patchedRandom(): number {
  const s = scope;
  if (s === undefined || s.inStep > 0) return saved!.random();
  const tiny = ((s.randoms++ % 1000) + 1) / 1_000_000;
  return s.run === "round" ? tiny : 1 - tiny;
}

function patchedNow(): number {
  const s = scope;
  const real = saved!.now();
  if (s === undefined || s.inStep > 0) return real;
  const k = s.times++;
  if (s.run === "round") {
    s.seen.push(real);
    return real;
  }
  return (s.seen[k] ?? real) + SHIFT_MS;
}

/** Run `work` (a round, or its check replay) with the two patched; `seen` is the call's list. */
export async function withAmbient<T>(run: "round" | "replay", seen: SeenTimes, work: () => Promise<T>): Promise<T> {
  if (depth++ === 0) {
    saved = { random: Math.random, now: Date.now };
    Math.random = patchedRandom;
    Date.now = patchedNow;
  }
  const outer = scope;
  // The replay reads the times from the start; the round appends after what earlier rounds saw.
  scope = { run, seen, times: run === "round" ? seen.length : 0, randoms: 0, inStep: 0 };
  try {
    return await work();
  } finally {
    scope = outer;
    if (--depth === 0) {
      Math.random = saved!.random;
      Date.now = saved!.now;
      saved = undefined;
    }
  }
}

/** A step's body runs: leave the two alone until it ends (calls nest; `leaveStep` undoes one). */
export function enterStep(): void {
  if (scope !== undefined) scope.inStep++;
}
export function leaveStep(): void {
  if (scope !== undefined && scope.inStep > 0) scope.inStep--;
}
