import { canonicalJson, decodeValue, encodeValue, shortDigest } from "../state/index.js";
import type { Capability } from "../wire/index.js";
import type { AskEffect, Effect } from "./effects.js";

/**
 * The journal is what a call has done so far: one record per completed effect (and per
 * `ctx.can` answer), in order, each `[fingerprint, value text]`. In a token (format 2) it
 * travels as text — one line per record, `fingerprint TAB value` — after the state's header,
 * so a round appends its new lines instead of serializing the whole journal again, and nothing
 * is escaped twice. Fingerprints are short: a kind letter and 48 bits of SHA-256 of what the
 * code asked (inside an authenticated token they guard against accidents, not forgery).
 */
export type JournalRecord = [fingerprint: string, value: string];

/** The state's header (sealed as the token's data), the journal itself going in the body. */
export interface StateHeader {
  /** The definition's `version` when the state was minted. */
  v?: string;
  /** Rounds completed so far (the server-side round cap counts these). */
  r: number;
  /** A random id for the whole call, the root of `ctx.idempotencyKey`. */
  c: string;
  /** Outstanding asks of the last round: key → fingerprint. */
  o: Record<string, string>;
  /** Valid answers already collected for a partly answered `all(...)`: key → value text. */
  p?: Record<string, string>;
}

/** A journal as the runtime holds it: the header, the records, and their text (format 2). */
export interface StatePayload extends StateHeader {
  j: JournalRecord[];
  /** The records as lines (format 2), kept so the next seal only appends. */
  text: string;
  /** The record format the journal came in: 1 for tokens minted before the line format. */
  format: 1 | 2;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isStringMap = (v: unknown): v is Record<string, string> => isRecord(v) && Object.values(v).every((x) => typeof x === "string");

/** The header out of verified data, checked by hand (no schema library on the hot path); `undefined` if it is not one. */
export function parseHeader(data: unknown): StateHeader | undefined {
  if (!isRecord(data)) return undefined;
  const { v, r, c, o, p } = data;
  if ((v !== undefined && typeof v !== "string") || !Number.isSafeInteger(r) || (r as number) < 0 || typeof c !== "string" || !isStringMap(o) || (p !== undefined && !isStringMap(p))) return undefined;
  const header: StateHeader = { r: r as number, c, o };
  if (v !== undefined) header.v = v;
  if (p !== undefined) header.p = p;
  return header;
}

/** Records as lines. */
export function recordLines(records: readonly JournalRecord[], from = 0): string {
  let text = "";
  for (let i = from; i < records.length; i++) text += `${records[i]![0]}\t${records[i]![1]}\n`;
  return text;
}

/** Lines back into records; `undefined` for text that is not a journal. */
export function parseLines(text: string): JournalRecord[] | undefined {
  const records: JournalRecord[] = [];
  let at = 0;
  while (at < text.length) {
    const end = text.indexOf("\n", at);
    const tab = text.indexOf("\t", at);
    if (end === -1 || tab === -1 || tab > end) return undefined;
    records.push([text.slice(at, tab), text.slice(tab + 1, end)]);
    at = end + 1;
  }
  return records;
}

/** The wire request an ask turns into (the part its fingerprint covers). */
export function requestOf(effect: AskEffect): { method: string; params?: Record<string, unknown> } {
  switch (effect.kind) {
    case "elicit":
    case "elicitUrl":
      return { method: "elicitation/create", params: effect.params };
    case "sample":
      return { method: "sampling/createMessage", params: effect.params };
    case "roots":
      return { method: "roots/list" };
  }
}

const ASK_LETTER: Record<AskEffect["kind"] | "all", string> = { elicit: "e", elicitUrl: "u", sample: "s", roots: "r", all: "a" };
const CAN_LETTER: Record<Capability, string> = { elicitation: "e", "elicitation.url": "u", sampling: "s", roots: "r" };

/** 48 bits of SHA-256, base64url (8 characters). */
const hash8 = (text: string) => shortDigest(text, 6);

// Fingerprints of asks, cached: the text hashed is the kind, the key and the canonical request.
// An elicitation's schema object is the same frozen object every round, so (schema, key,
// message) finds it without canonical JSON; other asks are found by their canonical text.
const byFormSchema = new WeakMap<object, Map<string, string>>();
const byText = new Map<string, string>();
const TEXT_CACHE = 4096;

function askFingerprint(effect: AskEffect, key: string): string {
  if (effect.kind === "elicit") {
    let forSchema = byFormSchema.get(effect.params.requestedSchema);
    if (forSchema === undefined) byFormSchema.set(effect.params.requestedSchema, (forSchema = new Map()));
    const id = `${key}\0${effect.params.message}`;
    let fp = forSchema.get(id);
    if (fp === undefined && effect.params.mode === "form" && Object.keys(effect.params).length === 3) forSchema.set(id, (fp = hashedAsk(effect, key)));
    return fp ?? hashedAsk(effect, key);
  }
  return hashedAsk(effect, key);
}

function hashedAsk(effect: AskEffect, key: string): string {
  const text = `${effect.kind}\0${key}\0${canonicalJson(requestOf(effect))}`;
  let fp = byText.get(text);
  if (fp === undefined) {
    if (byText.size >= TEXT_CACHE) byText.clear();
    byText.set(text, (fp = ASK_LETTER[effect.kind] + hash8(text)));
  }
  return fp;
}

/**
 * What the code does at a position, short: `S<step name>`, `N` (now), `U` (uuid), `T`
 * (runAsTask), or a kind letter and a hash of the ask (its key and request), e.g. `eAbCdEfGh`.
 */
export function fingerprintOf(effect: Effect, key: string | undefined): string {
  switch (effect.kind) {
    case "step":
      return /[\t\n\r]/.test(effect.name) ? `S#${hash8(effect.name)}` : `S${effect.name}`;
    case "now":
      return "N";
    case "uuid":
      return "U";
    case "task":
      return "T";
    case "all": {
      const parts = Array.isArray(effect.asks)
        ? (effect.asks as readonly AskEffect[]).map((a, i) => fingerprintOf(a, subKey(key!, a, i)))
        : Object.entries(effect.asks).map(([name, a]) => `${name}=${fingerprintOf(a, subKey(key!, a, name))}`);
      return `a${hash8(`${key}\0${parts.join("\0")}`)}`;
    }
    default:
      return askFingerprint(effect, key!);
  }
}

/** The fingerprint of a `ctx.can(kind)` answer. */
export const canFingerprint = (kind: Capability): string => `C${CAN_LETTER[kind]}`;

/** How an effect's value is recorded: an elicitation as `a<content>`, `d` or `c`; `runAsTask` as `1`/`0`; others as their value. */
export function encodeOutcome(effect: Effect, value: unknown): string {
  if (effect.kind === "task") return value === true ? "1" : "0";
  if (effect.kind === "elicit" || effect.kind === "elicitUrl") {
    const { action, content } = value as { action: string; content?: unknown };
    return action === "accept" ? (effect.kind === "elicit" ? `a${encodeValue(content)}` : "a") : action === "decline" ? "d" : "c";
  }
  return encodeValue(value);
}

/** The value an `encodeOutcome` text stands for (a fresh one each time). */
export function decodeOutcome(effect: Effect, text: string): unknown {
  if (effect.kind === "task") return text === "1";
  if (effect.kind === "elicit" || effect.kind === "elicitUrl") {
    if (text[0] === "a") return effect.kind === "elicit" ? { action: "accept", content: decodeValue(text.slice(1)) } : { action: "accept" };
    return { action: text === "d" ? "decline" : "cancel" };
  }
  return decodeValue(text);
}

/** The key of a sub-ask of `all(...)`: its explicit key, or the all's key plus its index or name. */
export function subKey(allKey: string, ask: AskEffect, indexOrName: number | string): string {
  return ask.key ?? `${allKey}.${indexOrName}`;
}

/**
 * The default key of the call's `ordinal`-th ask (counting asks and `all`s only, from 0), so
 * adding a step, a `now()` or a `ctx.can` renames no key.
 */
export function defaultKey(kind: AskEffect["kind"] | "all", ordinal: number): string {
  return `${kind}-${ordinal}`;
}

const KIND_NAME: Record<string, string> = { e: "elicit", u: "elicitUrl", s: "sample", r: "roots", a: "all(...)" };
const CAPABILITY_NAME: Record<string, string> = { e: "elicitation", u: "elicitation.url", s: "sampling", r: "roots" };

/** A short human description of a fingerprint (either format) for divergence messages. */
export function describeFingerprint(fp: string | undefined): string {
  if (fp === undefined) return "nothing (the call had ended here)";
  if (fp.includes(":") || fp === "now" || fp === "uuid" || fp === "task") return describeV1(fp);
  switch (fp[0]) {
    case "S":
      return fp.startsWith("S#") ? "a step (its name hashed)" : `step("${fp.slice(1)}")`;
    case "N":
      return "now()";
    case "U":
      return "uuid()";
    case "T":
      return "runAsTask()";
    case "C":
      return `ctx.can("${CAPABILITY_NAME[fp[1]!] ?? "?"}")`;
    default:
      return `${KIND_NAME[fp[0]!] ?? "an effect"} (fingerprint ${fp})`;
  }
}

/** Format-1 fingerprints: `kind:key:digest`, `step:name`, `can:kind`, `now`, `uuid`, `task`. */
function describeV1(fp: string): string {
  const [kind, name] = fp.split(":");
  switch (kind) {
    case "step":
      return `step("${name}")`;
    case "now":
    case "uuid":
      return `${kind}()`;
    case "task":
      return "runAsTask()";
    case "can":
      return `ctx.can("${name}")`;
    default:
      return `${kind} under key "${name}" (request digest ${fp.split(":")[2] ?? "?"})`;
  }
}
