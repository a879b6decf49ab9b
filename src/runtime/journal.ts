import { z } from "zod";
import { digestOf } from "../state/index.js";
import type { Capability } from "../wire/index.js";
import type { AskEffect, Effect } from "./effects.js";

/**
 * The journal is what a call has done so far: one record per completed effect (and per
 * `ctx.can` answer), in order, each `[fingerprint, value text]` (see `encodeValue`). It
 * travels sealed inside `requestState`, with the asks outstanding at the end of the round (so
 * an answer is only ever delivered to the ask it was given for) and the answers already
 * collected for a partly answered `all(...)`.
 */
export const statePayload = z.object({
  /** The definition's `version` when the state was minted. */
  v: z.string().optional(),
  /** Rounds completed so far (the server-side round cap counts these). */
  r: z.number().int().nonnegative(),
  /** A random id for the whole call, the root of `ctx.idempotencyKey`. */
  c: z.string(),
  /** Journal records: `[fingerprint, value text]`. */
  j: z.array(z.tuple([z.string(), z.string()])),
  /** Outstanding asks of the last round: key → fingerprint. */
  o: z.record(z.string(), z.string()),
  /** Valid answers already collected for a partly answered `all(...)`: key → value text. */
  p: z.record(z.string(), z.string()).optional(),
});
export type StatePayload = z.infer<typeof statePayload>;
export type JournalRecord = [fingerprint: string, value: string];

/** The wire request an ask turns into (the part its fingerprint covers). */
export function requestOf(effect: AskEffect): { method: string; params?: Record<string, unknown> } {
  switch (effect.kind) {
    case "elicit":
    case "elicitUrl":
      return { method: "elicitation/create", params: effect.params };
    case "sample":
      return { method: "sampling/createMessage", params: effect.params };
    case "roots":
      return { method: "roots/list" };
  }
}

/**
 * `kind:key:digest` — enough to tell, on replay, whether the code still does the same thing at
 * this position. Steps are identified by name (their function cannot be compared); asks by the
 * SHA-256 of their canonical request, truncated to 72 bits (inside an authenticated token, so
 * it guards against accidents, not forgery).
 */
export function fingerprintOf(effect: Effect, key: string | undefined): string {
  switch (effect.kind) {
    case "step":
      return `step:${effect.name}`;
    case "now":
    case "uuid":
    case "task":
      return effect.kind;
    case "all": {
      const parts = Array.isArray(effect.asks)
        ? (effect.asks as readonly AskEffect[]).map((a, i) => fingerprintOf(a, subKey(key!, a, i)))
        : Object.entries(effect.asks).map(([name, a]) => `${name}=${fingerprintOf(a, subKey(key!, a, name))}`);
      return `all:${key}:${digestOf(parts).slice(0, 12)}`;
    }
    default:
      return `${effect.kind}:${key}:${digestOf(requestOf(effect)).slice(0, 12)}`;
  }
}

/** The fingerprint of a `ctx.can(kind)` answer. */
export const canFingerprint = (kind: Capability): string => `can:${kind}`;

/** The key of a sub-ask of `all(...)`: its explicit key, or the all's key plus its index or name. */
export function subKey(allKey: string, ask: AskEffect, indexOrName: number | string): string {
  return ask.key ?? `${allKey}.${indexOrName}`;
}

/**
 * The default key of the call's `ordinal`-th ask (counting asks and `all`s only, from 0), so
 * adding a step, a `now()` or a `ctx.can` renames no key.
 */
export function defaultKey(kind: AskEffect["kind"] | "all", ordinal: number): string {
  return `${kind}-${ordinal}`;
}

/** A short human description of a fingerprint for divergence messages. */
export function describeFingerprint(fp: string | undefined): string {
  if (fp === undefined) return "nothing (the call had ended here)";
  const [kind, name] = fp.split(":");
  switch (kind) {
    case "step":
      return `step("${name}")`;
    case "now":
    case "uuid":
      return `${kind}()`;
    case "task":
      return "runAsTask()";
    case "can":
      return `ctx.can("${name}")`;
    default:
      return `${kind} under key "${name}" (request digest ${fp.split(":")[2] ?? "?"})`;
  }
}
