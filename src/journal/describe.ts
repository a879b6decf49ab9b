// journal/describe.ts owns the words for fingerprints in divergence messages and the inspector.

import { askByLetter, LETTER, RACE_END_LETTER } from "../authoring/effect-kinds.js";

/** The helper an ask fingerprint's kind letter stands for (`elicit`, `sample`, …). */
export const kindName = (letter: string | undefined): string | undefined => askByLetter.get(letter ?? "")?.helper;

/** A short human description of a fingerprint for divergence messages. */
export function describeFingerprint(fp: string | undefined): string {
  if (fp === undefined) return "nothing (the call had ended here)";
  switch (fp[0]) {
    case LETTER.step:
      return fp.startsWith(`${LETTER.step}#`) ? "a step (its name hashed)" : `step("${fp.slice(1)}")`;
    case LETTER.now:
      return "now()";
    case LETTER.uuid:
      return "uuid()";
    case LETTER.task:
      return "runAsTask()";
    case LETTER.patch:
      return `patched("${fp.slice(1)}")`;
    case LETTER.sleep:
      return "sleep()";
    case LETTER.attempt:
      return fp.startsWith(`${LETTER.attempt}#`) ? "an attempt of a retrying step (its name hashed)" : `an attempt of step("${fp.slice(1)}")`;
    case LETTER.progress:
      return "progress()";
    case LETTER.signal:
      return `waitForSignal("${fp.slice(1)}")`;
    case LETTER.race:
      return "race() (where it began)";
    case RACE_END_LETTER: {
      const waits = fp.split("/").slice(1);
      return `race() (its winner${waits.length > 0 ? `; waiting on ${waits.map((w) => `"${w}"`).join(", ")}` : ""})`;
    }
    case LETTER.parallel:
      return "all(...) over steps";
    case LETTER.can:
      return `ctx.can("${askByLetter.get(fp[1]!)?.capability ?? "?"}")`;
    default:
      return `${kindName(fp[0]) ?? "an effect"} (fingerprint ${fp})`;
  }
}
