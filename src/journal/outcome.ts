// journal/outcome.ts owns how an effect's value is recorded as text and read back.
//
// Invariant: a value is recorded as text (state/value-text.ts) and decoded fresh on every read,
// so code never holds an object the journal holds.

import type { Effect } from "../authoring/effects.js";
import { decodeValue, encodeValue } from "../state/index.js";

/** How an effect's value is recorded: an elicitation as `a<content>`, `d` or `c`; `runAsTask` as `1`/`0`; others as their value. */
export function encodeOutcome(effect: Effect, value: unknown): string {
  if (effect.kind === "task" || effect.kind === "patch") return value === true ? "1" : "0";
  if (effect.kind === "elicit" || effect.kind === "elicitUrl") {
    const { action, content } = value as { action: string; content?: unknown };
    return action === "accept" ? (effect.kind === "elicit" ? `a${encodeValue(content)}` : "a") : action === "decline" ? "d" : "c";
  }
  return encodeValue(value);
}

/** The value an `encodeOutcome` text stands for (a fresh one each time). */
export function decodeOutcome(effect: Effect, text: string): unknown {
  if (effect.kind === "task" || effect.kind === "patch") return text === "1";
  if (effect.kind === "elicit" || effect.kind === "elicitUrl") {
    if (text[0] === "a") return effect.kind === "elicit" ? { action: "accept", content: decodeValue(text.slice(1)) } : { action: "accept" };
    return { action: text === "d" ? "decline" : "cancel" };
  }
  return decodeValue(text);
}
