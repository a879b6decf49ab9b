import type { ParallelEffect } from "../../authoring/effects.js";
import { fingerprintOf } from "../../journal/journal.js";
import { decodeValue } from "../../state/index.js";
import { DivergenceError } from "../errors.js";
import { recordable } from "./asks.js";
import { runStep } from "./steps.js";
import type { RoundCore } from "./types.js";

// replay/round/parallel.ts owns `all(...)` over steps in a round: the steps run at the same time
// (at most `concurrency`), and their results are recorded as if they had run one after the
// other, in the order given — one step record each, the journal of the sequential code — so a
// replay matches them by position and a round that stopped part-way runs only the rest.
//
// Invariants:
// 1. A step whose record is in the journal never runs again.
// 2. Records go in the order given, each as soon as every step before it is recorded; each is
//    saved as a lone step's would be.
// 3. Once a step has thrown, nothing more is recorded or saved: the round ends with that failure.

/** The value `all(...)` over steps gives the code: the steps' values by slot. */
export async function runParallel(round: RoundCore, effect: ParallelEffect): Promise<unknown> {
  const { input } = round;
  const { journal } = input;
  const { steps } = effect;
  const texts: string[] = [];
  // The steps the journal holds: replayed in order.
  while (texts.length < steps.length && round.index < journal.length) {
    const fp = fingerprintOf(steps[texts.length]!.effect, undefined);
    const recorded = journal[round.index]!;
    if (recorded[0] !== fp) throw new DivergenceError(round.index, recorded[0], fp);
    texts.push(recorded[1]);
    round.records.push(recorded);
    round.index++;
  }
  if (texts.length < steps.length) {
    if (input.verify) throw new DivergenceError(round.index, input.verify.pending, fingerprintOf(steps[texts.length]!.effect, undefined), "replayed, the code runs steps the round did not");
    await runRest(round, effect, texts);
  }
  const values = steps.map((_, i) => decodeValue(texts[i]!));
  return effect.array ? values : Object.fromEntries(steps.map((s, i) => [s.slot, values[i]]));
}

/** Run the steps from `texts.length` on, `concurrency` at a time, recording each in order. */
async function runRest(round: RoundCore, effect: ParallelEffect, texts: string[]): Promise<void> {
  const { steps, concurrency } = effect;
  const outer = round.input.signal();
  const all = new AbortController();
  const stopAll = () => all.abort(outer.reason);
  outer.addEventListener("abort", stopAll, { once: true });
  const done = new Map<number, string>();
  let failure: { error: unknown } | undefined;
  const fail = (error: unknown) => {
    failure ??= { error };
    all.abort(new Error("all(): another step failed"));
  };
  // Saves (before a step starts, after results are recorded) one at a time, in order; a save
  // that fails ends the round as a failing step does.
  let saves: Promise<void> = Promise.resolve();
  const serially = (save: () => Promise<void>): Promise<void> => (saves = saves.then(() => (failure === undefined ? save() : undefined)).catch(fail));
  const recordReady = async () => {
    let recorded = false;
    while (failure === undefined && done.has(texts.length)) {
      const i = texts.length;
      const text = done.get(i)!;
      done.delete(i);
      texts.push(text);
      round.records.push([fingerprintOf(steps[i]!.effect, undefined), text]);
      round.index++;
      recorded = true;
    }
    if (recorded) await round.stepRecorded();
  };
  try {
    const running = new Set<Promise<void>>();
    for (let i = texts.length; i < steps.length && failure === undefined; i++) {
      while (running.size >= concurrency) await Promise.race(running);
      if (failure !== undefined) break;
      await serially(() => round.beforeStep());
      if (failure !== undefined) break;
      const step = steps[i]!.effect;
      const run: Promise<void> = runStep(round, step.name, step.fn, all.signal)
        .then((value) => {
          if (failure !== undefined) return;
          done.set(i, recordable(value, `the value step("${step.name}") returned`));
          return serially(recordReady);
        })
        .catch(fail)
        .finally(() => running.delete(run));
      running.add(run);
    }
    while (running.size > 0) await Promise.race(running);
    await saves;
    if (failure !== undefined) throw failure.error;
  } finally {
    outer.removeEventListener("abort", stopAll);
  }
}
