import { type Ask, type AskEffect, type Effect, isAskEffect, isEffect, type Op, type ParallelEffect, type RaceBranch, type StepEffect } from "./effects.js";

// authoring/combinators.ts owns the helpers that combine effects: `all(...)` (several asks in one
// round, or several steps at once) and `race(...)` (whichever of several waits, sleeps, asks or
// steps comes first).

/** What an ask helper yields through `yield*` (the element types of `all(...)`'s result). */
export type AskResult<A> = A extends Ask<infer R> ? R : never;
/** What any helper yields through `yield*`. */
export type OpResult<A> = A extends Generator<Effect, infer R, unknown> ? R : never;

/** The first effect a helper yields (the helper kept, past it). */
function firstEffect(item: unknown): { effect: Effect; helper: Generator<Effect, unknown, unknown> } | undefined {
  const it = item as Partial<Generator<Effect, unknown, unknown>> | undefined;
  const first = typeof it?.next === "function" ? it.next() : undefined;
  if (!first || first.done === true || !isEffect(first.value)) return undefined;
  return { effect: first.value, helper: it as Generator<Effect, unknown, unknown> };
}

/** Options of `all(...)`. */
export interface AllOptions {
  /** Over steps: how many run at the same time, at most. Default 4. */
  concurrency?: number;
}

/** The default bound on steps `all(...)` runs at the same time. */
export const DEFAULT_STEP_CONCURRENCY = 4;

/**
 * Several asks in ONE round (answers that arrive are kept while the missing ones are asked
 * again), or several steps run at the same time (at most `options.concurrency`, default 4):
 * each step's result is recorded as it would be run one after the other — in the order given,
 * whichever finished first — so a replay sees the same journal, and a recorded step never runs
 * again. A step that throws fails the call, as it would alone; the others are told through their
 * signal. Steps that retry cannot run in `all(...)` (retry inside the step's function). An array
 * gives the values in order, an object by member name. Asks and steps are not mixed.
 */
export function all<const T extends readonly Op<unknown>[]>(items: T, options?: AllOptions): Op<{ -readonly [K in keyof T]: OpResult<T[K]> }>;
/** Several asks in ONE round, or several steps at once, by member name: the values by member name. */
export function all<T extends Record<string, Op<unknown>>>(items: T, options?: AllOptions): Op<{ [K in keyof T]: OpResult<T[K]> }>;
export function* all(items: readonly Op<unknown>[] | Record<string, Op<unknown>>, options: AllOptions = {}): Op<unknown> {
  const array = Array.isArray(items);
  if (!array && (typeof items !== "object" || items === null)) throw new TypeError("all(): give an array or an object of asks or of steps");
  const entries: Array<[number | string, unknown]> = array ? items.map((item, i): [number, unknown] => [i, item]) : Object.entries(items);
  const effects = entries.map(([slot, item]) => {
    const where = typeof slot === "number" ? `item ${slot}` : `member "${slot}"`;
    const effect = firstEffect(item)?.effect;
    if (effect === undefined || (!isAskEffect(effect) && effect.kind !== "step")) {
      throw new TypeError(
        effect?.kind === "attempt"
          ? `all(): ${where} is a step that retries, which all() cannot run at the same time as others (retry inside the step's function)`
          : `all(): ${where} must be an ask (elicit, elicitUrl, sample or listRoots) or a step`,
      );
    }
    return [slot, effect] as [number | string, AskEffect | StepEffect];
  });
  const steps = effects.filter(([, e]) => e.kind === "step").length;
  if (steps > 0 && steps < effects.length) throw new TypeError("all(): give asks or steps, not both (asks are answered in one round; steps run at once)");
  if (steps > 0) {
    const concurrency = options.concurrency ?? DEFAULT_STEP_CONCURRENCY;
    if (!Number.isSafeInteger(concurrency) || concurrency < 1) throw new TypeError(`all(): concurrency must be an integer ≥ 1, got ${String(concurrency)}`);
    const names = new Set<string>();
    for (const [, e] of effects) {
      const name = (e as StepEffect).name;
      // Two steps of one name would share `ctx.idempotencyKey(name)`: a downstream deduplicating
      // on it would take the second for a retry of the first.
      if (names.has(name)) throw new TypeError(`all(): two steps are named "${name}"; give each step its own name`);
      names.add(name);
    }
    const parallel: ParallelEffect = { kind: "parallel", steps: effects.map(([slot, effect]) => ({ slot, effect: effect as StepEffect })), array, concurrency };
    return yield parallel;
  }
  const asks = array ? effects.map(([, e]) => e as AskEffect) : Object.fromEntries(effects.map(([slot, e]) => [slot, e as AskEffect]));
  return yield { kind: "all", asks };
}

/** What `race(...)` gives back: which branch won, and what that branch returns. */
export type RaceResult<T extends Record<string, Op<unknown>>> = { [K in keyof T & string]: { winner: K; value: OpResult<T[K]> } }[keyof T & string];

/** Branch names: what an ask's default key and a journal's words are made of. */
const BRANCH_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * Whichever comes first: `waitForSignal`, `sleep`, asks and steps, by name —
 *
 * ```ts
 * const first = yield* race({ approval: waitForSignal("approval", Approval), timeout: sleep(86_400_000) });
 * if (first.winner === "approval") ...
 * ```
 *
 * The winner and its value are recorded, so a replay takes the same branch; the others are
 * cancelled: a losing wait's token is refused from then on, a losing ask is no longer asked, a
 * losing step is told through its signal and its result is not recorded. What is ready when the
 * race is reached wins over what is not, in this order: a value (a signal's, an answer) in the
 * order given, then the timer that ended first (a sleep, or a wait's `timeoutMs`, whose branch
 * then wins with `{ status: "timeout" }`); then the steps run, and the first to return wins —
 * unless a timer ends first (their signal then aborts). A race with steps ends in the round that
 * reaches it; without steps it waits as its branches would (for answers, in the foreground;
 * for signals and timers, only inside a task). A step that throws fails the call, as it would
 * alone. A step that retries cannot race (retry inside the step's function).
 */
export function* race<T extends Record<string, Op<unknown>>>(branches: T): Op<RaceResult<T>> {
  if (typeof branches !== "object" || branches === null || Array.isArray(branches))
    throw new TypeError("race(): give an object of named branches, e.g. race({ approval: waitForSignal(...), timeout: sleep(...) })");
  const list: RaceBranch[] = [];
  for (const [name, item] of Object.entries(branches)) {
    if (!BRANCH_NAME.test(name)) throw new TypeError(`race(): a branch name is 1-64 characters of [A-Za-z0-9_.-], got ${JSON.stringify(name)}`);
    const first = firstEffect(item);
    const kind = first?.effect.kind;
    if (first === undefined || (kind !== "signal" && kind !== "sleep" && kind !== "step" && !isAskEffect(first.effect))) {
      throw new TypeError(
        kind === "attempt"
          ? `race(): branch "${name}" is a step that retries, which cannot race (retry inside the step's function)`
          : `race(): branch "${name}" must be waitForSignal, sleep, an ask (elicit, elicitUrl, sample, listRoots) or a step`,
      );
    }
    list.push({ name, effect: first.effect as RaceBranch["effect"], helper: first.helper });
  }
  if (list.length === 0) throw new TypeError("race(): give at least one branch");
  return (yield { kind: "race", branches: list }) as RaceResult<T>;
}
