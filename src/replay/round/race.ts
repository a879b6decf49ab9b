import type { RunGenerator } from "../../authoring/definitions.js";
import type { AskEffect, RaceBranch, RaceEffect } from "../../authoring/effects.js";
import { branchKey, decodeOutcome, raceFingerprints, waitsOn } from "../../journal/journal.js";
import { decodeValue, encodeValue } from "../../state/index.js";
import { describeZodError } from "../../wire/index.js";
import { AuthorCodeError, DivergenceError } from "../errors.js";
import { answerFor, askFor, recordable } from "./asks.js";
import { runStep } from "./steps.js";
import type { RaceWait, RaceWaiting, RoundCore, RoundOutcome } from "./types.js";

// replay/round/race.ts owns `race(...)` in a round: its two records (where it began, with the
// wake times of its timers; which branch won, with that branch's value), the decision on what is
// ready, running its steps against its timers, and the round's end while nothing is.
//
// Invariants:
// 1. A recorded winner is replayed, never decided again; a branch that lost never runs again.
// 2. A timer's wake time is fixed where the race begins (recorded), as `sleep` fixes its own.
// 3. What is ready wins in a fixed order — values (answers, signals) in branch order, then the
//    timer that ended first, then the first step to return — so one state decides one winner.

/** The begin record's value: each timer's wake time (store clock), by branch name. */
type Wakes = Record<string, number>;

const needsTask = () =>
  new AuthorCodeError(new Error('race() over sleep or waitForSignal waits only inside a task (a foreground call has no place to wait): call runAsTask() before it, or make the tool task: "required"'));

/** The race's timers, fixed now: each sleep's wake time, each wait's timeout. */
function wakeTimes(round: RoundCore, effect: RaceEffect): Wakes {
  const wakes: Wakes = {};
  for (const { name, effect: e } of effect.branches) {
    if (e.kind !== "sleep" && e.kind !== "signal") continue;
    const clock = round.input.wakeClock;
    if (clock === undefined || (e.kind === "signal" && round.input.signalFor === undefined)) throw needsTask();
    if (e.kind === "sleep") wakes[name] = e.until ?? clock() + e.ms!;
    else if (e.timeoutMs !== undefined) wakes[name] = clock() + e.timeoutMs;
  }
  return wakes;
}

/** What the race gives the code: which branch won, and what that branch's helper returns for its value. */
function finish(effect: RaceEffect, winner: RaceBranch, text: string): { winner: string; value: unknown } {
  let next: IteratorResult<unknown, unknown>;
  try {
    next = winner.helper.next(decodeOutcome(winner.effect, text));
  } catch (error) {
    throw new AuthorCodeError(error);
  }
  if (next.done !== true) throw new AuthorCodeError(new TypeError(`race(): branch "${winner.name}" made more than one effect; a branch is one wait, sleep, ask or step`));
  // The losers' helpers are closed (a `finally` in one runs now, once).
  for (const b of effect.branches) if (b !== winner) b.helper.return(undefined);
  return { winner: winner.name, value: next.value };
}

/**
 * A race at the round's position: replayed from its records, or decided now — a winner
 * recorded and what it gives the code (`send`), or the round's end waiting for one.
 */
export async function runRace(round: RoundCore, effect: RaceEffect, key: string, begun: string | undefined, generator: RunGenerator<unknown>): Promise<{ send: unknown } | RoundOutcome> {
  const { input } = round;
  const { journal } = input;
  const fps = raceFingerprints(effect, key);
  let wakesText = begun;
  if (wakesText === undefined) {
    if (round.index < journal.length) {
      const [fp, text] = journal[round.index]!;
      if (fp !== fps.begin) throw new DivergenceError(round.index, fp, fps.begin);
      wakesText = text;
      round.records.push(journal[round.index]!);
    } else {
      if (input.verify) throw new DivergenceError(round.index, input.verify.pending, fps.begin, "replayed, the code begins a race the round did not");
      wakesText = encodeValue(wakeTimes(round, effect));
      round.records.push([fps.begin, wakesText]);
    }
    round.index++;
  }
  const wakes = decodeValue(wakesText) as Wakes;

  if (round.index < journal.length) {
    const [fp, text] = journal[round.index]!;
    if (fp !== fps.end) throw new DivergenceError(round.index, fp, fps.end);
    const [name, value] = decodeValue(text) as [string, string];
    const winner = effect.branches.find((b) => b.name === name);
    if (winner === undefined) throw new DivergenceError(round.index, fp, fps.end, `the journal recorded race branch "${name}" winning, and the race has no such branch now`);
    round.records.push(journal[round.index]!);
    round.index++;
    return { send: finish(effect, winner, value) };
  }
  if (input.verify && fps.end !== input.verify.pending)
    throw new DivergenceError(round.index, input.verify.pending, fps.end, "replayed, the code makes another effect than the round did at this position");

  const decided = readyValue(round, effect, key, fps.branches) ?? firstTimer(round, effect, wakes);
  const waiting: RaceWaiting = { signals: signalWaits(round, effect), until: earliest(wakes), refusals: round.raceRefusals ?? [] };
  round.raceRefusals = undefined;
  let won = decided;
  if (won === undefined && effect.branches.some((b) => b.effect.kind === "step")) {
    if (input.verify) throw new DivergenceError(round.index, input.verify.pending, fps.end, "replayed, the code runs a race's steps where the round asked");
    won = await raceSteps(round, effect, wakes);
  }
  if (won === undefined) {
    const asks: Array<[string, AskEffect]> = [];
    const outstanding: Record<string, string> = {};
    effect.branches.forEach((b, i) => {
      const k = branchKey(key, b);
      if (k === undefined) return;
      asks.push([k, b.effect as AskEffect]);
      outstanding[k] = fps.branches[i]!;
    });
    if (asks.length === 0) return { type: "race", journal: round.records, ...waiting };
    const outcome = askFor(round, asks, outstanding, undefined, { effect, key, fp: fps.end, begun: wakesText }, generator);
    // In the foreground a race has only asks (and steps): nothing more to wait for.
    return outcome.type === "input_required" && input.wakeClock !== undefined ? { ...outcome, race: waiting } : outcome;
  }
  // Values that came for the race's other waits lost: their senders hear so.
  for (const { effect: e } of effect.branches) {
    if (e.kind !== "signal" || e === won.branch.effect) continue;
    const ordinal = waitsOn(round.records, e.name);
    const got = input.signalFor?.(e.name, ordinal);
    if (got !== undefined && "value" in got) input.onSignal?.(e.name, ordinal, { ok: false, message: "another branch of the race won", lost: true });
  }
  round.records.push([fps.end, encodeValue([won.branch.name, won.text])]);
  round.index++;
  if (won.branch.effect.kind === "step") await round.stepRecorded();
  return { send: finish(effect, won.branch, won.text) };
}

type Won = { branch: RaceBranch; text: string };

/** An answer or a signal's value that has come for a branch (in branch order), as recorded text. */
function readyValue(round: RoundCore, effect: RaceEffect, key: string, fps: string[]): Won | undefined {
  const { input } = round;
  for (const [i, branch] of effect.branches.entries()) {
    const e = branch.effect;
    if (e.kind === "signal") {
      const ordinal = waitsOn(round.records, e.name);
      const got = input.signalFor?.(e.name, ordinal);
      if (got === undefined || !("value" in got)) continue;
      const parsed = e.schema.safeParse(got.value);
      if (!parsed.success) {
        const message = describeZodError(parsed.error, "the signal's value");
        input.onSignal?.(e.name, ordinal, { ok: false, message });
        (round.raceRefusals ??= []).push({ name: e.name, ordinal, message });
        continue;
      }
      input.onSignal?.(e.name, ordinal, { ok: true });
      return { branch, text: recordable({ status: "received", value: parsed.data }, `the value of signal "${e.name}"`) };
    }
    if (e.kind === "step" || e.kind === "sleep") continue;
    const got = answerFor(round, branchKey(key, branch)!, e, fps[i]!);
    if (got !== undefined) return { branch, text: got.text };
  }
  return undefined;
}

/** The timer that ended first (ties: in branch order), now that no value has come. */
function firstTimer(round: RoundCore, effect: RaceEffect, wakes: Wakes): Won | undefined {
  const clock = round.input.wakeClock;
  return clock === undefined ? undefined : earliestTimer(effect, wakes, clock());
}

/** The timer branch with the earliest wake time at or before `by` (ties: in branch order). */
function earliestTimer(effect: RaceEffect, wakes: Wakes, by: number): Won | undefined {
  let first: RaceBranch | undefined;
  for (const b of effect.branches) {
    const at = wakes[b.name];
    if (at !== undefined && at <= by && (first === undefined || at < wakes[first.name]!)) first = b;
  }
  if (first === undefined) return undefined;
  return { branch: first, text: first.effect.kind === "sleep" ? encodeValue(wakes[first.name]) : encodeValue({ status: "timeout" }) };
}

const earliest = (wakes: Wakes): number | undefined => {
  const times = Object.values(wakes);
  return times.length === 0 ? undefined : Math.min(...times);
};

/** The waits of the race's signal branches (each the next wait on its name). */
function signalWaits(round: RoundCore, effect: RaceEffect): RaceWait[] {
  const waits: RaceWait[] = [];
  for (const { effect: e } of effect.branches) if (e.kind === "signal") waits.push({ name: e.name, ordinal: waitsOn(round.records, e.name) });
  return waits;
}

/**
 * The race's steps run at once; the first to return wins, unless the first timer ends before
 * (`until`, wake clock). The others are aborted through their signal; their results are not
 * recorded. A step that throws first fails the call, as it would alone.
 */
async function raceSteps(round: RoundCore, effect: RaceEffect, wakes: Wakes): Promise<Won | undefined> {
  const until = earliest(wakes);
  await round.beforeStep();
  const outer = round.input.signal();
  const losers = new AbortController();
  const stopAll = () => losers.abort(outer.reason);
  outer.addEventListener("abort", stopAll, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const entrants: Array<Promise<Won | undefined>> = effect.branches
      .filter((b) => b.effect.kind === "step")
      .map((branch) => {
        const e = branch.effect as Extract<RaceBranch["effect"], { kind: "step" }>;
        return runStep(round, e.name, e.fn, losers.signal).then((value) => ({ branch, text: recordable(value, `the value step("${e.name}") returned`) }));
      });
    // A loser's late failure is nobody's: the race has its winner.
    for (const p of entrants) p.catch(() => {});
    const clock = round.input.wakeClock;
    if (until !== undefined && clock !== undefined) entrants.push(new Promise((resolve) => (timer = setTimeout(() => resolve(undefined), Math.max(0, until - clock())))));
    const won = await Promise.race(entrants);
    // The timer ended first: its branch wins (a timer may fire a moment before the wake clock
    // reads its time, so not compared with the clock again).
    return won ?? earliestTimer(effect, wakes, Number.POSITIVE_INFINITY);
  } finally {
    clearTimeout(timer);
    outer.removeEventListener("abort", stopAll);
    losers.abort(new Error("race(): another branch won"));
  }
}
