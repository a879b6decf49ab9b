import { askByLetter, LETTER, RACE_END_LETTER } from "../authoring/effect-kinds.js";
import type { TaskDetail } from "../tasks/admin/admin.js";

// A task's journal as a timeline: each record with what kind of event it is, when it was
// written, and for a step (or one attempt of it) about how long it ran — from the event before
// it (the record before, the wake of a sleep, the task's start) to its own record.

/** What one journal record was. */
export type TimelineKind = "step" | "attempt" | "ask" | "sleep" | "signal" | "progress" | "race" | "other";

/** One event of a task's timeline. */
export interface TimelineEntry {
  index: number;
  kind: TimelineKind;
  effect: string;
  value: string;
  /** When its record was written (absent for records from a version that did not keep times). */
  at?: string;
  /** A step's or an attempt's run time, about: from the event before it to its record. */
  tookMs?: number;
}

function kindOf(fingerprint: string): TimelineKind {
  const letter = fingerprint[0];
  if (letter === LETTER.step) return "step";
  if (letter === LETTER.attempt) return "attempt";
  if (letter === LETTER.sleep) return "sleep";
  if (letter === LETTER.signal) return "signal";
  if (letter === LETTER.progress) return "progress";
  if (letter === LETTER.race || letter === RACE_END_LETTER) return "race";
  if (letter !== undefined && askByLetter.has(letter)) return "ask";
  return "other";
}

/** The timeline of a task as `TaskAdmin.show` describes it. */
export function timelineOf(task: Pick<TaskDetail, "journal" | "createdAt" | "retriedAt">): TimelineEntry[] {
  let before = Date.parse(task.createdAt);
  const retried = task.retriedAt === undefined ? Number.NaN : Date.parse(task.retriedAt);
  return task.journal.map((record) => {
    const kind = kindOf(record.fingerprint);
    const at = record.at === undefined ? undefined : Date.parse(record.at);
    const entry: TimelineEntry = { index: record.index, kind, effect: record.effect, value: record.value, ...(record.at !== undefined ? { at: record.at } : {}) };
    // Time held for an operator is not the step's: a retried step starts at the retry.
    if (at !== undefined && retried < at && retried > before) before = retried;
    if (at !== undefined && (kind === "step" || kind === "attempt")) entry.tookMs = Math.max(0, at - before);
    // A sleep's next event starts at its wake time, not when it fell asleep.
    const woke = kind === "sleep" ? Date.parse(record.value.replace(/^until /, "")) : Number.NaN;
    before = Number.isFinite(woke) ? Math.max(woke, at ?? woke) : (at ?? before);
    return entry;
  });
}
