import { z } from "zod";
import { randomUuid } from "../state/index.js";
import { type Store, StoreError } from "../store/index.js";
import { ErrorCode, type JsonRpcErrorObject, ProtocolError } from "../wire/index.js";

/** What a round answered: its result, or the JSON-RPC error it ended with. */
export type RoundResponse = { result: unknown } | { error: JsonRpcErrorObject };

/** The right to run a round (`run`), or the response the round already gave (`stored`). */
export type Ticket =
  | { kind: "run"; finish(response: RoundResponse): Promise<void>; release(): Promise<void> }
  | { kind: "stored"; response: RoundResponse };

const record = z.union([
  /** Someone runs the round for answers with digest `d`; if `u` passes without renewal, it died. */
  z.object({ d: z.string(), s: z.literal("pending"), o: z.string(), u: z.number() }),
  z.object({ d: z.string(), s: z.literal("done"), r: z.union([z.object({ result: z.unknown() }), z.object({ error: z.object({ code: z.number(), message: z.string(), data: z.record(z.string(), z.unknown()).optional() }) })]) }),
]);

export interface RedemptionOptions {
  store: Store;
  clock: () => number;
  report: (error: unknown) => void;
  /** How long a claim holds without renewal (renewed while the round runs). Default 15 s. */
  claimMs?: number;
  /** How long a duplicate waits for the round it repeats before giving up with `round_in_progress`. Default 30 s. */
  waitMs?: number;
}

/**
 * Single use of `requestState`, on the store: the first request presenting a state runs the
 * round; its response is kept, under the state's nonce and a digest of the request's
 * `inputResponses`, until the state expires. The same request again (a lost response, a retry,
 * on any instance) gets that response without anything running; a concurrent duplicate waits
 * for it; a different request presenting the redeemed state is refused (`state_redeemed`).
 */
export function createRedemption({ store, clock, report, claimMs = 15_000, waitMs = 30_000 }: RedemptionOptions) {
  const me = randomUuid();
  const pollMs = 25;

  function owned(key: string, held: string, digest: string, ttl: () => number): Ticket {
    let current = held;
    // Renew the claim while the round runs, so a slow round is not taken for a dead one.
    const renew = setInterval(() => {
      const next = JSON.stringify({ d: digest, s: "pending", o: me, u: clock() + claimMs });
      void store.swap(key, current, next, ttl()).then((ok) => ok && (current = next), () => {});
    }, Math.max(1, Math.floor(claimMs / 3)));
    renew.unref?.();
    return {
      kind: "run",
      async finish(response) {
        clearInterval(renew);
        const done = JSON.stringify({ d: digest, s: "done", r: response });
        const keep = async () => {
          // The response is kept as long as the state could be presented again.
          if (!(await store.swap(key, current, done, ttl()))) report(new Error(`the response of a round was not kept: another instance took its claim (${key})`));
        };
        try {
          await keep();
        } catch (error) {
          if (!(error instanceof StoreError)) throw error;
          // The round ran but the store is out: keep trying while the state lives, so a repeat
          // that arrives once the store is back gets this response rather than running again.
          const retry = () => {
            if (ttl() <= 1) return;
            setTimeout(() => void keep().catch((e: unknown) => (e instanceof StoreError ? retry() : report(e))), 500).unref?.();
          };
          retry();
          throw error;
        }
      },
      async release() {
        clearInterval(renew);
        await store.delete(key);
      },
    };
  }

  return {
    /** Claim the round that presents the state `nonce` with answers of digest `digest`. */
    async claim(nonce: string, digest: string, expiresAt: number): Promise<Ticket> {
      const key = `redeem:${nonce}`;
      const ttl = () => Math.max(1, expiresAt - clock());
      const giveUp = clock() + waitMs;
      for (;;) {
        const pending = JSON.stringify({ d: digest, s: "pending", o: me, u: clock() + claimMs });
        if (await store.add(key, pending, ttl())) return owned(key, pending, digest, ttl);
        const raw = await store.get(key);
        if (raw === undefined) continue; // it expired in between: claim again
        const parsed = record.safeParse(JSON.parse(raw));
        if (!parsed.success) throw new Error(`${key}: the stored redemption is not one this version understands`);
        const found = parsed.data;
        if (found.d !== digest) {
          throw new ProtocolError(ErrorCode.InvalidParams, "This requestState was already used with other inputResponses; a state is redeemed once. Start the call again without requestState.", { reason: "state_redeemed" });
        }
        if (found.s === "done") return { kind: "stored", response: found.r as RoundResponse };
        if (found.u <= clock()) {
          // Its runner stopped renewing (an instance that died mid-round): take the round over.
          const mine = JSON.stringify({ d: digest, s: "pending", o: me, u: clock() + claimMs });
          if (await store.swap(key, raw, mine, ttl())) return owned(key, mine, digest, ttl);
          continue;
        }
        if (clock() > giveUp) throw new ProtocolError(ErrorCode.InternalError, "The same round is still running elsewhere; try again later", { reason: "round_in_progress" });
        await new Promise((r) => setTimeout(r, pollMs));
      }
    },
  };
}

export type Redemption = ReturnType<typeof createRedemption>;
