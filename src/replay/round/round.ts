// replay/round/round.ts owns one round of one generator: replaying its journal, running what is new,
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

import { LETTER } from "../../authoring/effect-kinds.js";
import { encodeValue } from "../../state/index.js";
import { type Capability, describeZodError } from "../../wire/index.js";
import type { RunGenerator } from "../../authoring/definitions.js";
import { type Effect, isEffect } from "../../authoring/effects.js";
import { AuthorCodeError, CodeUnknownError, DivergenceError } from "../errors.js";
import type { RoundInput, RoundOutcome, StepRun, Suspended } from "./types.js";
export type { RoundInput, RoundOutcome, StepRun, Suspended, Traced } from "./types.js";
import { canFingerprint, decodeOutcome, describeAskChange, defaultKey, fingerprintOf, type JournalRecord, waitsOn } from "../../journal/journal.js";
import { answerFor, askFor, collect, recordable } from "./asks.js";
import { foregroundRetryDelay, isThenable, runAttempt, runStep } from "./steps.js";
import { runRace } from "./race.js";
import { runParallel } from "./parallel.js";

/** A divergence at a replayed record; for an ask, naming the part that changed. */
function diverged(index: number, recorded: string, current: string, effect: Effect, key: string | undefined): DivergenceError {
  const change = describeAskChange(recorded, current, effect, key);
  return change ? new DivergenceError(index, recorded, current, `at effect #${index}, ${change.words}`, change.parts) : new DivergenceError(index, recorded, current);
}

/**
 * A `waitForSignal()` past the journal's end: the value recorded for it (as text), or the round's
 * end waiting for it (none came yet, or its schema refused the one that came).
 */
function receiveSignal(round: Round, effect: Extract<Effect, { kind: "signal" }>): string | RoundOutcome {
  const { input } = round;
  if (input.signalFor === undefined)
    throw new AuthorCodeError(new Error('waitForSignal() waits only inside a task (a foreground call has no place to wait): call runAsTask() before it, or make the tool task: "required"'));
  const ordinal = waitsOn(round.records, effect.name);
  const got = input.signalFor(effect.name, ordinal);
  if (got === undefined) return { type: "wait", name: effect.name, ordinal, timeoutMs: effect.timeoutMs, journal: round.records, refusal: undefined };
  if ("timeout" in got) return encodeValue({ status: "timeout" });
  const parsed = effect.schema.safeParse(got.value);
  if (!parsed.success) {
    const refusal = describeZodError(parsed.error, "the signal's value");
    input.onSignal?.(effect.name, ordinal, { ok: false, message: refusal });
    return { type: "wait", name: effect.name, ordinal, timeoutMs: effect.timeoutMs, journal: round.records, refusal };
  }
  input.onSignal?.(effect.name, ordinal, { ok: true });
  return recordable({ status: "received", value: parsed.data }, `the value of signal "${effect.name}"`);
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
  /** @internal The position in the journal (the helpers in asks.ts read it). */
  index: number;
  /** @internal Asks made so far (default keys count them). */
  asks: number;
  /** @internal Set while a step body runs (steps.ts). */
  inStep = 0;
  // Made on first use: most rounds consume one answer and refuse none, and a Set and a Map per
  // request measured as a visible part of what a stateless round allocates.
  /** Keys whose answer this round already used: one answer serves one ask. */
  consumed: Set<string> | undefined;
  /** Answers of this request that were refused, by key: why (a re-ask's message says it). */
  refused: Map<string, string> | undefined;
  /** @internal Values a race's signal branches refused this round (race.ts). */
  raceRefusals: Array<{ name: string; ordinal: number; message: string }> | undefined;
  /** A divergence (or code this instance lacks) found inside author code (which might catch it): rethrown after `next()`. */
  private diverged: DivergenceError | CodeUnknownError | undefined;

  /** @internal `error`, remembered so author code that catches it cannot go on past it. */
  handBack(error: CodeUnknownError): CodeUnknownError {
    this.diverged = error;
    return error;
  }

  /** How many records `onStep` has been given (at first: those the round was handed, which are saved). */
  private saved: number;

  constructor(
    readonly input: RoundInput,
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
  /** @internal */
  readonly suspendedAt: number;

  /** `ctx.can(kind)`: the recorded answer at this position, or this request's, recorded. */
  can(kind: Capability): boolean {
    // Inside a step, the step's result is what gets recorded, not what it looked at.
    if (this.inStep > 0) return this.input.declared(kind);
    const fp = canFingerprint(kind);
    passRemovedPatches(this);
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
      let begun: string | undefined;
      if (pending) {
        ({ effect, key, fp, begun } = pending);
        pending = undefined;
      } else {
        const advanced = this.advance(generator, send);
        const next = isThenable(advanced) ? await advanced : advanced;
        if (next.done) {
          passRemovedPatches(this);
          if (this.index < journal.length) {
            throw new DivergenceError(this.index, journal[this.index]![0], undefined, `the journal recorded ${journal.length} effects but the code now completes after ${this.index}`);
          }
          if (input.verify?.pending !== undefined) throw new DivergenceError(this.index, input.verify.pending, undefined, "the round asked for input here, but replayed the code completes");
          return { type: "complete", value: next.value, journal: this.records };
        }
        effect = next.value;
        key = keyOf(this, effect);
        // The recorded fingerprint is a hint: an ask made from the same schema, key and message is recognised without hashing.
        passRemovedPatches(this, effect.kind === "patch" ? LETTER.patch + effect.id : undefined);
        // A form elicitation under its default key passes its ordinal: its cached fingerprint is found by it.
        fp = fingerprintOf(effect, key, journal[this.index]?.[0], effect.kind === "elicit" && effect.key === undefined ? this.asks - 1 : -1);
        input.trace?.set(this.index, { effect, key });
      }
      if (effect.kind === "patch") {
        send = patchValue(this, fp);
        continue;
      }
      // Effects of several records: each replays (or records) its own.
      if (effect.kind === "race") {
        const raced = await runRace(this, effect, key!, begun, generator);
        if ("type" in raced) return raced;
        send = raced.send;
        continue;
      }
      if (effect.kind === "parallel") {
        send = await runParallel(this, effect);
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
        case "attempt":
          await this.beforeStep();
          text = recordable(effect.kind === "step" ? await runStep(this, effect.name, effect.fn) : await runAttempt(this, effect), `the value step("${effect.name}") returned`);
          break;
        case "sleep": {
          if (input.wakeClock === undefined) {
            // A foreground call: a retrying step's short delays are waited out here; nothing else.
            this.records.push([fp, encodeValue(await foregroundRetryDelay(this, effect))]);
            this.index++;
            send = undefined;
            continue;
          }
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
          const got = receiveSignal(this, effect);
          if (typeof got !== "string") return got;
          text = got;
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
          const result = collect(this, effect, key!, fp, generator);
          if (result.type !== "done") return result;
          text = result.text;
          break;
        }
        default: {
          const got = answerFor(this, key!, effect, fp);
          if (!got) return askFor(this, [[key!, effect]], { [key!]: fp }, undefined, { effect, key, fp }, generator);
          text = got.text;
        }
      }
      this.records.push([fp, text]);
      this.index++;
      if (effect.kind === "step" || effect.kind === "attempt") await this.stepRecorded();
      send = decodeOutcome(effect, text);
    }
  }

  /** @internal A step's result was recorded: saved now, unless saves wait for the round's next one. */
  async stepRecorded(): Promise<void> {
    const { input } = this;
    if (input.onStep === undefined || input.deferStepSaves) return;
    this.saved = this.records.length;
    await input.onStep(this.records);
  }

  /** @internal Before a step body runs: what the round recorded so far is handed on (saved), then the host's check. */
  async beforeStep(): Promise<void> {
    const { input } = this;
    if (input.onStep && this.records.length > this.saved) {
      this.saved = this.records.length;
      await input.onStep(this.records);
    }
    await input.beforeStep?.();
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

  /** `ctx.signalToken(name)`: the token of the next wait on `name` in this call (a task's). */
  signalToken(name: string): string {
    if (this.input.signalToken === undefined) throw new Error("ctx.signalToken()/signalUrl() work only inside a task (signals reach tasks)");
    return this.input.signalToken(name, waitsOn(this.records, name));
  }

  /** `ctx.signalUrl(name)`: where to POST the value for the next wait on `name`. */
  signalUrl(name: string): string {
    const token = this.signalToken(name);
    if (this.input.signalUrl === undefined) throw new Error("ctx.signalUrl() needs the server's signal URL: createRuntime({ signals: { baseUrl } })");
    return this.input.signalUrl(token);
  }
}

/**
 * Records of patches the code no longer makes (a `patched()` call deleted once no older call
 * was left) are passed over, kept as they are; `keep` is the patch the code makes now.
 */
function passRemovedPatches(round: Round, keep?: string): void {
  const { journal, removedPatches } = round.input;
  while (round.index < journal.length && journal[round.index]![0][0] === LETTER.patch && journal[round.index]![0] !== keep) {
    const id = journal[round.index]![0].slice(1);
    // A patch this code neither makes here nor removed: newer code recorded it (a deploy under way).
    if (removedPatches !== undefined && !removedPatches.includes(id)) throw round.handBack(new CodeUnknownError(`patch ${JSON.stringify(id)}`));
    round.records.push(journal[round.index]!);
    round.index++;
  }
}

/** `patched(id)`: recorded `true` (new code), `false` for a call recorded before the patch (nothing recorded). */
function patchValue(round: Round, fp: string): boolean {
  const { journal, outstanding } = round.input;
  const recorded = journal[round.index];
  if (recorded !== undefined && recorded[0] === fp) {
    round.records.push(recorded);
    round.index++;
    return true;
  }
  if (recorded !== undefined || (round.index === round.suspendedAt && outstanding !== undefined && Object.keys(outstanding).length > 0)) return false;
  if (round.input.verify) throw new DivergenceError(round.index, round.input.verify.pending, fp, "replayed, the code takes a patch the round did not record");
  round.records.push([fp, "1"]);
  round.index++;
  return true;
}

function keyOf(round: Round, effect: Effect): string | undefined {
  // The commonest effect first: an elicitation would pass every case below to reach `default`.
  if (effect.kind === "elicit") return effect.key ?? defaultKey("elicit", round.asks++);
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
    case "parallel":
      return undefined;
    case "all":
      return defaultKey("all", round.asks++);
    case "race":
      return defaultKey("race", round.asks++);
    default:
      return effect.key ?? defaultKey(effect.kind, round.asks++);
  }
}
