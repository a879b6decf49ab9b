import { ASK_KINDS } from "../../authoring/effect-kinds.js";
import type { RunGenerator } from "../../authoring/definitions.js";
import type { AllEffect, AskEffect } from "../../authoring/effects.js";
import { decodeOutcome, describeAskChange, encodeOutcome, fingerprintOf, type JournalRecord, requestOf, subKey } from "../../journal/journal.js";
import { encodeValue, UnsupportedValueError } from "../../state/index.js";
import type { Capability, InputRequest } from "../../wire/index.js";
import { AnswerSchemaError, checkAnswer } from "../answers.js";
import { AuthorCodeError, DivergenceError, MissingCapabilityError } from "../errors.js";
import type { RoundInput, RoundOutcome, Suspended } from "./types.js";

// replay/round/asks.ts owns what a round (replay/round/round.ts) does with asks: the answer this
// request gives an ask, checked against the ask it was given for and against its schema; the
// answers an `all(...)` collects; and the round's end when asks are left unanswered.
//
// Invariants:
// 1. An answer reaches an ask only if the ask was sent under that key (or opted in with
//    `acceptUnasked`); an answer given for another ask under the same key is a divergence.
// 2. One answer serves one ask; a refused answer asks again, with why.
// 3. An ask is sent only for a kind this request declared; one needed and undeclared is -32021.

/** What asks need of the round. */
export interface RoundState {
  readonly input: RoundInput;
  readonly records: JournalRecord[];
  readonly index: number;
  readonly asks: number;
  /** Keys whose answer this round already used: one answer serves one ask. */
  consumed: Set<string> | undefined;
  /** Answers of this request that were refused, by key: why (a re-ask's message says it). */
  refused: Map<string, string> | undefined;
}

/** The asks of an `all(...)` as `[subKey, effect, slot]` where slot is the index or member name. */
function subAsks(effect: AllEffect, key: string): Array<[string, AskEffect, number | string]> {
  return Array.isArray(effect.asks) ? (effect.asks as readonly AskEffect[]).map((a, i) => [subKey(key, a, i), a, i]) : Object.entries(effect.asks).map(([name, a]) => [subKey(key, a, name), a, name]);
}

/** `encode()` for a value about to be recorded (`encodeValue` by default); a value it cannot carry is the author's failure. */
export function recordable(value: unknown, what: string, encode: (value: unknown) => string = encodeValue): string {
  try {
    return encode(value);
  } catch (error) {
    if (!(error instanceof UnsupportedValueError)) throw error;
    throw new AuthorCodeError(new TypeError(`${what} cannot be recorded exactly: ${error.message}`, { cause: error }));
  }
}

/**
 * A usable answer to `effect` under `key` from this request, as value text. An answer reaches
 * an ask only if the ask was sent under that key last round (or the ask opted in with
 * `acceptUnasked`); an answer given for a different ask under the same key is a divergence.
 */
export function answerFor(round: RoundState, key: string, effect: AskEffect, fp: string): { text: string } | undefined {
  const { responses, outstanding } = round.input;
  if (round.consumed?.has(key) === true || !responses.has(key)) return undefined;
  const asked = outstanding?.[key];
  if (asked === undefined) {
    if (!effect.acceptUnasked) return undefined;
  } else if (asked !== fp) {
    const change = describeAskChange(asked, fp, effect, key);
    throw new DivergenceError(
      round.index,
      asked,
      fp,
      `the answer under key "${key}" was given for a different ask than the one the code makes now${change ? ` (${change.words})` : ""}`,
      change?.parts,
    );
  }
  let check: ReturnType<typeof checkAnswer>;
  try {
    check = checkAnswer(effect, responses.get(key));
  } catch (error) {
    if (error instanceof AnswerSchemaError) throw new AuthorCodeError(new Error(`ask "${key}": ${error.message}`, { cause: error.cause }));
    throw error;
  }
  if (!check.ok) {
    (round.refused ??= new Map()).set(key, check.problem);
    return undefined;
  }
  (round.consumed ??= new Set()).add(key);
  // Encoded once: what is recorded of an elicitation is its accepted content (a path in the
  // error is then within the content), of any other ask the whole answer.
  const what = effect.kind === "elicit" ? `the accepted content of ask "${key}" (after the answer schema)` : `the answer to ask "${key}"`;
  return { text: recordable(check.value, what, (value) => encodeOutcome(effect, value)) };
}

/** An `all(...)`: every answer present → the combined value's text; otherwise ask the missing. */
export function collect(round: RoundState, effect: AllEffect, key: string, fp: string, generator: RunGenerator<unknown>): { type: "done"; text: string } | RoundOutcome {
  const subs = subAsks(effect, key);
  if (new Set(subs.map(([k]) => k)).size !== subs.length) throw new AuthorCodeError(new TypeError(`all(): two asks share a key (${subs.map(([k]) => k).join(", ")})`));
  const texts: Record<string, string> = {};
  const missing: Array<[string, AskEffect]> = [];
  const fps: Record<string, string> = {};
  const { outstanding, partial } = round.input;
  for (const [k, ask] of subs) {
    const subFp = fingerprintOf(ask, k);
    fps[k] = subFp;
    // An answer kept from an earlier round.
    const kept = outstanding?.[k] === subFp && Object.hasOwn(partial, k) ? partial[k] : undefined;
    const text = kept ?? answerFor(round, k, ask, subFp)?.text;
    if (text !== undefined) texts[k] = text;
    else missing.push([k, ask]);
  }
  if (missing.length > 0) return askFor(round, missing, fps, texts, { effect, key, fp }, generator);
  const value = Array.isArray(effect.asks) ? subs.map(([k, ask]) => decodeOutcome(ask, texts[k]!)) : Object.fromEntries(subs.map(([k, ask, slot]) => [slot, decodeOutcome(ask, texts[k]!)]));
  return { type: "done", text: encodeValue(value) };
}

/** End the round asking for `asks` (after checking this request declared what they need). */
export function askFor(
  round: RoundState,
  asks: Array<[string, AskEffect]>,
  outstanding: Record<string, string>,
  partial: Record<string, string> | undefined,
  pending: Suspended["pending"],
  generator: RunGenerator<unknown>,
): RoundOutcome {
  const missing: Capability[] = [];
  const inputRequests: Record<string, InputRequest> = {};
  let refused: Record<string, string> | undefined;
  for (const [k, a] of asks) {
    const needed = ASK_KINDS[a.kind].capability;
    if (!round.input.declared(needed) && !missing.includes(needed)) missing.push(needed);
    inputRequests[k] = requestOf(a) as InputRequest;
    const problem = a.kind === "elicit" ? round.refused?.get(k) : undefined;
    if (problem !== undefined) (refused ??= {})[k] = problem;
  }
  if (missing.length > 0) throw new MissingCapabilityError(missing, round.input.undeclared === true);
  return {
    type: "input_required",
    inputRequests,
    journal: round.records,
    outstanding,
    partial: partial && Object.keys(partial).length > 0 ? partial : undefined,
    refused,
    suspended: { generator, records: round.records, pending, asks: round.asks },
  };
}
