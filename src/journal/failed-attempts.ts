import { LETTER } from "../authoring/effect-kinds.js";
import { decodeValue } from "../state/index.js";
import { fingerprintOf } from "./fingerprint.js";
import type { JournalRecord } from "./records.js";

/**
 * `journal` without the failed attempts of the retrying `step` it ends with: what a held task's
 * retry replays, so the step starts over at attempt 1 (under the same `ctx.idempotencyKey`)
 * while everything before it — completed steps, answers, signals — replays as recorded.
 *
 * A retrying step records each attempt (`R<name>`: `{ ok }` or `{ failed }`) and a sleep (`Z`)
 * between two; the journal of a task whose step ran out ends `R Z R ... R` (or with a last
 * `Z` whose attempt failed before it was saved). Only failed attempts are cut: a completed call
 * of the same step just before them stays. A journal that does not end so comes back as it is.
 */
export function withoutFailedAttempts(journal: readonly JournalRecord[], step: string): JournalRecord[] {
  const attempt = fingerprintOf({ kind: "attempt", name: step, attempt: 1, fn: () => undefined, retryable: () => true }, undefined);
  const sleep = LETTER.sleep;
  const failed = (i: number) => journal[i]?.[0] === attempt && isFailure(journal[i]![1]);
  let end = journal.length;
  if (journal[end - 1]?.[0] === sleep && failed(end - 2)) end--;
  while (failed(end - 1)) {
    end--;
    if (journal[end - 1]?.[0] === sleep && failed(end - 2)) end--;
  }
  return journal.slice(0, end);
}

function isFailure(text: string): boolean {
  try {
    const value = decodeValue(text);
    return typeof value === "object" && value !== null && "failed" in value;
  } catch {
    return false;
  }
}
