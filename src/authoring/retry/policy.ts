// authoring/retry/policy.ts owns how a retrying step is retried: its options checked, the delay
// before each attempt, what its delays add up to, and the errors that end its retries.

/** How a step is retried. */
export interface RetryOptions {
  /** Attempts in all, the first included. Default 3. */
  attempts?: number;
  /** Delay before the second attempt, in ms. Default 1000. */
  initialMs?: number;
  /** Each delay is the one before times this. Default 2. */
  factor?: number;
  /** No delay is longer than this, in ms. Default 60000. */
  maxMs?: number;
  /** Take up to this fraction off each delay at random (0–1), so retries of many tasks spread out. Default 0. */
  jitter?: number;
  /** Whether an error may be tried again (after `NonRetryableError`, which never is). Default: every error. */
  retryIf?: (error: unknown) => boolean;
}

/** The delay before attempt `attempt + 1` (ms, before jitter). */
export const retryDelay = (retry: Required<RetryOptions>, attempt: number): number => Math.min(retry.maxMs, retry.initialMs * retry.factor ** (attempt - 1));

/** Every delay of a retrying step added up (ms, before jitter: jitter only shortens them). */
export function totalDelay(retry: Required<RetryOptions>): number {
  let total = 0;
  for (let attempt = 1; attempt < retry.attempts; attempt++) {
    total += retryDelay(retry, attempt);
    // Past here each delay is the longest (or the sum grows without bound): the rest at once.
    if (retryDelay(retry, attempt) === retry.maxMs) return total + retry.maxMs * (retry.attempts - 1 - attempt);
  }
  return total;
}

/**
 * How long a retrying step's delays may add up to in a foreground call (no task): its round
 * waits them out in process. Longer backoffs need a task, which sleeps in the store between
 * attempts.
 */
export const FOREGROUND_RETRY_MS = 1000;

export function retryPolicy(name: string, given: RetryOptions): Required<RetryOptions> {
  const check = (what: keyof RetryOptions, value: number | undefined, fallback: number, ok: (n: number) => boolean) => {
    if (value === undefined) return fallback;
    if (typeof value !== "number" || !ok(value))
      throw new TypeError(
        `step("${name}"): retry.${what} must be ${what === "attempts" ? "an integer ≥ 1" : what === "jitter" ? "between 0 and 1" : what === "factor" ? "a number ≥ 1" : "a number ≥ 0"}, got ${String(value)}`,
      );
    return value;
  };
  if (given.retryIf !== undefined && typeof given.retryIf !== "function") throw new TypeError(`step("${name}"): retry.retryIf must be a function`);
  return {
    attempts: check("attempts", given.attempts, 3, (n) => Number.isSafeInteger(n) && n >= 1),
    initialMs: check("initialMs", given.initialMs, 1000, (n) => Number.isFinite(n) && n >= 0),
    factor: check("factor", given.factor, 2, (n) => Number.isFinite(n) && n >= 1),
    maxMs: check("maxMs", given.maxMs, 60_000, (n) => Number.isFinite(n) && n >= 0),
    jitter: check("jitter", given.jitter, 0, (n) => n >= 0 && n <= 1),
    retryIf: given.retryIf ?? (() => true),
  };
}

/** Throw this from a retrying step to stop retrying at once: the step fails with it. */
export class NonRetryableError extends Error {
  override readonly name: string = "NonRetryableError";
}

/** A retrying step's last failure, as recorded: thrown from `step(...)` once it may not try again. */
export class StepFailedError extends Error {
  override readonly name = "StepFailedError";
  constructor(
    readonly step: string,
    readonly attempts: number,
    readonly last: { name: string; message: string },
  ) {
    super(`step("${step}") failed after ${attempts} attempt${attempts === 1 ? "" : "s"}: ${last.name}: ${last.message}`);
  }
}
