// journal/describe.ts owns the words for fingerprints in divergence messages and the inspector.

import { askByLetter } from "../authoring/effect-kinds.js";

/** The helper an ask fingerprint's kind letter stands for (`elicit`, `sample`, …). */
export const kindName = (letter: string | undefined): string | undefined => askByLetter.get(letter ?? "")?.helper;

/** A short human description of a fingerprint for divergence messages. */
export function describeFingerprint(fp: string | undefined): string {
  if (fp === undefined) return "nothing (the call had ended here)";
  switch (fp[0]) {
    case "S":
      return fp.startsWith("S#") ? "a step (its name hashed)" : `step("${fp.slice(1)}")`;
    case "N":
      return "now()";
    case "U":
      return "uuid()";
    case "T":
      return "runAsTask()";
    case "P":
      return `patched("${fp.slice(1)}")`;
    case "Z":
      return "sleep()";
    case "R":
      return fp.startsWith("R#") ? "an attempt of a retrying step (its name hashed)" : `an attempt of step("${fp.slice(1)}")`;
    case "G":
      return "progress()";
    case "W":
      return `waitForSignal("${fp.slice(1)}")`;
    case "C":
      return `ctx.can("${askByLetter.get(fp[1]!)?.capability ?? "?"}")`;
    default:
      return `${kindName(fp[0]) ?? "an effect"} (fingerprint ${fp})`;
  }
}
