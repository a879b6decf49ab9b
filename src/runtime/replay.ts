import type { InputRequest } from "../wire/index.js";
import { checkAnswer } from "./answers.js";
import type { Capability, RunGenerator } from "./definitions.js";
import { type AllEffect, type AskEffect, type Effect, isEffect } from "./effects.js";
import { AuthorCodeError, DivergenceError, MissingCapabilityError } from "./errors.js";
import { defaultKey, fingerprintOf, type JournalRecord, requestOf, subKey } from "./journal.js";

/** Everything one round needs from the request and the state. */
export interface RoundInput {
  /** Starts the author's generator from the top. */
  start: () => RunGenerator<unknown>;
  /** Records replayed from the state (empty on a first call). */
  journal: readonly JournalRecord[];
  /** Asks outstanding when the state was minted; `undefined` when the request carried no state. */
  outstanding: Readonly<Record<string, string>> | undefined;
  /** Valid answers already collected for a partly answered `all(...)`. */
  partial: Readonly<Record<string, unknown>>;
  /** The request's `inputResponses`, own keys only. */
  responses: ReadonlyMap<string, unknown>;
  can: (kind: Capability) => boolean;
  signal: AbortSignal;
  randomUUID: () => string;
  clock: () => number;
}

/**
 * A generator stopped at an ask it could not satisfy, with everything needed to go on from
 * there: the next round on this instance can resume it instead of replaying from the top.
 */
export interface Suspended {
  generator: RunGenerator<unknown>;
  /** The journal up to (not including) the pending effect — what the sealed state holds. */
  records: JournalRecord[];
  pending: { effect: Effect; key: string | undefined; fp: string };
}

export type RoundOutcome =
  | { type: "complete"; value: unknown; journal: JournalRecord[] }
  | {
      type: "input_required";
      inputRequests: Record<string, InputRequest>;
      journal: JournalRecord[];
      outstanding: Record<string, string>;
      partial: Record<string, unknown> | undefined;
      suspended: Suspended;
    };

const CAPABILITY_OF: Record<AskEffect["kind"], Capability> = {
  elicit: "elicitation",
  elicitUrl: "elicitation.url",
  sample: "sampling",
  roots: "roots",
};

const isThenable = (v: unknown): v is PromiseLike<unknown> =>
  typeof v === "object" && v !== null && typeof (v as { then?: unknown }).then === "function";

/** The asks of an `all(...)` as `[subKey, effect, slot]` where slot is the index or member name. */
function subAsks(effect: AllEffect, key: string): Array<[string, AskEffect, number | string]> {
  return Array.isArray(effect.asks)
    ? (effect.asks as readonly AskEffect[]).map((a, i) => [subKey(key, a, i), a, i])
    : Object.entries(effect.asks).map(([name, a]) => [subKey(key, a, name), a, name]);
}

function startGenerator(start: () => RunGenerator<unknown>): RunGenerator<unknown> {
  let generator: RunGenerator<unknown>;
  try {
    generator = start();
  } catch (error) {
    throw new AuthorCodeError(error);
  }
  if (typeof generator?.next !== "function") throw new AuthorCodeError(new TypeError("run must be a generator function (function* or async function*)"));
  return generator;
}

/**
 * Run one round: replay the generator from the top, feeding each effect its recorded value,
 * until it completes or reaches an ask with no usable answer. Sync generators and sync steps
 * replay without awaiting, so replay costs little more than running the code once. Given a
 * `resume` (the same call suspended at the end of the previous round on this instance, with
 * exactly the journal of the state presented), it goes on from the pending ask instead.
 */
export async function runRound(input: RoundInput, resume?: Suspended): Promise<RoundOutcome> {
  const { journal, outstanding, responses } = input;
  const records: JournalRecord[] = resume ? resume.records : journal.slice();
  const consumed = new Set<string>();
  const generator = resume ? resume.generator : startGenerator(input.start);
  let pending = resume?.pending;

  /** A usable answer to `effect` under `key` from this request, consumed at most once per round. */
  const answerFor = (key: string, effect: AskEffect, fp: string): { value: unknown } | undefined => {
    if (consumed.has(key) || !responses.has(key)) return undefined;
    if (outstanding !== undefined) {
      const asked = outstanding[key];
      if (asked === undefined) return undefined; // nobody asked this key last round: ignored
      if (asked !== fp) throw new DivergenceError(records.length, asked, fp, `the answer under key "${key}" was given for a different ask than the one the code makes now`);
    }
    const check = checkAnswer(effect, responses.get(key));
    if (!check.ok) return undefined;
    consumed.add(key);
    return { value: check.value };
  };

  const requireCapabilities = (asks: readonly AskEffect[]) => {
    const missing = [...new Set(asks.map((a) => CAPABILITY_OF[a.kind]))].filter((c) => !input.can(c));
    if (missing.length > 0) throw new MissingCapabilityError(missing);
  };

  let send: unknown;
  for (let index = resume ? records.length : 0; ; index++) {
    let effect: Effect;
    let key: string | undefined;
    let fp: string;
    if (pending) {
      ({ effect, key, fp } = pending);
      pending = undefined;
    } else {
      let next: IteratorResult<Effect, unknown> | Promise<IteratorResult<Effect, unknown>>;
      try {
        next = generator.next(send);
        if (isThenable(next)) next = await next;
      } catch (error) {
        throw new AuthorCodeError(error);
      }
      if (next.done) {
        if (index < journal.length) throw new DivergenceError(index, journal[index]![0], undefined, `the journal recorded ${journal.length} effects but the code now completes after ${index}`);
        return { type: "complete", value: next.value, journal: records };
      }
      if (!isEffect(next.value)) {
        const v = next.value as unknown;
        throw new AuthorCodeError(new TypeError(`run yielded ${typeof v === "object" ? JSON.stringify(v)?.slice(0, 80) : String(v)}, which is not an effect: use yield* with elicit, sample, listRoots, step, now, uuid or all`));
      }
      effect = next.value;
      key = effect.kind === "step" || effect.kind === "now" || effect.kind === "uuid" ? undefined : (effect.kind === "all" ? undefined : effect.key) ?? defaultKey(effect, index);
      fp = fingerprintOf(effect, key);
    }

    if (index < journal.length) {
      const recorded = journal[index]!;
      if (recorded[0] !== fp) throw new DivergenceError(index, recorded[0], fp);
      send = recorded[1];
      continue;
    }

    let value: unknown;
    switch (effect.kind) {
      case "step":
        try {
          value = effect.fn(input.signal);
          if (isThenable(value)) value = await value;
        } catch (error) {
          throw new AuthorCodeError(error);
        }
        break;
      case "now":
        value = input.clock();
        break;
      case "uuid":
        value = input.randomUUID();
        break;
      case "all": {
        const subs = subAsks(effect, key!);
        const seen = new Set(subs.map(([k]) => k));
        if (seen.size !== subs.length) throw new AuthorCodeError(new TypeError(`all(): two asks share a key (${subs.map(([k]) => k).join(", ")})`));
        const answers: Record<string, unknown> = {};
        const missing: Array<[string, AskEffect]> = [];
        const fps: Record<string, string> = {};
        for (const [k, ask] of subs) {
          const subFp = fingerprintOf(ask, k);
          fps[k] = subFp;
          const kept = outstanding?.[k] === subFp && Object.hasOwn(input.partial, k);
          const got = kept ? { value: input.partial[k] } : answerFor(k, ask, subFp);
          if (got) answers[k] = got.value;
          else missing.push([k, ask]);
        }
        if (missing.length > 0) {
          requireCapabilities(missing.map(([, a]) => a));
          return {
            type: "input_required",
            inputRequests: Object.fromEntries(missing.map(([k, a]) => [k, requestOf(a) as InputRequest])),
            journal: records,
            outstanding: fps,
            partial: answers,
            suspended: { generator, records, pending: { effect, key, fp } },
          };
        }
        value = Array.isArray(effect.asks) ? subs.map(([k]) => answers[k]) : Object.fromEntries(subs.map(([k, , slot]) => [slot, answers[k]]));
        break;
      }
      default: {
        const got = answerFor(key!, effect, fp);
        if (!got) {
          requireCapabilities([effect]);
          return {
            type: "input_required",
            inputRequests: { [key!]: requestOf(effect) as InputRequest },
            journal: records,
            outstanding: { [key!]: fp },
            partial: undefined,
            suspended: { generator, records, pending: { effect, key, fp } },
          };
        }
        value = got.value;
      }
    }
    records.push([fp, value]);
    send = value;
  }
}
