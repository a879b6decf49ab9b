import { z } from "zod";
import { randomUuid } from "../../state/index.js";
import { jsonText } from "../../state/json-text.js";
import { inputRequestsJson } from "../../journal/journal.js";
import { type Store, type StoreClock, StoreError } from "../../store/index.js";
import { synchronousAddOf } from "../../store/memory/memory.js";
import { isKeptDigest, keptResponseText, REDEEM_PREFIX } from "../../store/kept-response.js";
import { ErrorCode, type JsonRpcErrorObject, ProtocolError } from "../../wire/index.js";
import { guardTtl } from "./skew.js";

/**
 * runtime/redeem.ts owns single use of `requestState` on a store. The first request presenting a
 * state runs the round; its response is kept, under the state's nonce and a digest of the
 * request's `inputResponses`, until the state expires. The same request again (a lost
 * response, a retry, on any instance) gets that response without anything running; a
 * concurrent duplicate waits for it; a different request presenting the redeemed state is
 * refused (`state_redeemed`).
 *
 * A round is run before it claims (see serve-round's `redeemed`): one that runs no step and
 * creates no task keeps its response with a single `add` (`commit`) — one store round trip per
 * round; one that reaches a step or `runAsTask()` claims first, right there, and goes on as below.
 *
 * Invariants:
 * 1. A claim is given up (the state freed for any request) only by a round that ran no step.
 * 2. A round whose steps ran and which then failed leaves a continuation: the journal as far as
 *    it got. The same request again continues from it, so no step body runs a second time.
 * 3. Every write is a compare-and-swap against this claim's own record, re-read when an earlier
 *    write's acknowledgement was lost (a command that timed out may still land): a late write
 *    can never free or overwrite another request's claim or a kept response.
 */

/** What a round answered: its result, or the JSON-RPC error it ended with. */
export type RoundResponse = { result: unknown } | { error: JsonRpcErrorObject };

/**
 * How far a failed round got, for the request that repeats it: the state's header, the journal
 * as lines (the token's records and the ones the round added), and how many of those the token
 * carried (where the previous round had stopped).
 */
export interface Continuation {
  h: { r: number; c: string; o: Record<string, string>; p?: Record<string, string> | undefined; v?: string | undefined };
  t: string;
  n: number;
  /** The id of the task the round was creating, when it had reached `runAsTask()`. */
  task?: string | undefined;
}

/** The right to run a round (`run`, perhaps from a continuation), or the response the round already gave (`stored`). */
export type Ticket =
  | {
      kind: "run";
      /** Where an earlier attempt at this very request got to; run from here, not from the token. */
      continuation: Continuation | undefined;
      /** Keep the round's response; resolves to the bytes the record takes (its key and value). */
      finish(response: RoundResponse): Promise<number>;
      /** Keep where the round got (its steps ran) and give the claim up to a repeat of this request; resolves as `finish`. */
      suspend(continuation: Continuation): Promise<number>;
      /** Free the state for any request (only when nothing ran). */
      release(): Promise<void>;
      /**
       * Record how far the round got while it still runs (before each step: the values recorded
       * since the last write and the previous step's result), so an instance that takes the
       * round over after this one died goes on from there: those values are replayed, and no
       * step whose result was written runs again.
       */
      advance(continuation: Continuation): Promise<void>;
    }
  | { kind: "stored"; response: RoundResponse };

const stringMap = z.record(z.string(), z.string());
const continuation = z.object({
  h: z.object({ r: z.number().int().nonnegative(), c: z.string(), o: stringMap, p: stringMap.optional(), v: z.string().optional() }),
  t: z.string(),
  n: z.number().int().nonnegative(),
  task: z.string().optional(),
});
const record = z.discriminatedUnion("s", [
  /** Someone (`o`, claim `i`) runs the round for answers with digest `d`; if `u` passes without renewal, it died. */
  z.object({ d: z.string(), s: z.literal("pending"), o: z.string(), i: z.string().optional(), u: z.number(), k: continuation.optional() }),
  /** The round's response — or, `dropped`, that there was one (a full memory store shrank it: `dropKeptResponse`). */
  z.object({
    d: z.string(),
    s: z.literal("done"),
    r: z.union([z.object({ result: z.unknown() }), z.object({ error: z.object({ code: z.number(), message: z.string(), data: z.record(z.string(), z.unknown()).optional() }) })]).optional(),
    dropped: z.literal(true).optional(),
  }),
  /** A round whose steps ran stopped there: the same request continues from `k`. */
  z.object({ d: z.string(), s: z.literal("cont"), k: continuation }),
  /** Given up by a round that ran nothing: any request may claim the state. */
  z.object({ s: z.literal("free") }),
]);
type RedemptionRecord = z.infer<typeof record>;

export interface RedemptionOptions {
  store: Store;
  clock: () => number;
  /** The clock claims are measured on (a claim written on one machine is judged on another). Default: `clock`. */
  shared?: StoreClock;
  report: (error: unknown) => void;
  /** How long a claim holds without renewal (renewed while the round runs). Default 15 s. */
  claimMs?: number;
  /** How long a duplicate waits for the round it repeats before giving up with `round_in_progress`. Default 30 s. */
  waitMs?: number;
  /** How often a write the store refused is tried again while the state lives. Default 500 ms. */
  retryMs?: number;
}

const FREE = JSON.stringify({ s: "free" });

/** Characters a JSON string may carry as they are: a token of ours has nothing to escape. */
const VERBATIM = /^[A-Za-z0-9_.-]*$/;

/**
 * The record of an answered round, `{ d, s: "done", r }`, as JSON — the text `JSON.stringify`
 * makes. Every round that asks for input keeps one, and its largest part is the new state: a
 * token has nothing to escape, so it is written in as it is rather than scanned by
 * `JSON.stringify` (on Node 20 that scan measured ≈ 40 % of the whole record's serializing).
 * Anything but a result of exactly `{ resultType, inputRequests, requestState }` is stringified whole.
 * `minted`, the token the round's codec sealed, needs no scan: a codec token is base64url and
 * dots. (The scan of a 700-character token measured 0.63 µs, ≈ a quarter of the record.)
 */
export function doneRecord(digest: string, response: RoundResponse, minted?: string): string {
  const result = "result" in response ? (response.result as Record<string, unknown> | null) : undefined;
  // A plain object only: JSON.stringify would call a toJSON a class instance inherits.
  if (
    typeof result === "object" &&
    result !== null &&
    Object.getPrototypeOf(result) === Object.prototype &&
    result.resultType === "input_required" &&
    typeof result.requestState === "string" &&
    (result.requestState === minted || VERBATIM.test(result.requestState))
  ) {
    let members = 0;
    for (const key in result) if (Object.prototype.hasOwnProperty.call(result, key)) members++;
    const inputRequests =
      typeof result.inputRequests === "object" && result.inputRequests !== null ? inputRequestsJson(result.inputRequests as Record<string, unknown>) : jsonText(result.inputRequests);
    if (members === 3 && inputRequests !== undefined && isKeptDigest(digest)) {
      return keptResponseText(digest, `{"result":{"resultType":"input_required","inputRequests":${inputRequests},"requestState":"${result.requestState}"}}`);
    }
  }
  // The same member order as keptResponseText (a digest that needs escaping is quoted as JSON).
  return jsonText({ d: digest, s: "done", r: response })!;
}

const stateRedeemed = () =>
  new ProtocolError(ErrorCode.InvalidParams, "This requestState was already used with other inputResponses; a state is redeemed once. Start the call again without requestState.", {
    reason: "state_redeemed",
  });
const responseNotKept = () =>
  new ProtocolError(
    ErrorCode.InternalError,
    "This round already ran and was answered; the server no longer keeps its response (its store was full). If that response was lost, start the call again without requestState.",
    { reason: "response_not_kept" },
  );

/**
 * When what a redemption guards expires: a state's expiry, or (an idempotency key's record,
 * kept for a while from each write) a function read at each write.
 */
export type Expiry = number | (() => number);

const claimLost = () =>
  new ProtocolError(ErrorCode.InternalError, "This round was taken over by another instance (this one was thought dead); send the same request again for its response", {
    reason: "round_in_progress",
  });

/** Single use of `requestState`, on the store (see the file's header). */
export function createRedemption({ store, clock, shared = { now: clock, uncertainty: () => 0, sync: async () => {} }, report, claimMs = 15_000, waitMs = 30_000, retryMs = 500 }: RedemptionOptions) {
  const me = randomUuid();
  const pollMs = 25;
  /** The lifetime of a record guarding what expires at `expiresAt`, with the skew margin (runtime/single-use/skew.ts). */
  const ttlOf = (expiresAt: Expiry) => () => guardTtl(typeof expiresAt === "number" ? expiresAt : expiresAt(), clock());
  /**
   * Claims whose write failed on this instance but may land later (a timed-out command): a
   * repeat finding one takes it over at once instead of waiting for it to expire. Bounded.
   */
  const abandoned = new Set<string>();
  const abandon = (key: string, value: string, ttl: () => number) => {
    if (abandoned.size >= 1024) abandoned.clear();
    abandoned.add(value);
    // Other instances would wait for it to expire: free it once it has landed, if it did.
    const free = () =>
      void store.swap(key, value, FREE, ttl()).then(
        (ok) => ok && abandoned.delete(value),
        () => {},
      );
    setTimeout(free, 250).unref?.();
    setTimeout(free, 2000).unref?.();
  };

  function parse(key: string, raw: string): RedemptionRecord {
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      json = undefined;
    }
    const parsed = record.safeParse(json);
    if (!parsed.success) throw new Error(`${key}: the stored redemption is not one this version understands`);
    return parsed.data;
  }

  function owned(key: string, held: string, digest: string, claim: string, from: Continuation | undefined, ttl: () => number, written: Continuation | undefined = from): Ticket {
    let current = held;
    let ended = false;
    /** The continuation the pending record carries (where the round got, as last advanced). */
    let k = written;
    const pending = () => JSON.stringify({ d: digest, s: "pending", o: me, i: claim, u: shared.now() + claimMs, ...(k ? { k } : {}) });
    /**
     * Replace this claim's record with `next`. When the swap finds another value, it is read
     * back: still this claim (an earlier write landed after its acknowledgement was lost) means
     * swap from what is there; anything else means the claim is no longer ours.
     */
    async function replace(next: string): Promise<boolean> {
      if (await store.swap(key, current, next, ttl())) {
        current = next;
        return true;
      }
      const raw = await store.get(key);
      if (raw === undefined) return false;
      if (raw === next) return true; // an earlier attempt landed after all
      const found = parse(key, raw);
      if (found.s !== "pending" || found.o !== me || found.i !== claim) return false;
      current = raw;
      if (!(await store.swap(key, raw, next, ttl()))) return false;
      current = next;
      return true;
    }
    // Renew the claim while the round runs, so a slow round is not taken for a dead one.
    const renew = setInterval(
      () => {
        if (!ended) void replace(pending()).catch(() => {});
      },
      Math.max(1, Math.floor(claimMs / 3)),
    );
    renew.unref?.();
    /** Write `next` now, or — the store being out — keep trying while the state lives. Resolves to the bytes it keeps. */
    async function settle(next: string, what: string): Promise<number> {
      ended = true;
      clearInterval(renew);
      const attempt = async () => {
        if (!(await replace(next))) report(new Error(`the ${what} of a round was not kept: its claim is no longer this instance's (${key})`));
      };
      try {
        await attempt();
        return key.length + next.length;
      } catch (error) {
        if (!(error instanceof StoreError)) throw error;
        // A repeat that arrives once the store is back must find this, not run the round again.
        const retry = () => {
          if (ttl() <= 1) return;
          setTimeout(() => void attempt().catch((e: unknown) => (e instanceof StoreError ? retry() : report(e))), retryMs).unref?.();
        };
        retry();
        throw error;
      }
    }
    return {
      kind: "run",
      continuation: from,
      finish: (response) => settle(doneRecord(digest, response), "response"),
      suspend: (k) => settle(JSON.stringify({ d: digest, s: "cont", k }), "continuation"),
      release: () => settle(FREE, "release").then(() => undefined),
      async advance(next) {
        if (ended) return;
        k = next;
        if (!(await replace(pending()))) throw claimLost();
      },
    };
  }

  return {
    /**
     * Keep the response of a round that ran no step and created no task — run without a claim —
     * with one write (add), the state still unredeemed. `kept`: it is this state's response
     * now. `stored`: an identical request's round got there first: its response is the one
     * (this round changed nothing, so dropping its own is safe). `claim`: the state is held by
     * a round of the same request that runs steps, or left a continuation: claim it as usual.
     * A state another request redeemed is `state_redeemed`. A write the store fails is the
     * round's failure (`store_unavailable`), as a failed claim is: the client retries, and the
     * retry finds this response if the write landed after all, or runs the round again (it ran
     * no step) if it did not.
     */
    async commit(
      nonce: string,
      digest: string,
      expiresAt: Expiry,
      response: RoundResponse,
      minted?: string,
    ): Promise<{ kind: "kept"; bytes: number } | { kind: "stored"; response: RoundResponse } | { kind: "claim" }> {
      const key = `${REDEEM_PREFIX}${nonce}`;
      const ttl = ttlOf(expiresAt);
      const done = doneRecord(digest, response, minted);
      for (;;) {
        if (await store.add(key, done, ttl())) return { kind: "kept", bytes: key.length + done.length };
        const raw = await store.get(key);
        if (raw === undefined) continue; // it expired in between: write again
        const found = parse(key, raw);
        if (found.s === "free") {
          if (await store.swap(key, raw, done, ttl())) return { kind: "kept", bytes: key.length + done.length };
          continue;
        }
        if (found.d !== digest) throw stateRedeemed();
        if (found.s === "done") {
          if (found.r === undefined) throw responseNotKept();
          return { kind: "stored", response: found.r as RoundResponse };
        }
        return { kind: "claim" };
      }
    },

    /**
     * `commit`'s first write, done at once when the store writes in this process (the memory
     * store: `synchronousAddOf`): the bytes its record takes when the response is kept. 0 when the store
     * writes only through promises, or the state has a record already — then `commit` decides,
     * as it always does (its add finds that record, and it reads it). A write refused
     * (`store_full`) throws its StoreError here as `commit` would reject with it.
     */
    commitInProcess(nonce: string, digest: string, expiresAt: Expiry, response: RoundResponse, minted?: string): number {
      const add = synchronousAddOf(store);
      if (add === undefined) return 0;
      const key = `${REDEEM_PREFIX}${nonce}`;
      const done = doneRecord(digest, response, minted);
      return add(key, done, ttlOf(expiresAt)()) ? key.length + done.length : 0;
    },

    /**
     * Claim the round that presents the state `nonce` with answers of digest `digest`. `sofar`,
     * where this round got before it claimed (the values it recorded before its first step), is
     * written with the claim: a takeover goes on from it.
     */
    async claim(nonce: string, digest: string, expiresAt: Expiry, sofar?: Continuation): Promise<Ticket> {
      const key = `${REDEEM_PREFIX}${nonce}`;
      const ttl = ttlOf(expiresAt);
      const giveUp = clock() + waitMs;
      const claim = randomUuid();
      await shared.sync();
      const mine = (k?: Continuation) => JSON.stringify({ d: digest, s: "pending", o: me, i: claim, u: shared.now() + claimMs, ...(k ? { k } : {}) });
      for (;;) {
        const first = mine(sofar);
        let added: boolean;
        try {
          added = await store.add(key, first, ttl());
        } catch (error) {
          if (error instanceof StoreError) abandon(key, first, ttl);
          throw error;
        }
        if (added) return owned(key, first, digest, claim, undefined, ttl, sofar);
        const raw = await store.get(key);
        if (raw === undefined) continue; // it expired in between: claim again
        const found = parse(key, raw);
        if (found.s === "free") {
          const next = mine(sofar);
          if (await store.swap(key, raw, next, ttl())) return owned(key, next, digest, claim, undefined, ttl, sofar);
          continue;
        }
        if (found.d !== digest) throw stateRedeemed();
        if (found.s === "done") {
          if (found.r === undefined) throw responseNotKept();
          return { kind: "stored", response: found.r as RoundResponse };
        }
        // The claim's end as its runner may see it: \`uncertainty\` later (store-clock.ts).
        if (found.s === "cont" || found.u <= shared.now() - shared.uncertainty() || abandoned.has(raw)) {
          // A round that stopped after its steps (continue from where it got), or whose runner
          // stopped renewing (an instance that died mid-round): take the round over.
          const next = mine(found.k);
          if (await store.swap(key, raw, next, ttl())) return owned(key, next, digest, claim, found.k, ttl);
          continue;
        }
        if (clock() > giveUp) throw new ProtocolError(ErrorCode.InternalError, "The same round is still running elsewhere; try again later", { reason: "round_in_progress" });
        await new Promise((r) => setTimeout(r, pollMs));
      }
    },
  };
}

export type Redemption = ReturnType<typeof createRedemption>;
