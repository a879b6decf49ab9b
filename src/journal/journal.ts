// journal/journal.ts owns the journal's format: records, fingerprints, outcomes, and the words
// for them in divergence messages. It knows nothing of requests, stores or generators.
//
// Invariants:
// 1. A fingerprint letter, once written into tokens, never changes meaning (older tokens must
//    still replay); letters come from authoring/effect-kinds.ts.
// 2. A value is recorded as text (state/value-text.ts) and decoded fresh on every read.
// 3. A round appends lines; it never rewrites the lines a token already carries.

import { askByLetter, capabilityLetter, EFFECT_KINDS } from "../authoring/effect-kinds.js";
import { canonicalJson, decodeValue, encodeValue, shortDigest } from "../state/index.js";
import { isDeepFrozen, jsonText, quoteJson } from "../state/json-text.js";
import type { Capability } from "../wire/index.js";
import { ownString } from "../util/own-string.js";
import type { AskEffect, Effect } from "../authoring/effects.js";

/**
 * The journal is what a call has done so far: one record per completed effect (and per
 * `ctx.can` answer), in order, each `[fingerprint, value text]`. In a token (format 2) it
 * travels as text — one line per record, `fingerprint TAB value` — after the state's header,
 * so a round appends its new lines instead of serializing the whole journal again, and nothing
 * is escaped twice. Fingerprints are short: an ask's is a kind letter and 64 bits of SHA-256 of
 * what the code asked, in three parts (key, text, rest) so a divergence can say which changed;
 * inside an authenticated token they guard against accidents, not forgery.
 */
export type JournalRecord = [fingerprint: string, value: string];

/** The state's header (sealed as the token's data), the journal itself going in the body. */
export interface StateHeader {
  /** The definition's `version` when the state was minted. */
  v?: string | undefined;
  /** Rounds completed so far (the server-side round cap counts these). */
  r: number;
  /** A random id for the whole call, the root of `ctx.idempotencyKey`. */
  c: string;
  /** Outstanding asks of the last round: key → fingerprint. */
  o: Record<string, string>;
  /** Valid answers already collected for a partly answered `all(...)`: key → value text. */
  p?: Record<string, string> | undefined;
}

/** A journal as the runtime holds it: the header, the records, and their text. */
export interface StatePayload extends StateHeader {
  j: JournalRecord[];
  /** The records as lines, kept so the next seal only appends. */
  text: string;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
function isStringMap(v: unknown): v is Record<string, string> {
  if (!isRecord(v)) return false;
  for (const key in v) if (Object.prototype.hasOwnProperty.call(v, key) && typeof v[key] !== "string") return false;
  return true;
}

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

/**
 * The header as the JSON text `JSON.stringify(header)` makes (members r, c, o, v, p in the order
 * the runtime builds them; a map's members in its own order), or `undefined` when a member is not
 * of its type — then the caller stringifies the whole. Sealed every round: written here, it
 * needs neither the walk that proves arbitrary data plain nor a nested stringify.
 */
export function headerJson(header: StateHeader): string | undefined {
  const { r, c, o, v, p } = header;
  if (!Number.isSafeInteger(r) || typeof c !== "string" || (v !== undefined && typeof v !== "string")) return undefined;
  const outstanding = stringMapJson(o);
  const partial = p === undefined ? "" : stringMapJson(p);
  if (outstanding === undefined || partial === undefined) return undefined;
  return `{"r":${r},"c":${quoteJson(c)},"o":${outstanding}${v === undefined ? "" : `,"v":${quoteJson(v)}`}${p === undefined ? "" : `,"p":${partial}`}}`;
}

/** A map of strings as JSON text, or `undefined` for anything else (another prototype, a member not a string). */
function stringMapJson(map: Record<string, string>): string | undefined {
  if (typeof map !== "object" || map === null || Object.getPrototypeOf(map) !== Object.prototype) return undefined;
  let text = "";
  for (const key in map) {
    if (!Object.prototype.hasOwnProperty.call(map, key)) continue;
    const value: unknown = map[key];
    if (typeof value !== "string") return undefined;
    text += `${text === "" ? "{" : ","}${quoteJson(key)}:${quoteJson(value)}`;
  }
  return text === "" ? "{}" : `${text}}`;
}

/** A payload from its parts (built property by property: object spread is slow on this hot path). */
export function payloadFrom(header: StateHeader, j: JournalRecord[], text: string): StatePayload {
  const payload: StatePayload = { r: header.r, c: header.c, o: header.o, j, text };
  if (header.v !== undefined) payload.v = header.v;
  if (header.p !== undefined) payload.p = header.p;
  return payload;
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

/**
 * `jsonText(inputRequests)` — the text `JSON.stringify` makes — for a round's asks, with a plain
 * form elicitation (what `requestOf` makes of `elicit(message, schema)`: `{ method, params: {
 * mode: "form", message, requestedSchema } }`, members in that order, the schema deep-frozen)
 * written from its parts: the method and the members' names are constants, the schema's text is
 * made once. Asks of any other kind or shape send the whole to `jsonText`. Every round
 * that keeps its response writes this; the general walk of one such ask measured ≈ 1 µs.
 */
export function inputRequestsJson(inputRequests: Record<string, unknown>): string | undefined {
  if (Object.getPrototypeOf(inputRequests) !== Object.prototype || typeof (inputRequests as { toJSON?: unknown }).toJSON === "function") return jsonText(inputRequests);
  let text = "";
  for (const key in inputRequests) {
    if (!Object.prototype.hasOwnProperty.call(inputRequests, key)) continue;
    const part = formRequestJson(inputRequests[key]);
    // Any other ask: the whole text from jsonText (a member's toJSON is then called with its key).
    if (part === undefined) return jsonText(inputRequests);
    text += `${text === "" ? "{" : ","}${quoteJson(key)}:${part}`;
  }
  return text === "" ? "{}" : `${text}}`;
}

const FORM_HEAD = '{"method":"elicitation/create","params":{"mode":"form","message":';

/** The text of a plain form elicitation request (see `inputRequestsJson`), or `undefined`. */
function formRequestJson(request: unknown): string | undefined {
  if (typeof request !== "object" || request === null || Object.getPrototypeOf(request) !== Object.prototype) return undefined;
  const { method, params } = request as { method?: unknown; params?: unknown };
  if (method !== "elicitation/create" || typeof params !== "object" || params === null || Object.getPrototypeOf(params) !== Object.prototype) return undefined;
  if (!membersAre(request, REQUEST_MEMBERS) || !membersAre(params, FORM_MEMBERS)) return undefined;
  const { mode, message, requestedSchema } = params as { mode?: unknown; message?: unknown; requestedSchema?: unknown };
  if (mode !== "form" || typeof message !== "string" || typeof requestedSchema !== "object" || requestedSchema === null || !isDeepFrozen(requestedSchema)) return undefined;
  const schema = jsonText(requestedSchema);
  return schema === undefined ? undefined : `${FORM_HEAD}${quoteJson(message)},"requestedSchema":${schema}}}`;
}

const REQUEST_MEMBERS = ["method", "params"] as const;
const FORM_MEMBERS = ["mode", "message", "requestedSchema"] as const;

/** Whether `value`'s own enumerable members are exactly `names`, in that order (as JSON.stringify lists them), with no toJSON. */
function membersAre(value: object, names: readonly string[]): boolean {
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") return false;
  let i = 0;
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
    if (key !== names[i]) return false;
    i++;
  }
  return i === names.length;
}

/** 48 bits of SHA-256, base64url (8 characters): step names with tabs or newlines, and `all(...)`. */
const hash8 = (text: string) => shortDigest(text, 6);

// Fingerprints of asks, cached: the text hashed is the kind, the key and the canonical request.
// An elicitation's schema object is the same frozen object every round, so (schema, key,
// message) finds it without canonical JSON — in nested maps, so no key string is built per
// lookup; other asks are found by their canonical text.
const byFormSchema = new WeakMap<object, Map<string, Map<string, string>>>();
const byText = new Map<string, string>();
const TEXT_CACHE = 4096;
const PER_KEY = 256;
const PER_SCHEMA = 1024;

/** A fingerprint made from a plain form ask: the key and message it was made from. */
interface KnownForm {
  readonly key: string;
  readonly message: string;
  readonly fp: string;
}

/**
 * The last fingerprints made from one schema object: by key, and by ordinal for default keys
 * (`elicit-<n>`). A replayed ask is recognised by identity of schema, its key, the recorded
 * fingerprint, and the message compared — no hashing. A default key is found by its ordinal in
 * an array (the same key string every round, compared by identity): a Map lookup per replayed
 * ask was ≈ 30 ns of them, 465 per stateless call at R = 30.
 */
interface SchemaForms {
  readonly byKey: Map<string, KnownForm>;
  readonly byOrdinal: Array<KnownForm | undefined>;
}
const lastForm = new WeakMap<object, SchemaForms>();
/**
 * The schema `lastForm` was last read for, and its forms: a replay asks from the same schema
 * ask after ask, and comparing one reference costs less than a WeakMap lookup (which hashes
 * the object's identity) on every replayed ask. Holds one schema and its forms strongly.
 */
let lastSchema: object | undefined;
let lastSchemaForms: SchemaForms | undefined;

/** `lastForm`'s forms for `schema`, made if `create` and absent. */
function formsOf(schema: object, create: boolean): SchemaForms | undefined {
  if (schema === lastSchema) return lastSchemaForms;
  let forms = lastForm.get(schema);
  if (forms === undefined) {
    if (!create) return undefined;
    lastForm.set(schema, (forms = { byKey: new Map(), byOrdinal: [] }));
  }
  lastSchema = schema;
  lastSchemaForms = forms;
  return forms;
}

/** A plain form ask (mode, message, schema and nothing else): the only kind the caches hold. */
function isPlainForm(effect: AskEffect): effect is AskEffect & { kind: "elicit" } {
  if (effect.kind !== "elicit" || effect.params.mode !== "form") return false;
  // Counted without Object.keys (no array per replayed ask): mode, message, requestedSchema.
  // Object.prototype.hasOwnProperty.call in a for-in over the same object, not Object.hasOwn:
  // V8 compiles that pattern to a check of the object's shape (≈ 3× faster for three members
  // here); Object.hasOwn, or the method through an imported binding, stays a call.
  let members = 0;
  for (const key in effect.params) if (Object.prototype.hasOwnProperty.call(effect.params, key)) members++;
  return members === 3;
}

/**
 * Whether `fresh` (the author's message, made again on every replay) is the text `known`. Not
 * `===`: a message built by a template literal is a rope (cons string) in V8, and `===` on a
 * rope and a flat string goes through a runtime call that flattens the rope — on Node 20 that
 * compare was 7 % of a stateless call at R = 30 (465 replayed asks: skipping it, only to
 * measure, made the call 0.926× as costly). `indexOf` at 0 with equal lengths is the same
 * test and reads a rope more cheaply (paired fresh processes: 0.974×, 6 of 6 sets below 1).
 */
const sameText = (fresh: unknown, known: string): boolean => typeof fresh === "string" && fresh.length === known.length && fresh.indexOf(known) === 0;

function askFingerprint(effect: AskEffect, key: string, recorded: string | undefined, ordinal: number): string {
  if (!isPlainForm(effect)) return hashedAsk(effect, key);
  const { message, requestedSchema } = effect.params;
  // The fingerprint last made from this very schema object, key and message — the message
  // compared, not hashed (it is usually a fresh template string); replaying, only if it is the
  // one recorded here (otherwise the full lookup below makes the fingerprint to compare).
  const forms = formsOf(requestedSchema, false);
  if (ordinal >= KEPT_DEFAULT_KEYS) ordinal = -1; // defaultKey makes a fresh string past these
  const known = forms === undefined ? undefined : ordinal >= 0 ? forms.byOrdinal[ordinal] : forms.byKey.get(key);
  if (known !== undefined && known.key === key && sameText(message, known.message) && (recorded === undefined || known.fp === recorded)) return known.fp;
  let forSchema = byFormSchema.get(requestedSchema);
  if (forSchema === undefined) byFormSchema.set(requestedSchema, (forSchema = new Map()));
  // The author's strings are kept as copies (ownString): a message sliced from a large text
  // would otherwise keep that text alive as long as the cache holds it.
  let forKey = forSchema.get(key);
  if (forKey === undefined) {
    if (forSchema.size >= PER_SCHEMA) forSchema.clear();
    forSchema.set(ownString(key), (forKey = new Map()));
  }
  let fp = forKey.get(message);
  if (fp === undefined) {
    fp = hashedAsk(effect, key);
    if (forKey.size >= PER_KEY) forKey.clear();
    forKey.set(ownString(message), fp);
  }
  const last = formsOf(requestedSchema, true)!;
  if (last.byKey.size >= PER_SCHEMA && !last.byKey.has(key)) {
    last.byKey.clear();
    last.byOrdinal.length = 0;
  }
  // A default key is our own string (defaultKey's), kept as it is: found by identity next round.
  const form: KnownForm = { key: ordinal >= 0 ? key : ownString(key), message: ownString(message), fp };
  last.byKey.set(form.key, form);
  if (ordinal >= 0) last.byOrdinal[ordinal] = form;
  return fp;
}

/** The two parts of an ask's request its fingerprint hashes apart: the text a person reads, and the rest. */
function askParts(effect: AskEffect): [text: string, rest: string] {
  switch (effect.kind) {
    case "elicit":
    case "elicitUrl": {
      const { message, ...rest } = effect.params;
      return [message, canonicalJson(rest)];
    }
    case "sample": {
      const { messages, ...rest } = effect.params;
      return [canonicalJson(messages), canonicalJson(rest)];
    }
    case "roots":
      return ["", ""];
  }
}

/**
 * An ask's fingerprint: its kind letter, then 16 bits of SHA-256 of its key, 24 of its text
 * (message, or a sampling request's messages) and 24 of the rest of its request (schema, URL,
 * sampling options). Hashed apart, so a divergence can say which part changed.
 */
function hashedAsk(effect: AskEffect, key: string): string {
  const text = `${effect.kind}\0${key}\0${canonicalJson(requestOf(effect))}`;
  let fp = byText.get(text);
  if (fp === undefined) {
    const [words, rest] = askParts(effect);
    if (byText.size >= TEXT_CACHE) byText.clear();
    byText.set(ownString(text), (fp = EFFECT_KINDS[effect.kind].letter + shortDigest(key, 2) + shortDigest(words, 3) + shortDigest(rest, 3)));
  }
  return fp;
}

/** Where each part sits in an ask fingerprint (after the kind letter). */
const ASK_FP_LENGTH = 12;
const PART_AT = { key: [1, 4], text: [4, 8], rest: [8, 12] } as const;
const PART_WORDS: Record<string, { text: string; rest: string }> = {
  e: { text: "message text", rest: "requested schema" },
  u: { text: "message text", rest: "URL" },
  s: { text: "messages", rest: "sampling parameters (system prompt, max tokens, model preferences, ...)" },
  r: { text: "request", rest: "request" },
};

/** Which parts of an ask differ between a recorded and a current fingerprint. */
export type AskPart = "kind" | "key" | "text" | "rest";

/**
 * What changed between the ask a journal recorded and the one the code makes now, in words,
 * and which parts; `undefined` when the recorded record is not an ask of this format. The
 * journal keeps hashes, not the old values: the current ones are shown.
 */
export function describeAskChange(recorded: string, current: string, effect: Effect, key: string | undefined): { words: string; parts: AskPart[] } | undefined {
  const askLetters = "eusr";
  if (recorded.length !== ASK_FP_LENGTH || current.length !== ASK_FP_LENGTH || !askLetters.includes(recorded[0]!) || !askLetters.includes(current[0]!)) return undefined;
  const now = `${KIND_NAME(current[0])} under key "${key}"`;
  if (recorded[0] !== current[0]) return { words: `the journal recorded ${KIND_NAME(recorded[0])} here and the code now makes ${now}`, parts: ["kind"] };
  const differs = (part: keyof typeof PART_AT) => recorded.slice(...PART_AT[part]) !== current.slice(...PART_AT[part]);
  const parts = (["key", "text", "rest"] as const).filter(differs);
  if (parts.length === 0) return undefined;
  const words = PART_WORDS[current[0]!]!;
  const shown =
    effect.kind === "elicit" || effect.kind === "elicitUrl"
      ? ` (it is now ${JSON.stringify(effect.params.message.length > 80 ? `${effect.params.message.slice(0, 80)}…` : effect.params.message)})`
      : "";
  const named = parts.map((p) => (p === "key" ? "its key" : p === "text" ? `its ${words.text}${shown}` : `its ${words.rest}`));
  return { words: `${now}: ${named.join(" and ")} changed since the journal was recorded`, parts };
}

/**
 * What the code does at a position, short: `S<step name>`, `N` (now), `U` (uuid), `T`
 * (runAsTask), `P<id>` (patched), `Z` (sleep), `R<step name>` (an attempt of a retrying step),
 * `G` (progress), `W<name>` (waitForSignal), or a kind letter and a hash of the ask (its key and request), e.g. `eAbCdEfGh`.
 * `recorded` (the journal's fingerprint at this position) and `ordinal` (the ask's ordinal when
 * `key` is its default key, else -1) only find a cached fingerprint faster; neither changes it.
 */
export function fingerprintOf(effect: Effect, key: string | undefined, recorded?: string, ordinal = -1): string {
  // The commonest effect first: an elicitation would pass every case below to reach `default`.
  if (effect.kind === "elicit") return askFingerprint(effect, key!, recorded, ordinal);
  switch (effect.kind) {
    case "step":
      return /[\t\n\r]/.test(effect.name) ? `S#${hash8(effect.name)}` : `S${effect.name}`;
    case "now":
      return "N";
    case "uuid":
      return "U";
    case "task":
      return "T";
    case "patch":
      return `P${effect.id}`;
    case "sleep":
      return "Z";
    case "attempt":
      return /[\t\n\r]/.test(effect.name) ? `R#${hash8(effect.name)}` : `R${effect.name}`;
    case "progress":
      return "G";
    case "signal":
      return `W${effect.name}`;
    case "all": {
      const parts = Array.isArray(effect.asks)
        ? (effect.asks as readonly AskEffect[]).map((a, i) => fingerprintOf(a, subKey(key!, a, i)))
        : Object.entries(effect.asks).map(([name, a]) => `${name}=${fingerprintOf(a, subKey(key!, a, name))}`);
      return `a${hash8(`${key}\0${parts.join("\0")}`)}`;
    }
    default:
      return askFingerprint(effect, key!, recorded, -1);
  }
}

/** The fingerprint of a `ctx.can(kind)` answer. */
export const canFingerprint = (kind: Capability): string => `C${capabilityLetter[kind]}`;

/** How an effect's value is recorded: an elicitation as `a<content>`, `d` or `c`; `runAsTask` as `1`/`0`; others as their value. */
export function encodeOutcome(effect: Effect, value: unknown): string {
  if (effect.kind === "task" || effect.kind === "patch") return value === true ? "1" : "0";
  if (effect.kind === "elicit" || effect.kind === "elicitUrl") {
    const { action, content } = value as { action: string; content?: unknown };
    return action === "accept" ? (effect.kind === "elicit" ? `a${encodeValue(content)}` : "a") : action === "decline" ? "d" : "c";
  }
  return encodeValue(value);
}

/** The value an `encodeOutcome` text stands for (a fresh one each time). */
export function decodeOutcome(effect: Effect, text: string): unknown {
  if (effect.kind === "task" || effect.kind === "patch") return text === "1";
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
  // The same strings every round (a replay derives one per replayed ask): made once, then reused.
  const made = (DEFAULT_KEYS[kind] ??= []);
  return made[ordinal] ?? (ordinal < KEPT_DEFAULT_KEYS ? (made[ordinal] = `${kind}-${ordinal}`) : `${kind}-${ordinal}`);
}
/** How many default keys of each kind are made once and reused (the same string object each round). */
const KEPT_DEFAULT_KEYS = 1024;
const DEFAULT_KEYS: Partial<Record<AskEffect["kind"] | "all", string[]>> = {};

const KIND_NAME = (letter: string | undefined): string | undefined => askByLetter.get(letter ?? "")?.helper;

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
      return `${KIND_NAME(fp[0]) ?? "an effect"} (fingerprint ${fp})`;
  }
}
