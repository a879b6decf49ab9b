import { canonicalJson } from "../state/index.js";
import { type AskEffect, isAskEffect } from "../authoring/effects.js";
import { requestOf } from "../journal/journal.js";
import type { Traced } from "./round/round.js";

/** Long values are cut to this many characters in messages. */
const PREVIEW = 120;

function preview(value: unknown): string {
  const text = value === undefined ? "absent" : typeof value === "string" ? JSON.stringify(value) : canonicalJson(value);
  return text.length > PREVIEW ? `${text.slice(0, PREVIEW)}…` : text;
}

function label(t: Traced): string {
  if ("can" in t) return `ctx.can("${t.can}")`;
  const { effect, key } = t;
  switch (effect.kind) {
    case "step":
      return `step("${effect.name}")`;
    case "now":
    case "uuid":
      return `${effect.kind}()`;
    case "task":
      return "runAsTask()";
    case "patch":
      return `patched("${effect.id}")`;
    case "sleep":
      return "sleep()";
    case "attempt":
      return `step("${effect.name}", ..., { retry })`;
    case "progress":
      return "progress()";
    case "signal":
      return `waitForSignal("${effect.name}")`;
    default:
      return `${effect.kind === "all" ? "all(...)" : effect.kind} under key "${key}"`;
  }
}

const PARAM_NAMES: Record<string, string> = { message: "message text", requestedSchema: "schema", url: "url", messages: "messages", maxTokens: "maxTokens", systemPrompt: "system prompt" };

/** The first request member that differs between two asks of the same kind and key. */
function paramChange(a: AskEffect, b: AskEffect): string | undefined {
  const pa = (requestOf(a).params ?? {}) as Record<string, unknown>;
  const pb = (requestOf(b).params ?? {}) as Record<string, unknown>;
  const members = [...new Set([...Object.keys(pa), ...Object.keys(pb)])].sort((x, y) => (x === "message" ? -1 : y === "message" ? 1 : x.localeCompare(y)));
  for (const m of members) {
    if (canonicalJson(pa[m]) !== canonicalJson(pb[m])) return `its ${PARAM_NAMES[m] ?? m} was ${preview(pa[m])} and is now ${preview(pb[m])}`;
  }
  return undefined;
}

/**
 * In words an author can act on, what changed at one position between two runs of the same
 * code (`then`: what the first run did there, `now`: the second): which effect, and for an ask
 * which part — kind, key, message text, schema — with both values. `undefined` when one side
 * is unknown or nothing visible differs.
 */
export function describeChange(then: Traced | undefined, now: Traced | undefined): string | undefined {
  if (then === undefined || now === undefined) return undefined;
  if ("can" in then || "can" in now || then.effect.kind !== now.effect.kind) return `${label(then)} became ${label(now)}`;
  const a = then.effect;
  const b = now.effect;
  if (then.key !== now.key) return `the key of ${a.kind} changed from "${then.key}" to "${now.key}"`;
  if (a.kind === "step" && b.kind === "step") return a.name === b.name ? undefined : `step("${a.name}") became step("${b.name}")`;
  if (a.kind === "all" && b.kind === "all") {
    const left = Object.entries(a.asks as Record<string, AskEffect>);
    const right = b.asks as Record<string, AskEffect>;
    if (left.length !== Object.keys(right).length) return `${label(then)} asked ${left.length} things and now asks ${Object.keys(right).length}`;
    for (const [slot, ask] of left) {
      const other = right[slot];
      if (other === undefined || other.kind !== ask.kind) return `${label(then)}: item ${slot} changed kind`;
      const change = paramChange(ask, other);
      if (change) return `${label(then)}, item ${slot}: ${change}`;
    }
    return undefined;
  }
  if (a.kind === "patch" && b.kind === "patch") return a.id === b.id ? undefined : `patched("${a.id}") became patched("${b.id}")`;
  if (!isAskEffect(a) || !isAskEffect(b)) return undefined;
  const change = paramChange(a, b);
  return change === undefined ? undefined : `${label(then)}: ${change}`;
}
