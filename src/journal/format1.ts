import { decodeValue, digestOf } from "../state/index.js";
import type { Capability } from "../wire/index.js";
import type { AskEffect, Effect } from "../authoring/effects.js";
import { type JournalRecord, parseHeader, payloadFrom, requestOf, type StatePayload, subKey } from "./journal.js";

/**
 * Format 1: journals sealed before the line format (`y1` tokens) — a JSON payload with
 * `kind:key:digest` fingerprints and every value as its full text. What it takes to go on with
 * a call whose state is one: its records are checked with these fingerprints and decoded with
 * this, and the next state is sealed in format 2.
 */

/** A format-1 payload, or `undefined`: the header as in format 2, and the records inline as `j`. */
export function parsePayloadV1(data: unknown): StatePayload | undefined {
  const header = parseHeader(data);
  const j = header && (data as { j?: unknown }).j;
  if (header === undefined || !Array.isArray(j) || !j.every((x) => Array.isArray(x) && x.length === 2 && typeof x[0] === "string" && typeof x[1] === "string")) return undefined;
  return payloadFrom(header, j as JournalRecord[], "", 1);
}

/** Format-1 fingerprint. */
export function fingerprintV1(effect: Effect, key: string | undefined): string {
  switch (effect.kind) {
    case "step":
      return `step:${effect.name}`;
    case "now":
    case "uuid":
    case "task":
      return effect.kind;
    case "patch":
      return `patch:${effect.id}`;
    // Effects newer than format 1: no format-1 journal holds one, so this never matches one.
    case "sleep":
    case "attempt":
    case "progress":
    case "signal":
      return `${effect.kind}:`;
    case "all": {
      const parts = Array.isArray(effect.asks)
        ? (effect.asks as readonly AskEffect[]).map((a, i) => fingerprintV1(a, subKey(key!, a, i)))
        : Object.entries(effect.asks).map(([name, a]) => `${name}=${fingerprintV1(a, subKey(key!, a, name))}`);
      return `all:${key}:${digestOf(parts).slice(0, 12)}`;
    }
    default:
      return `${effect.kind}:${key}:${digestOf(requestOf(effect)).slice(0, 12)}`;
  }
}

export const canFingerprintV1 = (kind: Capability): string => `can:${kind}`;

/** A format-1 value (every value was its full text; `ctx.can` and `runAsTask` "true"/"false"). */
export const decodeOutcomeV1 = (_effect: Effect, text: string): unknown => decodeValue(text);
