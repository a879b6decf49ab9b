import { digestOf } from "../state/index.js";
import { ErrorCode, ProtocolError } from "../wire/index.js";
import type { Store } from "./store.js";
import type { StoreClock } from "./store-clock.js";

/**
 * Each principal's share of the store's bytes: what its calls make the store keep (task
 * records as they grow, spilled journals) is counted against `limit`, so that one client
 * cannot fill a store every other client needs.
 *
 * How it bounds what is held without tracking every entry: nothing charged lives longer than
 * `windowMs` (the longest time to live of what is charged), and every entry's size is at most
 * what was charged for it (its first write and each later growth). So what a principal holds
 * at any moment was charged within the last `windowMs`, which lies within the current and the
 * previous window of that length — and a charge is refused when those two windows together
 * would pass the limit. Counters are increments on the store (one round trip a charge; the
 * previous window's total is read once per window and instance). A charge whose write timed
 * out may still land: it then counts twice, which only errs on the safe side.
 */
export interface PrincipalBytes {
  /** Count `bytes` for `principal`, or refuse with `-32603` `principal_byte_limit` (nothing counted). */
  charge(principal: string | undefined, bytes: number): Promise<void>;
  /**
   * Give back a charge whose write did not happen (a start refused after it was charged). Best
   * effort, and only where it cannot undercount: credit of the window it was charged in.
   */
  refund(principal: string | undefined, bytes: number): void;
}

/** The reason a refused charge carries on the wire. */
export const PRINCIPAL_BYTE_LIMIT = "principal_byte_limit";

/**
 * `name` tells apart counters kept over different windows (a round's single-use records live
 * the state's lifetime, tasks their own): each is its own share of the same size.
 */
export function createPrincipalBytes({ store, time, limit, windowMs, name = "principal-bytes" }: { store: Store; time: StoreClock; limit: number; windowMs: number; name?: string }): PrincipalBytes {
  // Previous windows' totals by counter key: final once their window has passed.
  const previous = new Map<string, number>();
  const keyOf = (principal: string | undefined, window: number) => `${name}:${principal === undefined ? "-" : digestOf(principal)}:${window}`;
  // A counter outlives its window by one more, while it is the previous one.
  const ttlMs = 2 * windowMs + 1000;

  async function previousTotal(key: string): Promise<number> {
    const known = previous.get(key);
    if (known !== undefined) return known;
    const total = Number((await store.get(key)) ?? 0);
    if (previous.size >= 10_000) previous.clear();
    previous.set(key, total);
    return total;
  }

  return {
    async charge(principal, bytes) {
      if (bytes <= 0 || limit === 0) return;
      await time.sync();
      const window = Math.floor(time.now() / windowMs);
      const before = await previousTotal(keyOf(principal, window - 1));
      const key = keyOf(principal, window);
      const total = await store.incr(key, bytes, ttlMs);
      if (before + total <= limit) return;
      // Over: give the charge back (best effort: if that fails, it stays counted — safe).
      await store.incr(key, -bytes, ttlMs).catch(() => {});
      throw new ProtocolError(
        ErrorCode.InternalError,
        `This caller's calls already keep ${before + total - bytes} bytes in the server's store, and ${bytes} more would pass its share of ${limit}; wait for earlier calls and tasks to expire, or cancel some`,
        { reason: PRINCIPAL_BYTE_LIMIT, limit },
      );
    },
    // The counter's window may have turned since the charge: taken off the next one it would
    // undercount. It stays counted (the safe side); the credited layer gives credit back.
    refund() {},
  };
}

/** Whether `error` is a refused charge. */
export const isPrincipalByteLimit = (error: unknown): error is ProtocolError => error instanceof ProtocolError && (error.data as { reason?: unknown } | undefined)?.reason === PRINCIPAL_BYTE_LIMIT;

/** Principals with credit remembered at once on an instance; past it all are forgotten (their credit stays counted: safe). */
const MAX_CREDITED = 10_000;

/**
 * `inner`, charged a credit at a time: a charge is taken off this instance's credit for its
 * principal, and only when that runs out is more bought from the store's counter — `creditBytes`
 * (or the charge, if larger) in one round trip. Every principal's charges went through one
 * counter row: on PostgreSQL each charge waited for the one before it to commit (9 ms a charge,
 * the largest cost of a task's start and of its wake-up, measured with 3,000 tasks). A purchase
 * refused at the limit is tried once more for what the charge needs beyond the credit left, so a
 * principal near its share is refused only when the charge itself would not fit. Credit bought in one counting window is not
 * used in the next, and credit left on an instance counts as held: both err on the safe side.
 */
export function creditedBytes(inner: PrincipalBytes, { time, windowMs, creditBytes }: { time: StoreClock; windowMs: number; creditBytes: number }): PrincipalBytes {
  const credits = new Map<string | undefined, { window: number; left: number; buying: Promise<void> | undefined }>();
  return {
    async charge(principal, bytes) {
      if (bytes <= 0) return;
      await time.sync();
      for (;;) {
        const window = Math.floor(time.now() / windowMs);
        let credit = credits.get(principal);
        if (credit === undefined || credit.window !== window) {
          if (credit === undefined && credits.size >= MAX_CREDITED) credits.clear();
          credit = { window, left: 0, buying: undefined };
          credits.set(principal, credit);
        }
        if (credit.left >= bytes) {
          credit.left -= bytes;
          return;
        }
        if (credit.buying !== undefined) {
          // Another charge is buying: wait for it, then look again (its refusal is its own).
          await credit.buying.catch(() => {});
          continue;
        }
        const bought = credit;
        const want = Math.max(creditBytes, bytes);
        bought.buying = inner
          .charge(principal, want)
          .then(
            () => want,
            async (error: unknown) => {
              // Near the limit: what this charge needs beyond the credit left, and no more.
              const need = bytes - bought.left;
              if (need >= want || !isPrincipalByteLimit(error)) throw error;
              await inner.charge(principal, need);
              return need;
            },
          )
          .then((got) => {
            bought.left += got;
          })
          .finally(() => {
            bought.buying = undefined;
          });
        await bought.buying;
      }
    },
    refund(principal, bytes) {
      // Back into the credit it came from, if that window's credit is still this one's.
      const credit = credits.get(principal);
      if (bytes > 0 && credit !== undefined && credit.window === Math.floor(time.now() / windowMs)) credit.left += bytes;
    },
  };
}
