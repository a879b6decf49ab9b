import { ASK_KINDS, askByLetter, LETTER, RACE_END_LETTER } from "../authoring/effect-kinds.js";
import { decodeValue, encodeValue, type InspectedState, type StateCodec, StateError } from "../state/index.js";
import { describeFingerprint, type JournalRecord, parseHeader, parseLines } from "./journal.js";
import { isSpillRef } from "./spill-ref.js";

/** One journal record, described. */
export interface InspectedRecord {
  index: number;
  fingerprint: string;
  /** What the code did, e.g. `step("draft")`, `elicit (ask #0)`, `ctx.can("sampling")`. */
  effect: string;
  /** What was recorded, as display text (cut at 200 characters). */
  value: string;
}

/** What `inspectState` tells about a `requestState`. */
export interface StateReport {
  /** `y2e` or `y2s`. */
  version: string;
  keyId: string;
  issuedAt: string;
  expiresAt: string;
  expired: boolean;
  binding: { method: string; target: string; argumentsDigest: string; principalBound: boolean };
  /** Rounds completed when the state was minted. */
  round: number | undefined;
  callId: string | undefined;
  /** The definition's `version` the state was minted under. */
  definitionVersion: string | undefined;
  records: InspectedRecord[];
  /** Asks outstanding when the state was minted: key → what they are. */
  outstanding: Record<string, string>;
  /** Answers already collected for a partly answered `all(...)`: key → value. */
  partial: Record<string, string>;
  /** Set when the journal was spilled to the server's store (not in the token). */
  spilled?: { id: string; digest: string };
}

const MAX_SHOWN = 200;
const cut = (text: string) => (text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}…` : text);

/** A recorded value text for people: JSON as it is, a rich value (Date, Map, …) as its JSON part. */
function shownValue(text: string): string {
  if (text === "") return "undefined";
  if (!text.startsWith("~")) return cut(text);
  try {
    const rich = JSON.parse(text.slice(1)) as { j: unknown };
    return cut(`${JSON.stringify(rich.j)} (with Date/Map/Set/BigInt/undefined kept)`);
  } catch {
    return cut(text);
  }
}

/** A format-2 record: the effect in words (asks numbered as the default keys count them) and its value. */
function describeRecord(fp: string, value: string, asks: { n: number }): Pick<InspectedRecord, "effect" | "value"> {
  const letter = fp[0]!;
  if (letter === LETTER.can) return { effect: describeFingerprint(fp), value: value === "1" ? "true" : "false" };
  if (letter === LETTER.task) return { effect: "runAsTask()", value: value === "1" ? "true (became a task)" : "false" };
  if (letter === LETTER.patch) return { effect: describeFingerprint(fp), value: "true (the call takes the patched branch)" };
  if (letter === LETTER.step || letter === LETTER.now || letter === LETTER.uuid)
    return { effect: describeFingerprint(fp), value: letter === LETTER.now ? `${value} (${new Date(Number(value)).toISOString()})` : shownValue(value) };
  if (letter === LETTER.race) return { effect: `race() begins (race-${asks.n++})`, value: value === "{}" ? "no timers" : `timers ${raceTimers(value)}` };
  if (letter === LETTER.sleep) return { effect: "sleep()", value: `until ${isoOf(value)}` };
  if (letter === LETTER.attempt) return { effect: describeFingerprint(fp), value: attemptOutcome(value) };
  if (letter === LETTER.progress) return { effect: "progress()", value: "reported" };
  if (letter === LETTER.signal || letter === LETTER.parallel) return { effect: describeFingerprint(fp), value: shownValue(value) };
  if (letter === RACE_END_LETTER) return { effect: describeFingerprint(fp), value: raceWinner(value) };
  const effect = `${askByLetter.get(letter)?.helper ?? "an effect"} (ask #${asks.n++})`;
  if (letter === ASK_KINDS.elicit.letter || letter === ASK_KINDS.elicitUrl.letter) {
    const action = value[0] === "a" ? "accept" : value === "d" ? "decline" : "cancel";
    return { effect, value: letter === ASK_KINDS.elicit.letter && action === "accept" ? `accept ${shownValue(value.slice(1))}` : action };
  }
  return { effect, value: shownValue(value) };
}

/** A time recorded as ms since the epoch, as an ISO time (the text as it is when it is not one). */
function isoOf(text: string): string {
  const ms = Number(text);
  return Number.isFinite(ms) && text.trim() !== "" ? new Date(ms).toISOString() : shownValue(text);
}

/** A race's timers (branch → when it ends), their times as ISO times. */
function raceTimers(text: string): string {
  try {
    const timers = JSON.parse(text) as Record<string, unknown>;
    return cut(
      Object.entries(timers)
        .map(([branch, at]) => `${branch} at ${typeof at === "number" ? new Date(at).toISOString() : String(at)}`)
        .join(", "),
    );
  } catch {
    return shownValue(text);
  }
}

/** An attempt of a retrying step: its value, or how it failed. */
function attemptOutcome(text: string): string {
  try {
    const outcome = decodeValue(text) as { ok?: unknown; failed?: { name: string; message: string; retry: boolean } };
    if (outcome.failed !== undefined) return cut(`failed: ${outcome.failed.name}: ${outcome.failed.message}${outcome.failed.retry ? "" : " (not retried)"}`);
    return `ok ${shownValue(encodeValue(outcome.ok))}`;
  } catch {
    return shownValue(text);
  }
}

/** A race's end record's value: which branch won, and the value recorded for it. */
function raceWinner(value: string): string {
  try {
    const [name, text] = JSON.parse(value) as [unknown, unknown];
    if (typeof name === "string" && typeof text === "string") return `won by "${name}": ${shownValue(text)}`;
  } catch {}
  return shownValue(value);
}

/** A journal (format 2), record by record, in words: what `inspect` and `tasks show` print. */
export function describeJournal(records: readonly JournalRecord[]): InspectedRecord[] {
  const asks = { n: 0 };
  return records.map(([fp, value], index) => ({ index, fingerprint: fp, ...describeRecord(fp, value, asks) }));
}

/**
 * Verify a `requestState` with `codec` and tell what it holds: claims, binding, round, call id,
 * each journal record described, the outstanding asks and partial answers. Integrity is checked
 * (a token from another key ring, or altered, throws `StateError`); expiry and binding are
 * reported, not enforced. The journal keeps hashes of what was asked, so an ask is shown by
 * kind and order, not by its text.
 */
export function inspectState(codec: StateCodec, token: string): StateReport {
  const state: InspectedState<unknown> = codec.inspect(token);
  const report: StateReport = {
    version: token.slice(0, token.indexOf(".")),
    keyId: state.keyId,
    issuedAt: new Date(state.issuedAt).toISOString(),
    expiresAt: new Date(state.expiresAt).toISOString(),
    expired: state.expired,
    binding: { method: state.method, target: state.target, argumentsDigest: state.argumentsDigest, principalBound: state.principalBound },
    round: undefined,
    callId: undefined,
    definitionVersion: undefined,
    records: [],
    outstanding: {},
    partial: {},
  };
  if (isSpillRef(state.data)) report.spilled = { id: state.data.sp, digest: state.data.h };
  const header = parseHeader(state.data);
  const records = parseLines(state.body ?? "");
  if (header === undefined || records === undefined) throw new StateError("malformed", "requestState is authentic but holds no journal of this library");
  report.round = header.r;
  report.callId = header.c;
  report.definitionVersion = header.v;
  report.records = describeJournal(records);
  report.outstanding = Object.fromEntries(Object.entries(header.o).map(([key, fp]) => [key, describeFingerprint(fp)]));
  report.partial = Object.fromEntries(Object.entries(header.p ?? {}).map(([key, value]) => [key, shownValue(value)]));
  return report;
}

const ago = (ms: number) => {
  const s = Math.round(Math.abs(ms) / 1000);
  const text = s >= 3600 ? `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m` : s >= 60 ? `${Math.floor(s / 60)}m ${s % 60}s` : `${s}s`;
  return ms >= 0 ? `in ${text}` : `${text} ago`;
};

/**
 * A journal (`undefined`: not at hand, e.g. spilled) and the asks waited for, as terminal lines:
 * one printer for `inspect` (a token) and `tasks show` (a task record).
 */
export function formatJournal(records: readonly InspectedRecord[] | undefined, waitingFor: Readonly<Record<string, string>>): string[] {
  const lines: string[] = [];
  if (records !== undefined) {
    lines.push(`  journal   ${records.length} record${records.length === 1 ? "" : "s"}`);
    for (const r of records) lines.push(`    #${r.index} ${r.effect} → ${r.value}`);
  }
  const waiting = Object.entries(waitingFor);
  if (waiting.length > 0) lines.push("  waiting for", ...waiting.map(([key, what]) => `    ${key}: ${what}`));
  return lines;
}

/** The report as lines for a terminal. */
export function formatStateReport(report: StateReport, now = Date.now()): string[] {
  const lines = [
    `requestState ${report.version}, key ${report.keyId}: authentic${report.expired ? ", EXPIRED" : ""}`,
    `  issued    ${report.issuedAt}`,
    `  expires   ${report.expiresAt} (${ago(Date.parse(report.expiresAt) - now)})`,
    `  bound to  ${report.binding.method} ${JSON.stringify(report.binding.target)}, arguments sha256 ${report.binding.argumentsDigest}, principal ${report.binding.principalBound ? "bound (keyed hash)" : "none"}`,
  ];
  if (report.callId !== undefined)
    lines.push(
      `  call      ${report.callId}, ${report.round} round${report.round === 1 ? "" : "s"} done${report.definitionVersion !== undefined ? `, definition version ${JSON.stringify(report.definitionVersion)}` : ""}`,
    );
  if (report.spilled) lines.push(`  journal   spilled to the server's store (entry state:${report.spilled.id}, sha256 ${report.spilled.digest}); not in the token`);
  lines.push(...formatJournal(report.spilled ? undefined : report.records, report.outstanding));
  const partial = Object.entries(report.partial);
  if (partial.length > 0) {
    lines.push("  answers kept for a partly answered all(...)");
    for (const [key, value] of partial) lines.push(`    ${key}: ${value}`);
  }
  return lines;
}
