import type { Suspended } from "./replay.js";
import type { RequestInfo } from "./runtime.js";

/** A call suspended on this instance, with the per-call context its generator closed over. */
export interface LiveCall {
  suspended: Suspended;
  /** The context object the generator holds; its request is swapped in on every round. */
  context: { request: RequestInfo };
  /** The definition whose generator this is: never resumed under another one. */
  owner: object;
}

/**
 * Calls whose generator is still suspended on this instance, by the exact state token that
 * round minted. The next round presenting that token (after it verifies) resumes the generator
 * instead of replaying it. Bounded: least recently stored first out. `take` removes, so a
 * generator is never resumed twice — a repeated round, a parallel retry or a round landing on
 * another instance simply replays from the journal, which is always in the state.
 */
export class LiveCalls {
  private readonly calls = new Map<string, LiveCall>();
  constructor(private readonly max: number) {}

  put(token: string, call: LiveCall): void {
    if (this.max <= 0) return;
    this.calls.set(token, call);
    if (this.calls.size > this.max) this.calls.delete(this.calls.keys().next().value!);
  }

  take(token: string, owner: object): LiveCall | undefined {
    const call = this.calls.get(token);
    if (call === undefined) return undefined;
    this.calls.delete(token);
    return call.owner === owner ? call : undefined;
  }

  get size(): number {
    return this.calls.size;
  }
}
