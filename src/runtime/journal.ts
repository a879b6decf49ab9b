import { z } from "zod";
import { digestOf } from "../state/index.js";
import type { AskEffect, Effect } from "./effects.js";

/**
 * The journal is what a call has done so far: one record per completed effect, in order, each
 * `[fingerprint, value]`. It travels sealed inside `requestState`, with the asks outstanding
 * at the end of the round (so an answer is only ever delivered to the ask it was given for) and
 * the answers already collected for a partly answered `all(...)`.
 */
export const statePayload = z.object({
  /** The definition's `version` when the state was minted. */
  v: z.string().optional(),
  /** Rounds completed so far (the server-side round cap counts these). */
  r: z.number().int().nonnegative(),
  /** A random id for the whole call, the root of `ctx.idempotencyKey`. */
  c: z.string(),
  /** Journal records: `[fingerprint, value]`. */
  j: z.array(z.tuple([z.string(), z.unknown()])),
  /** Outstanding asks of the last round: key → fingerprint. */
  o: z.record(z.string(), z.string()),
  /** Valid answers already collected for a partly answered `all(...)`: key → outcome. */
  p: z.record(z.string(), z.unknown()).optional(),
});
export type StatePayload = z.infer<typeof statePayload>;
export type JournalRecord = [fingerprint: string, value: unknown];

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

/** The key of a sub-ask of `all(...)`: its explicit key, or the all's key plus its index or name. */
export function subKey(allKey: string, ask: AskEffect, indexOrName: number | string): string {
  return ask.key ?? `${allKey}.${indexOrName}`;
}

/** The default key of an effect at journal position `index`. */
export function defaultKey(effect: AskEffect | { kind: "all" }, index: number): string {
  return `${effect.kind}-${index}`;
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
    default:
      return `${kind} under key "${name}" (request digest ${fp.split(":")[2] ?? "?"})`;
  }
}
