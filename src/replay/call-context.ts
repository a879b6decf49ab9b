import { digestOf } from "../state/index.js";
import { CAPABILITIES, type Capability } from "../wire/index.js";
import type { RunContext } from "../authoring/definitions.js";
import type { Round } from "./round/round.js";
import type { SeenTimes } from "./ambient.js";
import { checkSignalName } from "../authoring/effects.js";

/**
 * A call's own abort signal, made when first used (most rounds never look at it). While a
 * round runs, the request's signal is linked to it; between rounds nothing of the request is
 * held. Aborted once, it stays aborted: such a call is not resumed, its next round replays.
 */
export class CallSignal {
  private controller: AbortController | undefined;
  private request: AbortSignal | undefined;
  private unlink: (() => void) | undefined;

  /** The call's signal (what `ctx.signal` and steps get). */
  get signal(): AbortSignal {
    return this.ensure().signal;
  }

  /** The controller behind the signal (a task keeps it to cancel the call). */
  ensure(): AbortController {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      this.link();
    }
    return this.controller;
  }

  get aborted(): boolean {
    return this.controller?.signal.aborted ?? false;
  }

  /** Link the signal of the request running this round (until `leave`). */
  enter(request: AbortSignal | undefined): void {
    this.request = request;
    if (this.controller !== undefined) this.link();
  }

  leave(): void {
    this.unlink?.();
    this.unlink = undefined;
    this.request = undefined;
  }

  private link(): void {
    const request = this.request;
    const controller = this.controller!;
    if (request === undefined || this.unlink !== undefined) return;
    if (request.aborted) {
      controller.abort(request.reason);
      return;
    }
    const forward = () => controller.abort(request.reason);
    request.addEventListener("abort", forward, { once: true });
    this.unlink = () => request.removeEventListener("abort", forward);
  }
}

/**
 * The `ctx` a generator receives. It lives as long as the call's generator, which a later
 * request may resume, so it holds nothing of any request: the principal is the call's (the
 * state is bound to it), the signal is the call's own (each round links the request's signal
 * to it for the round's duration only), and `can` reaches the round being run.
 */
export class CallContext implements RunContext {
  private round: Round | undefined;
  /** The `Date.now` values this call's code saw (kept only under `verifyReplay`; see ambient.ts). */
  readonly seenTimes: SeenTimes = [];

  constructor(
    readonly principal: string | undefined,
    private readonly callId: string,
    readonly callSignal: CallSignal = new CallSignal(),
  ) {}

  get signal(): AbortSignal {
    return this.callSignal.signal;
  }

  /** Route `can` to `round` while it runs, and link the request's signal. */
  enter(round: Round, request?: AbortSignal): void {
    this.round = round;
    this.callSignal.enter(request);
  }

  leave(): void {
    this.round = undefined;
    this.callSignal.leave();
  }

  // Bound functions, so `const { can } = ctx` works as well as `ctx.can(...)` — made on first
  // use and kept (the same function each time): a round makes a context, and most rounds'
  // code never touches these; four arrow properties were four closures per request.
  private boundCan: ((kind: Capability) => boolean) | undefined;
  private boundIdempotencyKey: ((name: string) => string) | undefined;
  private boundSignalToken: ((name: string) => string) | undefined;
  private boundSignalUrl: ((name: string) => string) | undefined;

  get can(): (kind: Capability) => boolean {
    return (this.boundCan ??= (kind: Capability): boolean => {
      if (!CAPABILITIES.includes(kind)) throw new TypeError(`ctx.can: unknown capability ${JSON.stringify(kind)} (one of ${CAPABILITIES.join(", ")})`);
      if (this.round === undefined) throw new Error("ctx.can() was called outside a round of its call (after the round ended?)");
      return this.round.can(kind);
    });
  }

  get idempotencyKey(): (name: string) => string {
    return (this.boundIdempotencyKey ??= (name: string): string => `mcpy-${digestOf([this.callId, name]).slice(0, 32)}`);
  }

  get signalToken(): (name: string) => string {
    return (this.boundSignalToken ??= (name: string): string => this.inRound("ctx.signalToken").signalToken(checkSignalName(name, "ctx.signalToken")));
  }

  get signalUrl(): (name: string) => string {
    return (this.boundSignalUrl ??= (name: string): string => this.inRound("ctx.signalUrl").signalUrl(checkSignalName(name, "ctx.signalUrl")));
  }

  private inRound(what: string): Round {
    if (this.round === undefined) throw new Error(`${what}() was called outside a round of its call (after the round ended?)`);
    return this.round;
  }
}
