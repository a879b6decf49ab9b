import { type AskKindName, type EffectKindName, isAskKind, isEffectKind } from "./effect-kinds.js";
import type { z } from "zod";
import type {
  CreateMessageParams,
  CreateMessageResult,
  ElicitFormParams,
  ElicitUrlParams,
  RequestedSchema,
  Root,
} from "../wire/index.js";
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
/** Everything a `run` generator may yield. */
export type Effect = AskEffect | StepEffect | NowEffect | UuidEffect | AllEffect | TaskEffect | PatchEffect;

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
export function elicit<S extends FormSchema>(
  message: string,
  schema: S,
  options: AskOptions = {},
): Ask<ElicitOutcome<z.output<S>>> {
  const requestedSchema: RequestedSchema = toRequestedSchema(schema);
  return ask({ kind: "elicit", key: keyOption(options), acceptUnasked: acceptUnaskedOption(options), params: { mode: "form", message, requestedSchema }, schema });
}

/** Send the user to a URL (out-of-band flow); resolves with the user's action. */
export function elicitUrl(message: string, url: string, options: AskOptions = {}): Ask<ElicitUrlOutcome> {
  return ask({ kind: "elicitUrl", key: keyOption(options), acceptUnasked: acceptUnaskedOption(options), params: { mode: "url", message, url } });
}

/** Ask the client's model for a completion. */
export function sample(params: CreateMessageParams, options: AskOptions = {}): Ask<CreateMessageResult> {
  return ask({ kind: "sample", key: keyOption(options), acceptUnasked: acceptUnaskedOption(options), params });
}

/** Ask the client for its roots. */
export function listRoots(options: AskOptions = {}): Ask<Root[]> {
  return ask({ kind: "roots", key: keyOption(options), acceptUnasked: acceptUnaskedOption(options) });
}

/**
 * Run `fn` once per call: its result is recorded in the journal and replayed in later rounds,
 * on any instance. Code receives a fresh copy of the recorded value, the same on every path.
 * The result must be data the journal carries exactly: JSON values, `undefined`, `bigint`,
 * `-0`/`NaN`/`±Infinity`, `Date`, `Map`, `Set`; anything else (a class instance, a function,
 * a cycle, ...) fails the round that records it, naming the step and the path.
 */
export function* step<T>(name: string, fn: (signal: AbortSignal) => T | Promise<T>): Op<Awaited<T>> {
  if (typeof name !== "string" || name === "") throw new TypeError("step name must be a non-empty string");
  return (yield { kind: "step", name, fn }) as Awaited<T>;
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
 * lifetime, or a task's, has passed), delete the `patched()` call and keep the new branch:
 * the marker it left in newer journals is passed over. Use `version` instead to end every
 * call in flight.
 */
export function* patched(id: string): Op<boolean> {
  if (typeof id !== "string" || !PATCH_ID.test(id)) throw new TypeError(`patched: the id must be 1-128 characters without tabs or line breaks, got ${JSON.stringify(id)}`);
  return (yield { kind: "patch", id }) as boolean;
}
/** A random UUID, recorded so every replay sees the same value. */
export function* uuid(): Op<string> {
  return (yield { kind: "uuid" }) as string;
}

/** What an ask helper yields through `yield*` (the element types of `all(...)`'s result). */
export type AskResult<A> = A extends Ask<infer R> ? R : never;

function effectOf(item: unknown, where: string): AskEffect {
  const it = item as Partial<Ask<unknown>> | undefined;
  const first = typeof it?.next === "function" ? it.next() : undefined;
  if (!first || first.done || !isAskEffect(first.value)) {
    throw new TypeError(`all(): ${where} must be an ask (elicit, elicitUrl, sample or listRoots)`);
  }
  return first.value;
}

/** Several asks in ONE round. Answers that arrive are kept while the missing ones are asked again. */
export function all<const T extends readonly Ask<unknown>[]>(asks: T): Op<{ -readonly [K in keyof T]: AskResult<T[K]> }>;
/** Several asks in ONE round, as an array (answers in order) or an object (answers by member name). Answers that arrive are kept while the missing ones are asked again. */
export function all<T extends Record<string, Ask<unknown>>>(asks: T): Op<{ [K in keyof T]: AskResult<T[K]> }>;
export function* all(asks: readonly Ask<unknown>[] | Record<string, Ask<unknown>>): Op<unknown> {
  const effects = Array.isArray(asks)
    ? asks.map((a, i) => effectOf(a, `item ${i}`))
    : Object.fromEntries(Object.entries(asks).map(([k, a]) => [k, effectOf(a, `member "${k}"`)]));
  return yield { kind: "all", asks: effects };
}
