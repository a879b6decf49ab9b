import { createPrincipalBytes, type PrincipalBytes } from "../../store/principal-bytes.js";
import type { Store, StoreClock } from "../../store/index.js";
import { TOLERATED_CLOCK_SKEW_MS } from "./skew.js";

// runtime/single-use/round-share.ts charges the single-use records a principal's rounds make the
// store keep (a round's kept response or continuation, `redeem:<nonce>`) to that principal's
// share, so that one principal answering rounds cannot fill the store every other one needs.
//
// Charged in advance, a credit at a time: a round is admitted while its principal has credit
// on this instance, and its record's bytes are taken off after it is written; the credit is
// bought from the principal's counter in the store (`PrincipalBytes`, one round trip) when it
// runs out. So a round costs no store round trip of its own — one per ROUND_CREDIT_BYTES of
// records per principal and instance — and a principal over its share is refused before its
// round runs (no step runs, nothing is lost), never after. A soft bound, like every share:
// rounds admitted together may pass the credit, by their own records; that overdraft is
// bought with the next credit. Credit left on an instance counts as held, which errs safe.
//
// Requests without a principal are not charged: with nobody to tell apart there is no one to
// be fair to, and one allowance for all of them would refuse every client at once after a busy
// quarter-hour. The store's own bound holds for them (the memory store keeps room for these
// records and shrinks kept responses before it refuses).

/** How many bytes of records a principal's credit on one instance covers (one store round trip each). */
export const ROUND_CREDIT_BYTES = 64 * 1024;
/** Principals with credit remembered at once on an instance; past it all are forgotten (their credit stays counted: safe). */
const MAX_PRINCIPALS = 10_000;

export interface RoundShare {
  /**
   * Before a round of `principal` is redeemed: `undefined` when it has credit here (no wait), or
   * the purchase of more, which rejects with `-32603` `principal_byte_limit` past its share.
   */
  admit(principal: string | undefined): Promise<void> | undefined;
  /** After a round of `principal` wrote a record of `bytes`: taken off its credit. */
  spend(principal: string | undefined, bytes: number): void;
}

interface Credit {
  /** The counting window the credit was bought in: it is only good in that one (see `admit`). */
  window: number;
  /** Bytes left; below zero, records written past the credit, owed with the next one. */
  left: number;
  /** The purchase under way, shared by every round waiting for it. */
  buying: Promise<void> | undefined;
}

/**
 * `bytes` counts over `windowMs`, which must be at least as long as the records charged live
 * (the state's lifetime and the skew margin): nothing charged then outlives the two windows a
 * charge is counted in.
 */
export function createRoundShare({ bytes, time, windowMs, creditBytes = ROUND_CREDIT_BYTES }: { bytes: PrincipalBytes; time: StoreClock; windowMs: number; creditBytes?: number }): RoundShare {
  const credits = new Map<string, Credit>();
  const windowNow = () => Math.floor(time.now() / windowMs);

  function buy(principal: string, credit: Credit): Promise<void> {
    const owed = Math.max(0, -credit.left);
    credit.buying = bytes.charge(principal, creditBytes + owed).then(
      () => {
        credit.window = windowNow();
        credit.left = creditBytes;
        credit.buying = undefined;
      },
      (error: unknown) => {
        // Refused (or the store out): what was owed is forgiven rather than asked again with
        // every later purchase, which would lock the principal out for good once it passed the
        // share by itself. It was at most one credit's worth of concurrent rounds.
        credit.left = 0;
        credit.buying = undefined;
        throw error;
      },
    );
    return credit.buying;
  }

  return {
    admit(principal) {
      if (principal === undefined) return undefined;
      const window = windowNow();
      let credit = credits.get(principal);
      if (credit === undefined) {
        if (credits.size >= MAX_PRINCIPALS) credits.clear();
        credit = { window, left: 0, buying: undefined };
        credits.set(principal, credit);
      }
      // Credit bought in an earlier window is spent: a record written with it now would outlive
      // the windows its purchase is counted in. What is owed stays owed.
      if (credit.window !== window && credit.left > 0) credit.left = 0;
      if (credit.left > 0) return undefined;
      return credit.buying ?? buy(principal, credit);
    },
    spend(principal, spent) {
      if (principal === undefined || spent <= 0) return;
      const credit = credits.get(principal);
      if (credit === undefined) credits.set(principal, { window: windowNow(), left: -spent, buying: undefined });
      else credit.left -= spent;
    },
  };
}

/**
 * The share of records that live `lifetimeMs` past their last write (and the skew margin), as
 * counters named `name` in `store`; none when shares are off (`limit` 0).
 */
export function roundShareOf(store: Store, time: StoreClock, limit: number, lifetimeMs: number, name: string): RoundShare | undefined {
  if (limit === 0) return undefined;
  const windowMs = lifetimeMs + TOLERATED_CLOCK_SKEW_MS;
  // A small share is bought in small credits: one credit never takes more than a sixteenth of it.
  const creditBytes = Math.max(1, Math.min(ROUND_CREDIT_BYTES, Math.floor(limit / 16)));
  return createRoundShare({ bytes: createPrincipalBytes({ store, time, limit, windowMs, name }), time, windowMs, creditBytes });
}
