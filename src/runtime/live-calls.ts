import type { StatePayload } from "./journal.js";
import type { Suspended } from "./replay.js";
import type { RequestInfo } from "./runtime.js";

/** A call suspended on this instance, with the per-call context its generator closed over. */
export interface LiveCall {
  suspended: Suspended;
  /** The context object the generator holds; its request is swapped in on every round. */
  context: { request: RequestInfo };
  /** The definition whose generator this is: never resumed under another one. */
  owner: object;
  /** The journal exactly as it was sealed into the token. */
  payload: StatePayload;
}

/**
 * Calls whose generator is still suspended on this instance, by the exact state token that
 * round minted. The next round presenting that token (after it verifies) resumes the generator
 * instead of replaying it. Bounded: least recently stored first out. `take` removes, so a
 * generator is never resumed twice — a repeated round, a parallel retry or a round landing on
 * another instance simply replays from the journal, which is always in the state.
 */
export class LiveCalls {
  // Keyed by the token's last characters (its MAC or GCM tag: unique per token), so a lookup
  // hashes 32 characters, not the whole token; the entry keeps the full token to compare.
  private readonly calls = new Map<string, { token: string; call: LiveCall }>();
  constructor(private readonly max: number) {}

  put(token: string, call: LiveCall): void {
    if (this.max <= 0) return;
    this.calls.set(token.slice(-32), { token, call });
    if (this.calls.size > this.max) this.calls.delete(this.calls.keys().next().value!);
  }

  take(token: string, owner: object): LiveCall | undefined {
    const key = token.slice(-32);
    const entry = this.calls.get(key);
    if (entry === undefined || entry.token !== token) return undefined;
    this.calls.delete(key);
    return entry.call.owner === owner ? entry.call : undefined;
  }

  get size(): number {
    return this.calls.size;
  }
}
