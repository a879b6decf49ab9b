// replay/round.ts owns one round of one generator: replaying its journal, running what is new,
// and stopping at the first ask it cannot answer. It knows nothing of tokens, stores or
// transports: the runtime hands it records and answers, and takes back records and asks.
//
// Invariants:
// 1. A replayed effect gets exactly the value recorded for it, decoded fresh: never an object
//    the journal holds, never an answer recorded for another ask (fingerprints must match, or
//    the round fails with a DivergenceError naming the index and what changed).
// 2. A step body runs only past the end of the journal; a recorded step never runs again.
// 3. Anything code can branch on (`ctx.can`, `now()`, `uuid()`, `patched()`) is recorded at its
//    position, so a replay on any instance takes the same path.
// 4. An ask is sent only for a kind this request declared; one needed and undeclared is -32021.
// 5. A resumed generator (this instance's, suspended at the end of the previous round) goes on
//    only from exactly the journal it was suspended with.

import { ASK_KINDS } from "../authoring/effect-kinds.js";
import { encodeValue, UnsupportedValueError } from "../state/index.js";
import { type Capability, describeZodError, type InputRequest } from "../wire/index.js";
import { AnswerSchemaError, checkAnswer } from "./answers.js";
import type { RunGenerator } from "../authoring/definitions.js";
import { type AllEffect, type AskEffect, type AttemptEffect, type AttemptOutcome, type Effect, isEffect } from "../authoring/effects.js";
import { AuthorCodeError, DivergenceError, MissingCapabilityError } from "./errors.js";
import { enterStep, leaveStep } from "./ambient.js";
import type { RoundInput, RoundOutcome, StepRun, Suspended } from "./round-types.js";
export type { RoundInput, RoundOutcome, StepRun, Suspended, Traced } from "./round-types.js";
import { canFingerprint, decodeOutcome, describeAskChange, defaultKey, encodeOutcome, fingerprintOf, type JournalRecord, requestOf, subKey } from "../journal/journal.js";

/** A divergence at a replayed record; for an ask, naming the part that changed. */
function diverged(index: number, recorded: string, current: string, effect: Effect, key: string | undefined): DivergenceError {
  const change = describeAskChange(recorded, current, effect, key);
  return change ? new DivergenceError(index, recorded, current, `at effect #${index}, ${change.words}`, change.parts) : new DivergenceError(index, recorded, current);
}

const isThenable = (v: unknown): v is PromiseLike<unknown> => typeof v === "object" && v !== null && typeof (v as { then?: unknown }).then === "function";

/** The asks of an `all(...)` as `[subKey, effect, slot]` where slot is the index or member name. */
function subAsks(effect: AllEffect, key: string): Array<[string, AskEffect, number | string]> {
  return Array.isArray(effect.asks) ? (effect.asks as readonly AskEffect[]).map((a, i) => [subKey(key, a, i), a, i]) : Object.entries(effect.asks).map(([name, a]) => [subKey(key, a, name), a, name]);
}

/** `encode()` for a value about to be recorded (`encodeValue` by default); a value it cannot carry is the author's failure. */
function recordable(value: unknown, what: string, encode: (value: unknown) => string = encodeValue): string {
  try {
    return encode(value);
  } catch (error) {
    if (!(error instanceof UnsupportedValueError)) throw error;
    throw new AuthorCodeError(new TypeError(`${what} cannot be recorded exactly: ${error.message}`, { cause: error }));
  }
}

/**
 * One round of one call: replay the generator from the top, feeding each effect its recorded
 * value (a fresh decoding of the recorded text, so code never holds what the journal holds),
 * until it completes or reaches an ask with no usable answer. Sync generators and sync steps
 * replay without awaiting. Given a `resume` (the same call suspended at the end of the previous
 * round on this instance, with exactly the journal of the state presented), it goes on from the
 * pending ask instead. `ctx.can` reaches the round through `can()`, which journals its answer
 * at the current position like any effect.
 */
export class Round {
  readonly records: JournalRecord[];
  /** The steps this round ran (not the replayed ones), for round traces. */
  readonly stepsRun: StepRun[] = [];
  private index: number;
  private asks: number;
  private inStep = false;
  // Made on first use: most rounds consume one answer and refuse none, and a Set and a Map per
  // request measured as a visible part of what a stateless round allocates.
  /** Keys whose answer this round already used: one answer serves one ask. */
  private consumed: Set<string> | undefined;
  /** Answers of this request that were refused, by key: why (a re-ask's message says it). */
  private refused: Map<string, string> | undefined;
  /** A divergence found inside author code (which might catch it): rethrown after `next()`. */
  private diverged: DivergenceError | undefined;

  /** How many records `onStep` has been given (at first: those the round was handed, which are saved). */
  private saved: number;

  constructor(
    private readonly input: RoundInput,
    private readonly resume?: Suspended,
  ) {
    // Replayed records are appended as they are checked.
    this.records = resume ? resume.records : [];
    this.index = resume ? resume.records.length : 0;
    this.asks = resume ? resume.asks : 0;
    // Resumed past the journal's end, nothing is replayed; resumed at an earlier round of this
    // call (a journal that extends the generator's), the newer records are replayed first.
    const earlier = resume !== undefined && input.journal.length > resume.records.length;
    this.suspendedAt = resume && !earlier ? -1 : (input.suspendedAt ?? input.journal.length);
    this.saved = resume && !earlier ? resume.records.length : input.journal.length;
  }

  /**
   * Where the previous round stopped (the journal's end), when this round replays; -1 when it
   * resumes. A `patched()` reached exactly there, with asks outstanding, is old code: a round
   * run by the code that has the patch would have recorded it before that ask.
   */
  private readonly suspendedAt: number;

  /**
   * Records of patches the code no longer makes (a `patched()` call deleted once no older call
   * was left) are passed over, kept as they are; `keep` is the patch the code makes now.
   */
  private passRemovedPatches(keep?: string): void {
    const { journal } = this.input;
    while (this.index < journal.length && journal[this.index]![0][0] === "P" && journal[this.index]![0] !== keep) {
      this.records.push(journal[this.index]!);
      this.index++;
    }
  }

  /** `patched(id)`: recorded `true` (new code), `false` for a call recorded before the patch (nothing recorded). */
  private patchValue(fp: string): boolean {
    const { journal, outstanding } = this.input;
    const recorded = journal[this.index];
    if (recorded !== undefined && recorded[0] === fp) {
      this.records.push(recorded);
      this.index++;
      return true;
    }
    if (recorded !== undefined || (this.index === this.suspendedAt && outstanding !== undefined && Object.keys(outstanding).length > 0)) return false;
    if (this.input.verify) throw new DivergenceError(this.index, this.input.verify.pending, fp, "replayed, the code takes a patch the round did not record");
    this.records.push([fp, "1"]);
    this.index++;
    return true;
  }

  /** `ctx.can(kind)`: the recorded answer at this position, or this request's, recorded. */
  can(kind: Capability): boolean {
    // Inside a step, the step's result is what gets recorded, not what it looked at.
    if (this.inStep) return this.input.declared(kind);
    const fp = canFingerprint(kind);
    this.passRemovedPatches();
    const i = this.index;
    this.input.trace?.set(i, { can: kind });
    const { journal } = this.input;
    let value: boolean;
    if (i < journal.length) {
      if (journal[i]![0] !== fp) throw (this.diverged = new DivergenceError(i, journal[i]![0], fp));
      value = journal[i]![1] === "1";
    } else {
      if (this.input.verify) throw (this.diverged = new DivergenceError(i, undefined, fp, `the round asked ctx.can("${kind}") at effect #${i} only when replayed`));
      value = this.input.declared(kind);
    }
    this.records.push([fp, value ? "1" : "0"]);
    this.index++;
    return value;
  }

  async run(): Promise<RoundOutcome> {
    const { input } = this;
    const { journal } = input;
    const generator = this.resume ? this.resume.generator : this.startGenerator();
    let pending = this.resume?.pending;
    let send: unknown = this.resume?.send;
    for (;;) {
      let effect: Effect;
      let key: string | undefined;
      let fp: string;
      if (pending) {
        ({ effect, key, fp } = pending);
        pending = undefined;
      } else {
        const advanced = this.advance(generator, send);
        const next = isThenable(advanced) ? await advanced : advanced;
        if (next.done) {
          this.passRemovedPatches();
          if (this.index < journal.length) {
            throw new DivergenceError(this.index, journal[this.index]![0], undefined, `the journal recorded ${journal.length} effects but the code now completes after ${this.index}`);
          }
          if (input.verify?.pending !== undefined) throw new DivergenceError(this.index, input.verify.pending, undefined, "the round asked for input here, but replayed the code completes");
          return { type: "complete", value: next.value, journal: this.records };
        }
        effect = next.value;
        key = this.keyOf(effect);
        // The recorded fingerprint is a hint: an ask made from the same schema, key and message is recognised without hashing.
        this.passRemovedPatches(effect.kind === "patch" ? `P${effect.id}` : undefined);
        // A form elicitation under its default key passes its ordinal: its cached fingerprint is found by it.
        fp = fingerprintOf(effect, key, journal[this.index]?.[0], effect.kind === "elicit" && effect.key === undefined ? this.asks - 1 : -1);
        input.trace?.set(this.index, { effect, key });
      }
      if (effect.kind === "patch") {
        send = this.patchValue(fp);
        continue;
      }

      if (this.index < journal.length) {
        const recorded = journal[this.index]!;
        if (recorded[0] !== fp) throw diverged(this.index, recorded[0], fp, effect, key);
        send = decodeOutcome(effect, recorded[1]);
        this.records.push(recorded);
        this.index++;
        // A sleep already begun: past its wake time the code goes on; before it, sleep on.
        if (effect.kind === "sleep" && input.wakeClock !== undefined && !input.verify && (send as number) > input.wakeClock()) {
          return { type: "sleep", until: send as number, journal: this.records };
        }
        continue;
      }
      if (input.verify && fp !== input.verify.pending) {
        throw new DivergenceError(this.index, input.verify.pending, fp, "replayed, the code makes another effect than the round did at this position");
      }

      let text: string;
      switch (effect.kind) {
        case "step":
          if (input.onStep && this.records.length > this.saved) {
            this.saved = this.records.length;
            await input.onStep(this.records);
          }
          await input.beforeStep?.();
          text = recordable(await this.runStep(effect.name, effect.fn), `the value step("${effect.name}") returned`);
          break;
        case "attempt":
          if (input.onStep && this.records.length > this.saved) {
            this.saved = this.records.length;
            await input.onStep(this.records);
          }
          await input.beforeStep?.();
          text = recordable(await this.runAttempt(effect), `the value step("${effect.name}") returned`);
          break;
        case "sleep": {
          if (input.wakeClock === undefined)
            throw new AuthorCodeError(new Error('sleep() waits only inside a task (a foreground call has no place to wait): call runAsTask() before it, or make the tool task: "required"'));
          const wake = effect.until ?? input.wakeClock() + effect.ms!;
          this.records.push([fp, encodeValue(wake)]);
          this.index++;
          if (wake > input.wakeClock()) return { type: "sleep", until: wake, journal: this.records };
          send = undefined;
          continue;
        }
        case "progress":
          await input.onProgress?.(effect.message, effect.done, effect.total);
          text = "1";
          break;
        case "signal": {
          if (input.signalFor === undefined)
            throw new AuthorCodeError(new Error('waitForSignal() waits only inside a task (a foreground call has no place to wait): call runAsTask() before it, or make the tool task: "required"'));
          const ordinal = this.ordinalOf(fp);
          const got = input.signalFor(effect.name, ordinal);
          if (got === undefined) return { type: "wait", name: effect.name, ordinal, timeoutMs: effect.timeoutMs, journal: this.records, rejected: false };
          if ("timeout" in got) {
            text = encodeValue({ status: "timeout" });
            break;
          }
          const parsed = effect.schema.safeParse(got.value);
          if (!parsed.success) {
            input.onSignal?.(effect.name, ordinal, { ok: false, message: describeZodError(parsed.error, "the signal's value") });
            return { type: "wait", name: effect.name, ordinal, timeoutMs: effect.timeoutMs, journal: this.records, rejected: true };
          }
          input.onSignal?.(effect.name, ordinal, { ok: true });
          text = recordable({ status: "received", value: parsed.data }, `the value of signal "${effect.name}"`);
          break;
        }
        case "now":
          text = encodeValue(input.clock());
          break;
        case "uuid":
          text = encodeValue(input.randomUUID());
          break;
        case "task": {
          const mode = input.task ?? "foreground";
          text = mode === "foreground" ? "0" : "1";
          if (mode === "become") {
            this.records.push([fp, text]);
            this.index++;
            return { type: "task", journal: this.records, message: effect.message, suspended: { generator, records: this.records, send: true, asks: this.asks } };
          }
          break;
        }
        case "all": {
          const result = this.collect(effect, key!, fp, generator);
          if (result.type !== "done") return result;
          text = result.text;
          break;
        }
        default: {
          const got = this.answerFor(key!, effect, fp);
          if (!got) return this.askFor([[key!, effect]], { [key!]: fp }, undefined, { effect, key, fp }, generator);
          text = got.text;
        }
      }
      this.records.push([fp, text]);
      this.index++;
      if ((effect.kind === "step" || effect.kind === "attempt") && input.onStep) {
        this.saved = this.records.length;
        await input.onStep(this.records);
      }
      send = decodeOutcome(effect, text);
    }
  }

  private startGenerator(): RunGenerator<unknown> {
    let generator: RunGenerator<unknown>;
    try {
      generator = this.input.start();
    } catch (error) {
      throw new AuthorCodeError(error);
    }
    if (typeof generator?.next !== "function") throw new AuthorCodeError(new TypeError("run must be a generator function (function* or async function*)"));
    return generator;
  }

  /**
   * The generator's next effect; author failures and divergences found inside it kept apart.
   * Synchronous for a sync generator (no await per replayed effect), a promise for an async one.
   */
  private advance(generator: RunGenerator<unknown>, send: unknown): IteratorResult<Effect, unknown> | Promise<IteratorResult<Effect, unknown>> {
    let step: IteratorResult<Effect, unknown> | Promise<IteratorResult<Effect, unknown>>;
    try {
      step = generator.next(send);
    } catch (error) {
      throw this.authorFailure(error);
    }
    if (isThenable(step)) {
      return Promise.resolve(step).then(
        (next) => this.checkNext(next),
        (error: unknown) => {
          throw this.authorFailure(error);
        },
      );
    }
    return this.checkNext(step);
  }

  private authorFailure(error: unknown): Error {
    return this.diverged ?? new AuthorCodeError(error);
  }

  private checkNext(next: IteratorResult<Effect, unknown>): IteratorResult<Effect, unknown> {
    // Author code may have caught the divergence ctx.can threw; it still ends the round.
    if (this.diverged) throw this.diverged;
    if (!next.done && !isEffect(next.value)) {
      const v = next.value as unknown;
      throw new AuthorCodeError(
        new TypeError(`run yielded ${typeof v === "object" ? JSON.stringify(v)?.slice(0, 80) : String(v)}, which is not an effect: use yield* with elicit, sample, listRoots, step, now, uuid or all`),
      );
    }
    return next;
  }

  private async runStep(name: string, fn: (signal: AbortSignal) => unknown): Promise<unknown> {
    this.inStep = true;
    const startedAt = Date.now();
    const started = performance.now();
    let ok = false;
    enterStep();
    try {
      const value = fn(this.input.signal());
      const result = isThenable(value) ? await value : value;
      ok = true;
      return result;
    } catch (error) {
      throw new AuthorCodeError(error);
    } finally {
      leaveStep();
      this.inStep = false;
      this.stepsRun.push({ name, startedAt, ms: performance.now() - started, ok });
    }
  }

  /**
   * One attempt of a retrying step: its value, or its failure as it will be recorded (name,
   * message, and whether it may be retried — decided here, on the real error). A step stopped
   * because the run was cancelled or lost its task is no failed attempt: that ends the round.
   */
  private async runAttempt(effect: AttemptEffect): Promise<AttemptOutcome> {
    try {
      return { ok: await this.runStep(effect.name, (signal) => effect.fn(signal, effect.attempt)) };
    } catch (error) {
      if (!(error instanceof AuthorCodeError) || this.input.signal().aborted) throw error;
      const cause = error.cause as { name?: unknown; message?: unknown } | undefined;
      let retry: boolean;
      try {
        retry = effect.retryable(cause) === true;
      } catch {
        retry = false; // a retryIf that throws is no permission to retry
      }
      return { failed: { name: typeof cause?.name === "string" ? cause.name : "Error", message: typeof cause?.message === "string" ? cause.message : String(cause), retry } };
    }
  }

  /** How many records of this fingerprint the round holds so far: which wait on a signal name this is. */
  private ordinalOf(fp: string): number {
    let n = 0;
    for (const [f] of this.records) if (f === fp) n++;
    return n;
  }

  /** `ctx.signalToken(name)`: the token of the next wait on `name` in this call (a task's). */
  signalToken(name: string): string {
    if (this.input.signalToken === undefined) throw new Error("ctx.signalToken()/signalUrl() work only inside a task (signals reach tasks)");
    return this.input.signalToken(name, this.ordinalOf(`W${name}`));
  }

  /** `ctx.signalUrl(name)`: where to POST the value for the next wait on `name`. */
  signalUrl(name: string): string {
    const token = this.signalToken(name);
    if (this.input.signalUrl === undefined) throw new Error("ctx.signalUrl() needs the server's signal URL: createRuntime({ signals: { baseUrl } })");
    return this.input.signalUrl(token);
  }

  private keyOf(effect: Effect): string | undefined {
    // The commonest effect first: an elicitation would pass every case below to reach `default`.
    if (effect.kind === "elicit") return effect.key ?? defaultKey("elicit", this.asks++);
    switch (effect.kind) {
      case "step":
      case "now":
      case "uuid":
      case "task":
      case "patch":
      case "sleep":
      case "attempt":
      case "progress":
      case "signal":
        return undefined;
      case "all":
        return defaultKey("all", this.asks++);
      default:
        return effect.key ?? defaultKey(effect.kind, this.asks++);
    }
  }

  /**
   * A usable answer to `effect` under `key` from this request, as value text. An answer reaches
   * an ask only if the ask was sent under that key last round (or the ask opted in with
   * `acceptUnasked`); an answer given for a different ask under the same key is a divergence.
   */
  private answerFor(key: string, effect: AskEffect, fp: string): { text: string } | undefined {
    const { responses, outstanding } = this.input;
    if (this.consumed?.has(key) === true || !responses.has(key)) return undefined;
    const asked = outstanding?.[key];
    if (asked === undefined) {
      if (!effect.acceptUnasked) return undefined;
    } else if (asked !== fp) {
      const change = describeAskChange(asked, fp, effect, key);
      throw new DivergenceError(
        this.index,
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
      (this.refused ??= new Map()).set(key, check.problem);
      return undefined;
    }
    (this.consumed ??= new Set()).add(key);
    // Encoded once: what is recorded of an elicitation is its accepted content (a path in the
    // error is then within the content), of any other ask the whole answer.
    const what = effect.kind === "elicit" ? `the accepted content of ask "${key}" (after the answer schema)` : `the answer to ask "${key}"`;
    return { text: recordable(check.value, what, (value) => encodeOutcome(effect, value)) };
  }

  /** An `all(...)`: every answer present → the combined value's text; otherwise ask the missing. */
  private collect(effect: AllEffect, key: string, fp: string, generator: RunGenerator<unknown>): { type: "done"; text: string } | RoundOutcome {
    const subs = subAsks(effect, key);
    if (new Set(subs.map(([k]) => k)).size !== subs.length) throw new AuthorCodeError(new TypeError(`all(): two asks share a key (${subs.map(([k]) => k).join(", ")})`));
    const texts: Record<string, string> = {};
    const missing: Array<[string, AskEffect]> = [];
    const fps: Record<string, string> = {};
    const { outstanding, partial } = this.input;
    for (const [k, ask] of subs) {
      const subFp = fingerprintOf(ask, k);
      fps[k] = subFp;
      // An answer kept from an earlier round.
      const kept = outstanding?.[k] === subFp && Object.hasOwn(partial, k) ? partial[k] : undefined;
      const text = kept ?? this.answerFor(k, ask, subFp)?.text;
      if (text !== undefined) texts[k] = text;
      else missing.push([k, ask]);
    }
    if (missing.length > 0) return this.askFor(missing, fps, texts, { effect, key, fp }, generator);
    const value = Array.isArray(effect.asks) ? subs.map(([k, ask]) => decodeOutcome(ask, texts[k]!)) : Object.fromEntries(subs.map(([k, ask, slot]) => [slot, decodeOutcome(ask, texts[k]!)]));
    return { type: "done", text: encodeValue(value) };
  }

  /** End the round asking for `asks` (after checking this request declared what they need). */
  private askFor(
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
      if (!this.input.declared(needed) && !missing.includes(needed)) missing.push(needed);
      inputRequests[k] = requestOf(a) as InputRequest;
      const problem = a.kind === "elicit" ? this.refused?.get(k) : undefined;
      if (problem !== undefined) (refused ??= {})[k] = problem;
    }
    if (missing.length > 0) throw new MissingCapabilityError(missing, this.input.undeclared === true);
    return {
      type: "input_required",
      inputRequests,
      journal: this.records,
      outstanding,
      partial: partial && Object.keys(partial).length > 0 ? partial : undefined,
      refused,
      suspended: { generator, records: this.records, pending, asks: this.asks },
    };
  }
}
