import type { Store } from "./store.js";

/**
 * Time for decisions several instances share — when a task's lease or a round's claim runs
 * out — read as the store's clock, so that two machines whose clocks disagree still agree on
 * who holds what. One instance measures the store's clock against its own monotonic one now
 * and then (`Store.time`, one round trip) and adds the difference; between measurements time
 * advances by the monotonic clock, so a wall clock stepped by NTP changes nothing either. A
 * store without a clock of its own (the in-memory one: one instance, nothing shared) leaves
 * the local clock as it is.
 */
export interface StoreClock {
  /** Milliseconds since the epoch as the store's clock reads them now (approximately: within one round trip). */
  now(): number;
  /**
   * How far `now()` may be from the store's clock, in milliseconds: half the round trip of the
   * measurement in use, grown by the clocks' drift since it was taken, and 0 for a store without
   * a clock of its own. Two instances' `now()` can differ by both their uncertainties, so a lease
   * is judged with them: an instance counts its own lease as ending this much sooner, and
   * another's as ending this much later.
   */
  uncertainty(): number;
  /**
   * Measure the store's clock unless it was measured within `resyncMs`. The first measurement
   * is waited for; later ones happen in the background (the last offset serves meanwhile).
   * Never rejects: a failed measurement keeps the last offset and the next call tries again.
   */
  sync(): Promise<void>;
}

export interface StoreClockOptions {
  store: Store;
  /** This instance's clock: monotonic, in milliseconds since the epoch (tests inject theirs). */
  local: () => number;
  /** How long a measurement is used before another is taken. Default 10 s. */
  resyncMs?: number;
  /** A measurement whose round trip took longer than this is thrown away (its error would be up to half of it). Default 200 ms. */
  maxRoundTripMs?: number;
}

/** The store's clock as this instance sees it (see `StoreClock`). */
export function createStoreClock({ store, local, resyncMs = 10_000, maxRoundTripMs = 200 }: StoreClockOptions): StoreClock {
  let offset = 0;
  /** When the offset in use was measured: its uncertainty grows from then. */
  let measured = -Infinity;
  /** When the clock was last measured, the reading kept or not: the next resync is due from then. */
  let checked = -Infinity;
  // Until a measurement succeeds the local clock stands in, as uncertain as the worst kept one.
  let measuredUncertainty = store.time === undefined ? 0 : maxRoundTripMs / 2;
  const uncertainty = () => (measured === -Infinity ? measuredUncertainty : measuredUncertainty + (local() - measured) * DRIFT_PER_MS);
  let measuring: Promise<void> | undefined;
  const measure = async () => {
    const sent = local();
    const theirs = await store.time!();
    const back = local();
    if (back - sent > maxRoundTripMs) return;
    checked = back;
    // The store read its clock somewhere in the round trip: the middle is the best guess.
    const candidate = theirs - (sent + back) / 2;
    // Half the round trip either way, and a millisecond for the store's whole-ms clock and now()'s floor.
    const candidateUncertainty = (back - sent) / 2 + 1;
    // A measurement over a slow round trip (a busy moment) is less exact than one kept from a
    // quiet moment: the kept one stays while it is the tighter, unless the two disagree (the
    // store's clock was set): every wait on the clock is longer by its uncertainty.
    const kept = uncertainty();
    const agree = Math.abs(candidate - offset) <= candidateUncertainty + kept;
    if (measured !== -Infinity && agree && kept < candidateUncertainty) return;
    offset = candidate;
    measuredUncertainty = candidateUncertainty;
    measured = back;
  };
  return {
    // Whole milliseconds: times written into records and tokens read as the store would write them.
    now: () => Math.floor(local() + offset),
    uncertainty,
    sync() {
      if (store.time === undefined || local() - checked < resyncMs) return Promise.resolve();
      measuring ??= measure()
        .catch(() => {})
        .finally(() => (measuring = undefined));
      return measured === -Infinity ? measuring : Promise.resolve();
    },
  };
}

/** How fast a kept measurement grows less exact: the most two clocks may drift apart (NTP slews a clock by at most 500 ppm). */
const DRIFT_PER_MS = 0.0005;

/** A monotonic clock in milliseconds since the epoch: the process's start time plus the time it has run. */
export const monotonicNow = (): number => performance.timeOrigin + performance.now();
