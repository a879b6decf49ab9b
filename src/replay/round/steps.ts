import { type AttemptEffect, type AttemptOutcome, FOREGROUND_RETRY_MS, type SleepEffect } from "../../authoring/effects.js";
import { enterStep, leaveStep } from "../ambient.js";
import { AuthorCodeError } from "../errors.js";
import type { RoundInput, StepRun } from "./types.js";

// replay/round/steps.ts owns running a step's body for a round (replay/round/round.ts): the step's
// signal, its timing for traces, the ambient guard, and one attempt of a retrying step.
//
// Invariant: a step body runs only when the round reached it past the journal's end; what it
// returns or throws is the round's to record (an exception is the author's failure).

/** What running steps needs of the round. */
export interface RoundState {
  readonly input: RoundInput;
  readonly stepsRun: StepRun[];
  /** Step bodies running now (several under `all(...)` over steps, or a race). */
  inStep: number;
}

export const isThenable = (v: unknown): v is PromiseLike<unknown> => typeof v === "object" && v !== null && typeof (v as { then?: unknown }).then === "function";

export async function runStep(round: RoundState, name: string, fn: (signal: AbortSignal) => unknown, signal?: AbortSignal): Promise<unknown> {
  round.inStep++;
  const startedAt = Date.now();
  const started = performance.now();
  let ok = false;
  enterStep();
  try {
    const value = fn(signal ?? round.input.signal());
    const result = isThenable(value) ? await value : value;
    ok = true;
    return result;
  } catch (error) {
    throw new AuthorCodeError(error);
  } finally {
    leaveStep();
    round.inStep--;
    round.stepsRun.push({ name, startedAt, ms: performance.now() - started, ok });
  }
}

/**
 * One attempt of a retrying step: its value, or its failure as it will be recorded (name,
 * message, and whether it may be retried — decided here, on the real error). A step stopped
 * because the run was cancelled or lost its task is no failed attempt: that ends the round.
 */
export async function runAttempt(round: RoundState, effect: AttemptEffect): Promise<AttemptOutcome> {
  try {
    return { ok: await runStep(round, effect.name, (signal) => effect.fn(signal, effect.attempt)) };
  } catch (error) {
    if (!(error instanceof AuthorCodeError) || round.input.signal().aborted) throw error;
    const cause = error.cause as { name?: unknown; message?: unknown } | undefined;
    let retry: boolean;
    try {
      retry = effect.retryable(cause) === true;
    } catch {
      retry = false; // a retryIf that throws is no permission to retry
    }
    return { failed: { name: typeof cause?.name === "string" ? cause.name : "Error", message: typeof cause?.message === "string" ? cause.message : String(cause), retry } };
  }
}

/**
 * A sleep in a foreground round (no task to wait in): a retrying step's delay is waited out here
 * when all its delays add up to at most `FOREGROUND_RETRY_MS`; anything else is the author's
 * error, naming what to change. Returns the wake time to record (a replay passes it at once).
 */
export async function foregroundRetryDelay(round: RoundState, effect: SleepEffect): Promise<number> {
  const retry = effect.retryOf;
  if (retry === undefined)
    throw new AuthorCodeError(new Error('sleep() waits only inside a task (a foreground call has no place to wait): call runAsTask() before it, or make the tool task: "required"'));
  if (retry.totalMs > FOREGROUND_RETRY_MS)
    throw new AuthorCodeError(
      new Error(
        `step("${retry.step}") retries with delays adding up to ${retry.totalMs} ms; a foreground call waits at most ${FOREGROUND_RETRY_MS} ms in all between attempts: run it in a task (call runAsTask() before it, or make the tool task: "required"), or shorten its retry (attempts, initialMs, factor, maxMs)`,
      ),
    );
  const ms = effect.ms ?? 0;
  const wake = round.input.clock() + ms;
  const signal = round.input.signal();
  await new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", stop, { once: true });
  });
  return wake;
}
