import { digestOf } from "../state/index.js";
import { capabilityCheck } from "./capabilities.js";
import type { Capability, RunContext } from "./definitions.js";
import type { RequestInfo } from "./runtime.js";

/**
 * The `ctx` a generator receives. It lives as long as the call's generator, which later
 * requests may resume, so everything request-specific is read from `holder.request`, swapped
 * in every round: capabilities are never carried over from an earlier request.
 */
export class CallContext implements RunContext {
  private checkedFor: RequestInfo | undefined;
  private check: RunContext["can"] = () => false;
  constructor(
    private readonly holder: { request: RequestInfo },
    private readonly callId: string,
  ) {}
  get principal(): string | undefined {
    return this.holder.request.principal;
  }
  get signal(): AbortSignal {
    return this.holder.request.signal ?? NEVER_ABORTED;
  }
  // Arrow properties, so `const { can } = ctx` works as well as `ctx.can(...)`.
  readonly can = (kind: Capability): boolean => {
    if (this.checkedFor !== this.holder.request) this.check = capabilityCheck((this.checkedFor = this.holder.request).clientCapabilities);
    return this.check(kind);
  };
  readonly idempotencyKey = (name: string): string => `mcpy-${digestOf([this.callId, name]).slice(0, 32)}`;
}

/** For requests without a signal of their own; nothing ever aborts it. */
const NEVER_ABORTED = new AbortController().signal;

