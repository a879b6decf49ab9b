import { NonRetryableError, type RetryOptions, retryDelay, retryPolicy, StepFailedError, totalDelay } from "./retry/policy.js";
import { type AskKindName, type EffectKindName, isAskKind, isEffectKind } from "./effect-kinds.js";
import type { z } from "zod";
import type { CreateMessageParams, CreateMessageResult, ElicitFormParams, ElicitUrlParams, RequestedSchema, Root } from "../wire/index.js";
import { type FormSchema, toRequestedSchema } from "./elicitation-schema.js";

/**
 * Effects are plain data. Each helper is a tiny generator that yields one effect and returns
 * what the runtime sends back, so `yield*` gives the author a typed value.
 */

/** What an elicitation yields: the typed content on accept, or a refusal the author must handle. */
export type ElicitOutcome<T> = { action: "accept"; content: T } | { action: "decline" } | { action: "cancel" };
/** What a URL elicitation yields (it has no content). */
export type ElicitUrlOutcome = { action: "accept" } | { action: "decline" } | { action: "cancel" };

/** Options every ask takes: its key, and whether it may take an answer sent before it was asked. */
export interface AskOptions {
  /** The key under `inputRequests`; default: `<kind>-<n>` for the call's n-th ask (from 0). */
  key?: string;
  /**
   * Also take an answer the client sends before this ask was sent to it (a client that knows
   * the key in advance, e.g. on a first request without `requestState`). Off by default: an
   * answer then only reaches an ask the client was actually shown, so a confirmation cannot be
   * "given" for a question nobody saw.
   */
  acceptUnasked?: boolean;
}

/** The effect `elicit(...)` yields: a form elicitation and the zod schema its answer must satisfy. */
export interface ElicitEffect {
  readonly kind: "elicit";
  readonly key: string | undefined;
  readonly acceptUnasked: boolean;
  readonly params: ElicitFormParams;
  readonly schema: FormSchema;
}
/** The effect `elicitUrl(...)` yields. */
export interface ElicitUrlEffect {
  readonly kind: "elicitUrl";
  readonly key: string | undefined;
  readonly acceptUnasked: boolean;
  readonly params: ElicitUrlParams;
}
/** The effect `sample(...)` yields. */
export interface SampleEffect {
  readonly kind: "sample";
  readonly key: string | undefined;
  readonly acceptUnasked: boolean;
  readonly params: CreateMessageParams;
}
/** The effect `listRoots(...)` yields. */
export interface RootsEffect {
  readonly kind: "roots";
  readonly key: string | undefined;
  readonly acceptUnasked: boolean;
}
/** An effect that asks the client for input. */
export type AskEffect = ElicitEffect | ElicitUrlEffect | SampleEffect | RootsEffect;

/** The effect `step(...)` yields: a named function whose result is recorded. */
export interface StepEffect {
  readonly kind: "step";
  readonly name: string;
  readonly fn: (signal: AbortSignal) => unknown;
}
/** The effect `now()` yields. */
export interface NowEffect {
  readonly kind: "now";
}
/** The effect `uuid()` yields. */
export interface UuidEffect {
  readonly kind: "uuid";
}
/** The effect `all(...)` yields: several asks answered in one round. */
export interface AllEffect {
  readonly kind: "all";
  readonly asks: readonly AskEffect[] | Readonly<Record<string, AskEffect>>;
}
/** The effect `runAsTask(...)` yields. */
export interface TaskEffect {
  readonly kind: "task";
  readonly message: string | undefined;
}
/** The effect `patched(...)` yields. */
export interface PatchEffect {
  readonly kind: "patch";
  readonly id: string;
}
/** The effect `sleep(...)` yields: wake at `until` (epoch ms), or `ms` from when it is first reached. */
export interface SleepEffect {
  readonly kind: "sleep";
  readonly until: number | undefined;
  readonly ms: number | undefined;
  /** A retrying step's delay before its next attempt, and all its delays added up (ms, before jitter). */
  readonly retryOf?: { readonly step: string; readonly totalMs: number } | undefined;
}
/** One attempt of a step that retries: its outcome is recorded, success or failure (`AttemptOutcome`). */
export interface AttemptEffect {
  readonly kind: "attempt";
  readonly name: string;
  /** Which attempt this is, from 1 (the step's function is told). */
  readonly attempt: number;
  readonly fn: (signal: AbortSignal, attempt: number) => unknown;
  /** Whether a failure may be tried again (recorded with the failure: decided once, on the real error). */
  readonly retryable: (error: unknown) => boolean;
}
/** What one attempt gives back: the value, or the failure as recorded (the error itself is not journaled). */
export type AttemptOutcome = { ok: unknown } | { failed: { name: string; message: string; retry: boolean } };
/** The effect `progress(...)` yields. */
export interface ProgressEffect {
  readonly kind: "progress";
  readonly message: string;
  readonly done: number | undefined;
  readonly total: number | undefined;
}
/** The effect `waitForSignal(...)` yields. */
export interface SignalEffect {
  readonly kind: "signal";
  readonly name: string;
  readonly schema: z.ZodType;
  readonly timeoutMs: number | undefined;
}
/** What `waitForSignal` gives back: the value sent (as the schema parsed it), or that the wait timed out. */
export type SignalOutcome<T> = { status: "received"; value: T } | { status: "timeout" };
/** What may run in a `race(...)`: one wait, one sleep, one ask or one step. */
export type RaceBranchEffect = SignalEffect | SleepEffect | AskEffect | StepEffect;
/** One branch of a `race(...)`: its name, its effect, and its helper (which turns the effect's value into what the branch returns). */
export interface RaceBranch {
  readonly name: string;
  readonly effect: RaceBranchEffect;
  readonly helper: Generator<Effect, unknown, unknown>;
}
/** The effect `race(...)` yields: whichever branch is ready first wins, the others are cancelled. */
export interface RaceEffect {
  readonly kind: "race";
  readonly branches: readonly RaceBranch[];
}
/** The effect `all(...)` over steps yields: the steps run at once, at most `concurrency` at a time, recorded in order. */
export interface ParallelEffect {
  readonly kind: "parallel";
  /** The steps by slot (an index, or a member name). */
  readonly steps: ReadonlyArray<{ readonly slot: number | string; readonly effect: StepEffect }>;
  readonly array: boolean;
  readonly concurrency: number;
}
/** Everything a `run` generator may yield. */
export type Effect = AskEffect | StepEffect | NowEffect | UuidEffect | AllEffect | TaskEffect | PatchEffect | SleepEffect | AttemptEffect | ProgressEffect | SignalEffect | RaceEffect | ParallelEffect;

/** A helper generator for one ask: usable with `yield*` or inside `all(...)`. */
export type Ask<R> = Generator<AskEffect, R, unknown>;
/** A helper generator for any effect. */
export type Op<R> = Generator<Effect, R, unknown>;

// The effect table and the Effect union agree, both ways: a kind missing from the table, or a
// row of the table no effect has, is a compile error here.
type SameKinds<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
export const EFFECT_TABLE_COMPLETE: SameKinds<Effect["kind"], EffectKindName> & SameKinds<AskEffect["kind"], AskKindName> = true;

/** Whether a yielded value is one of our effects. */
export function isEffect(value: unknown): value is Effect {
  return typeof value === "object" && value !== null && isEffectKind((value as { kind?: unknown }).kind);
}

export function isAskEffect(value: unknown): value is AskEffect {
  return isEffect(value) && isAskKind(value.kind);
}

function* ask<R>(effect: AskEffect): Ask<R> {
  return (yield effect) as R;
}

/** The key of an ask's options, checked where the ask is made. */
function keyOption(options: AskOptions): string | undefined {
  const key = options.key;
  if (key !== undefined && (typeof key !== "string" || key === "")) throw new TypeError("ask key must be a non-empty string");
  // An answer under "__proto__" never arrives: JSON-RPC libraries and schema parsers drop (or
  // turn into a prototype) a member by that name, so the ask would be asked again forever.
  if (key === "__proto__") throw new TypeError('ask key "__proto__" is reserved: no client can answer under it');
  return key;
}

/** The `acceptUnasked` opt-in of an ask's options, checked. */
function acceptUnaskedOption(options: AskOptions): boolean {
  const acceptUnasked = options.acceptUnasked ?? false;
  if (typeof acceptUnasked !== "boolean") throw new TypeError("acceptUnasked must be a boolean");
  return acceptUnasked;
}

// Effects are built as literals with every property written out (no object spread): replay
// makes one per replayed ask, and spreading is measurably slow on that path.
/** A form schema checked now (throws `ElicitationSchemaError`), for module-level definitions. */
export function form<S extends FormSchema>(schema: S): S {
  toRequestedSchema(schema);
  return schema;
}

/** Ask the user to fill a form; the accepted content is validated against `schema` (invalid → asked again). */
export function elicit<S extends FormSchema>(message: string, schema: S, options: AskOptions = {}): Ask<ElicitOutcome<z.output<S>>> {
  const requestedSchema: RequestedSchema = toRequestedSchema(schema);
  return ask({ kind: "elicit", key: keyOption(options), acceptUnasked: acceptUnaskedOption(options), params: { mode: "form", message, requestedSchema }, schema });
}

/** Send the user to a URL (out-of-band flow); resolves with the user's action. */
export function elicitUrl(message: string, url: string, options: AskOptions = {}): Ask<ElicitUrlOutcome> {
  return ask({ kind: "elicitUrl", key: keyOption(options), acceptUnasked: acceptUnaskedOption(options), params: { mode: "url", message, url } });
}

/**
 * Ask the client's model for a completion. Sampling is deprecated by the 2026-07-28
 * specification (SEP-2577; advisory, no wire change): it keeps working, but plan for its removal.
 */
export function sample(params: CreateMessageParams, options: AskOptions = {}): Ask<CreateMessageResult> {
  return ask({ kind: "sample", key: keyOption(options), acceptUnasked: acceptUnaskedOption(options), params });
}

/**
 * Ask the client for its roots. Roots are deprecated by the 2026-07-28 specification (SEP-2577;
 * advisory, no wire change): they keep working, but plan for their removal.
 */
export function listRoots(options: AskOptions = {}): Ask<Root[]> {
  return ask({ kind: "roots", key: keyOption(options), acceptUnasked: acceptUnaskedOption(options) });
}

/**
 * Run `fn` once per call: its result is recorded in the journal and replayed in later rounds,
 * on any instance. Code receives a fresh copy of the recorded value, the same on every path.
 * The result must be data the journal carries exactly: JSON values, `undefined`, `bigint`,
 * `-0`/`NaN`/`±Infinity`, `Date`, `Map`, `Set`; anything else (a class instance, a function,
 * a cycle, ...) fails the round that records it, naming the step and the path. `fn` gets the
 * call's abort signal and which attempt this is (1, or more with `options.retry`).
 */
export function* step<T>(name: string, fn: (signal: AbortSignal, attempt: number) => T | Promise<T>, options: StepOptions = {}): Op<Awaited<T>> {
  if (typeof name !== "string" || name === "") throw new TypeError("step name must be a non-empty string");
  if (typeof fn !== "function") throw new TypeError(`step("${name}"): fn must be a function`);
  if (options.retry === undefined) return (yield { kind: "step", name, fn: (signal: AbortSignal) => fn(signal, 1) }) as Awaited<T>;
  const retry = retryPolicy(name, options.retry);
  for (let attempt = 1; ; attempt++) {
    const outcome = (yield { kind: "attempt", name, attempt, fn, retryable: (error) => !(error instanceof NonRetryableError) && retry.retryIf(error) }) as AttemptOutcome;
    if ("ok" in outcome) return outcome.ok as Awaited<T>;
    if (!outcome.failed.retry || attempt >= retry.attempts) throw new StepFailedError(name, attempt, outcome.failed);
    // Durable: the task sleeps in the store between attempts (its wake time is recorded, so the
    // jitter drawn here is only used the first time). A foreground round waits in process when
    // all the delays add up to little (`FOREGROUND_RETRY_MS`).
    const delay = retryDelay(retry, attempt);
    yield { kind: "sleep", until: undefined, ms: Math.round(retry.jitter ? delay * (1 - retry.jitter * Math.random()) : delay), retryOf: { step: name, totalMs: totalDelay(retry) } };
  }
}

/** Options of `step`. */
export interface StepOptions {
  /**
   * Try the step again when it throws: each attempt's outcome is recorded, the delay before the
   * next is a durable `sleep` in a task; in a foreground call the round waits in process when
   * all the delays add up to at most `FOREGROUND_RETRY_MS` (1 s) — longer backoffs need a task.
   * Every attempt sees the same `ctx.idempotencyKey`. Throw `NonRetryableError` to stop at
   * once. When attempts run out, the step throws `StepFailedError` (uncaught in a task: held for
   * an operator, see `TaskFailure`; in a foreground call an author failure: `onError`, `isError`).
   */
  retry?: RetryOptions;
}

/**
 * Wait — durably, inside a task: the task is kept in the store with its wake time, no instance
 * holds it (no timer, no memory), and whichever instance's sweeper finds it due goes on with it.
 * `duration` is milliseconds from when the call first gets here, or a `Date` to wake at. The
 * wake time is recorded, so a replay never waits again for time already waited. A foreground
 * call cannot sleep (it has no place to wait): `sleep` there is an author error — call
 * `runAsTask()` first, or make the tool `task: "required"`.
 */
export function* sleep(duration: number | Date): Op<void> {
  if (duration instanceof Date) {
    if (Number.isNaN(duration.getTime())) throw new TypeError("sleep: the Date is invalid");
    yield { kind: "sleep", until: duration.getTime(), ms: undefined };
    return;
  }
  if (typeof duration !== "number" || !Number.isFinite(duration) || duration < 0) throw new TypeError(`sleep: duration must be a finite number of ms ≥ 0 or a Date, got ${String(duration)}`);
  yield { kind: "sleep", until: undefined, ms: duration };
}

/** A signal's name: what `waitForSignal`, `ctx.signalUrl` and `ctx.signalToken` take. */
const SIGNAL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** Check a signal name (1-64 characters of `[A-Za-z0-9_.-]`), or throw saying what is wrong. */
export function checkSignalName(name: unknown, where: string): string {
  if (typeof name !== "string" || !SIGNAL_NAME.test(name)) throw new TypeError(`${where}: a signal name is 1-64 characters of [A-Za-z0-9_.-], got ${JSON.stringify(name)}`);
  return name;
}

/**
 * Wait inside a task until something outside sends a value: `runtime.signal(token, value)` from
 * code, or a POST to the URL `ctx.signalUrl(name)` made before the wait (a webhook, a link in a
 * mail). The task waits in the store held by nobody, as `sleep` does, and goes on on whichever
 * instance the value reaches. The value must satisfy `schema` (a sender of anything else is
 * refused and the task keeps waiting); it is recorded, so a replay sees it again. With
 * `timeoutMs`, the wait ends after that long with `{ status: "timeout" }`. Each wait for a name
 * has its own token (a token opens one wait, once). A foreground call cannot wait (an author
 * error, as with `sleep`).
 */
export function* waitForSignal<S extends z.ZodType>(name: string, schema: S, options: { timeoutMs?: number } = {}): Op<SignalOutcome<z.output<S>>> {
  checkSignalName(name, "waitForSignal");
  if (typeof (schema as { safeParse?: unknown })?.safeParse !== "function") throw new TypeError("waitForSignal: schema must be a zod schema");
  const { timeoutMs } = options;
  if (timeoutMs !== undefined && (typeof timeoutMs !== "number" || !Number.isFinite(timeoutMs) || timeoutMs < 0))
    throw new TypeError(`waitForSignal: timeoutMs must be a finite number ≥ 0, got ${String(timeoutMs)}`);
  return (yield { kind: "signal", name, schema, timeoutMs }) as SignalOutcome<z.output<S>>;
}

/**
 * Tell the client how far the task got: `message` becomes the task's `statusMessage` (seen by
 * `tasks/get` on every instance), with `done`/`total` appended when given. Recorded, so a
 * replay does not repeat it. Outside a task it does nothing.
 */
export function* progress(message: string, options: { done?: number; total?: number } = {}): Op<void> {
  if (typeof message !== "string") throw new TypeError("progress: message must be a string");
  for (const n of [options.done, options.total]) if (n !== undefined && (typeof n !== "number" || !Number.isFinite(n))) throw new TypeError("progress: done and total must be finite numbers");
  yield { kind: "progress", message, done: options.done, total: options.total };
}

/** The current time in ms, recorded so every replay sees the same value. */
export function* now(): Op<number> {
  return (yield { kind: "now" }) as number;
}

/**
 * From here on, this call runs as an MCP task (tasks extension) — if the tool allows one
 * (`task: "optional" | "required"`, with `taskFrom: "runAsTask"`) and this request declared
 * the extension. The client then gets a `CreateTaskResult` and follows the rest through
 * `tasks/get`; asks after this point reach it as the task's `input_required`. Yields whether
 * the call is now a task (`false`: it goes on in the foreground). `statusMessage` is shown on
 * the task while it works.
 */
export function* runAsTask(statusMessage?: string): Op<boolean> {
  if (statusMessage !== undefined && typeof statusMessage !== "string") throw new TypeError("runAsTask: statusMessage must be a string");
  return (yield { kind: "task", message: statusMessage }) as boolean;
}

const PATCH_ID = /^[^\t\n\r]{1,128}$/;

/**
 * Versioned code for calls in flight (as Temporal's `patched()`): `true` for calls that reach
 * this point under the code that has it — new calls — and `false` for calls whose journal was
 * recorded before it was deployed, so they replay the old branch:
 *
 * ```ts
 * if (yield* patched("confirm-twice")) yield* elicit("Sure?", Confirm); // new calls only
 * ```
 *
 * Only a `true` is recorded. Once no call older than the patch can be in flight (the state's
 * lifetime, or a task's, has passed), delete the `patched()` call, keep the new branch and list
 * the id in the definition's `removedPatches`: the marker it left in newer journals is passed
 * over. (A marker the code neither makes nor lists is newer code's, mid-deploy: the request is
 * handed back, `code_unknown`.) Use `version` with `retiredVersions` instead to end every call
 * in flight.
 */
export function* patched(id: string): Op<boolean> {
  if (typeof id !== "string" || !PATCH_ID.test(id)) throw new TypeError(`patched: the id must be 1-128 characters without tabs or line breaks, got ${JSON.stringify(id)}`);
  return (yield { kind: "patch", id }) as boolean;
}
/** A random UUID, recorded so every replay sees the same value. */
export function* uuid(): Op<string> {
  return (yield { kind: "uuid" }) as string;
}

export { FOREGROUND_RETRY_MS, NonRetryableError, type RetryOptions, StepFailedError } from "./retry/policy.js";
