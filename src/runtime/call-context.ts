import { digestOf } from "../state/index.js";
import { CAPABILITIES, type Capability } from "../wire/index.js";
import type { RunContext } from "./definitions.js";
import type { Round } from "./replay.js";

/**
 * The `ctx` a generator receives. It lives as long as the call's generator, which a later
 * request may resume, so it holds nothing of any request: the principal is the call's (the
 * state is bound to it), the signal is the call's own (each round links the request's signal
 * to it for the round's duration only), and `can` reaches the round being run.
 */
export class CallContext implements RunContext {
  private round: Round | undefined;

  constructor(
    readonly principal: string | undefined,
    private readonly callId: string,
    readonly signal: AbortSignal,
  ) {}

  /** Route `can` to `round` while it runs. */
  enter(round: Round): void {
    this.round = round;
  }

  leave(): void {
    this.round = undefined;
  }

  // Arrow properties, so `const { can } = ctx` works as well as `ctx.can(...)`.
  readonly can = (kind: Capability): boolean => {
    if (!CAPABILITIES.includes(kind)) throw new TypeError(`ctx.can: unknown capability ${JSON.stringify(kind)} (one of ${CAPABILITIES.join(", ")})`);
    if (this.round === undefined) throw new Error("ctx.can() was called outside a round of its call (after the round ended?)");
    return this.round.can(kind);
  };

  readonly idempotencyKey = (name: string): string => `mcpy-${digestOf([this.callId, name]).slice(0, 32)}`;
}
