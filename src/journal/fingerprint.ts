// journal/fingerprint.ts owns what identifies an effect in the journal: its fingerprint (kind
// letter, key or name, digest of the request in three parts), the caches that spare hashing a
// replayed ask, the keys asks go under, and the words for what changed between two fingerprints.
//
// Invariants:
// 1. A fingerprint letter, once written into tokens, never changes meaning (older tokens must
//    still replay); letters come from authoring/effect-kinds.ts.
// 2. A cache only finds a fingerprint faster: what it returns is what hashing would give.

import { capabilityLetter, EFFECT_KINDS, LETTER, RACE_END_LETTER } from "../authoring/effect-kinds.js";
import type { AskEffect, Effect, RaceBranch, RaceEffect } from "../authoring/effects.js";
import type { JournalRecord } from "./records.js";
import { canonicalJson, shortDigest } from "../state/index.js";
import { isDeepFrozen, jsonText, quoteJson } from "../state/json-text.js";
import type { Capability } from "../wire/index.js";
import { ownString } from "../util/own-string.js";
import { kindName } from "./describe.js";

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
let byFormSchema = new WeakMap<object, Map<string, Map<string, KnownForm>>>();
const byText = new Map<string, string>();
const TEXT_CACHE = 4096;
/**
 * Messages kept per (schema, key): one per call in flight that asks under the key with a message
 * of its own (an order's number in it, say). At 256, 300 calls in flight cleared each key's map
 * before its first message came round again, so every replayed ask was hashed; the characters
 * kept are bounded by `CACHE_CHARS` whatever this allows.
 */
const PER_KEY = 8192;
const PER_SCHEMA = 1024;
/**
 * Bounds in characters, so that no client fills an instance's memory through them: a message
 * that quotes a request's arguments is client text. A text longer than `MAX_CACHED_TEXT` is
 * hashed every time, never kept; and each cache family is dropped whole once the texts it kept
 * pass `CACHE_CHARS` (it fills again with what rounds ask). Measured by `test/journal/
 * fingerprint-cache.test.ts`: 300 first rounds quoting 1 MiB arguments keep none of them.
 */
const MAX_CACHED_TEXT = 4096;
const CACHE_CHARS = 4 * 1024 * 1024;
let textChars = 0;
let formChars = 0;

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
  /**
   * By fingerprint: a replayed ask is found by the fingerprint its journal recorded (a short
   * string), its key and message then compared — with many calls in flight, each key's last
   * form is another call's, and finding the form by its message hashed the message (≈ 130
   * characters, a fresh rope to flatten) for every replayed ask.
   */
  readonly byFp: Map<string, KnownForm>;
}
/** Forms kept by fingerprint per schema, at most (then that map is cleared whole; characters are bounded by `CACHE_CHARS`). */
const PER_SCHEMA_FPS = 65_536;
let lastForm = new WeakMap<object, SchemaForms>();
/**
 * The schema `lastForm` was last read for, and its forms: a replay asks from the same schema
 * ask after ask, and comparing one reference costs less than a WeakMap lookup (which hashes
 * the object's identity) on every replayed ask. Holds one schema and its forms strongly.
 */
let lastSchema: object | undefined;
let lastSchemaForms: SchemaForms | undefined;

/** Count `chars` more kept by the form caches; past their bound, drop them all. */
function chargeForms(chars: number): void {
  formChars += chars;
  if (formChars <= CACHE_CHARS) return;
  byFormSchema = new WeakMap();
  lastForm = new WeakMap();
  lastSchema = lastSchemaForms = undefined;
  formChars = chars;
}

/** `lastForm`'s forms for `schema`, made if `create` and absent. */
function formsOf(schema: object, create: boolean): SchemaForms | undefined {
  if (schema === lastSchema) return lastSchemaForms;
  let forms = lastForm.get(schema);
  if (forms === undefined) {
    if (!create) return undefined;
    lastForm.set(schema, (forms = { byKey: new Map(), byOrdinal: [], byFp: new Map() }));
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
  // Long texts are hashed each time, never kept (see MAX_CACHED_TEXT).
  if (typeof message !== "string" || message.length + key.length > MAX_CACHED_TEXT) return hashedAsk(effect, key);
  // The fingerprint last made from this very schema object, key and message — the message
  // compared, not hashed (it is usually a fresh template string); replaying, only if it is the
  // one recorded here (otherwise the full lookup below makes the fingerprint to compare).
  const forms = formsOf(requestedSchema, false);
  if (ordinal >= KEPT_DEFAULT_KEYS) ordinal = -1; // defaultKey makes a fresh string past these
  const known = forms === undefined ? undefined : ordinal >= 0 ? forms.byOrdinal[ordinal] : forms.byKey.get(key);
  // The recorded fingerprint compared first: with many calls in flight the last form is usually
  // another call's, told apart by 12 characters rather than its whole message.
  if (known !== undefined && (recorded === undefined || known.fp === recorded) && known.key === key && sameText(message, known.message)) return known.fp;
  if (recorded !== undefined && forms !== undefined) {
    const same = forms.byFp.get(recorded);
    if (same !== undefined && same.key === key && sameText(message, same.message)) return recorded;
  }
  let forSchema = byFormSchema.get(requestedSchema);
  if (forSchema === undefined) byFormSchema.set(requestedSchema, (forSchema = new Map()));
  // The author's strings are kept as copies (ownString): a message sliced from a large text
  // would otherwise keep that text alive as long as the cache holds it.
  let forKey = forSchema.get(key);
  if (forKey === undefined) {
    if (forSchema.size >= PER_SCHEMA) forSchema.clear();
    forSchema.set(ownString(key), (forKey = new Map()));
  }
  // The form found by its message, or made: one object per (schema, key, message), kept by both
  // caches (a hit here makes nothing new — with many calls in flight each key's last form changes
  // every request).
  let form = forKey.get(message);
  if (form === undefined) {
    // A default key is our own string (defaultKey's), kept as it is: found by identity next round.
    form = { key: ordinal >= 0 ? key : ownString(key), message: ownString(message), fp: formFingerprint(effect, key) };
    if (forKey.size >= PER_KEY) forKey.clear();
    forKey.set(form.message, form);
    // Charged twice its characters: the copies, and the form and map entries that hold them.
    chargeForms(2 * (key.length + message.length));
  }
  const last = formsOf(requestedSchema, true)!;
  if (last.byKey.size >= PER_SCHEMA && !last.byKey.has(key)) {
    last.byKey.clear();
    last.byOrdinal.length = 0;
  }
  last.byKey.set(form.key, form);
  if (ordinal >= 0) last.byOrdinal[ordinal] = form;
  if (last.byFp.size >= PER_SCHEMA_FPS) last.byFp.clear();
  last.byFp.set(form.fp, form);
  return form.fp;
}

/**
 * `hashedAsk` of a plain form ask (mode, message, deep-frozen schema), made from its three parts
 * apart: the key's digest (cached by key) and the schema's (by the schema object) are made once,
 * so a new message costs one hash of the message — not the canonical JSON of the whole request
 * (its schema) twice and three hashes. Not frozen (a schema object the author built by hand, which
 * could change between rounds): the whole of `hashedAsk`.
 */
function formFingerprint(effect: AskEffect & { kind: "elicit" }, key: string): string {
  const { message, requestedSchema } = effect.params;
  if (!isDeepFrozen(requestedSchema)) return hashedAsk(effect, key);
  let rest = restDigests.get(requestedSchema);
  if (rest === undefined) restDigests.set(requestedSchema, (rest = shortDigest(canonicalJson({ mode: "form", requestedSchema }), 3)));
  let keyPart = keyDigests.get(key);
  if (keyPart === undefined) {
    if (keyDigests.size >= KEY_DIGESTS) keyDigests.clear();
    keyDigests.set(ownString(key), (keyPart = shortDigest(key, 2)));
  }
  return LETTER.elicit + keyPart + shortDigest(message, 3) + rest;
}
/** A frozen form schema's part of its asks' fingerprints (`{ mode, requestedSchema }` hashed). */
const restDigests = new WeakMap<object, string>();
/** Ask keys' parts of their fingerprints; at most `KEY_DIGESTS` kept (keys are the author's, few). */
const keyDigests = new Map<string, string>();
const KEY_DIGESTS = 4096;

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
    fp = EFFECT_KINDS[effect.kind].letter + shortDigest(key, 2) + shortDigest(words, 3) + shortDigest(rest, 3);
    // Long texts are not kept; the cache is dropped at its count or character bound.
    if (text.length > MAX_CACHED_TEXT) return fp;
    if (byText.size >= TEXT_CACHE || textChars + text.length > CACHE_CHARS) {
      byText.clear();
      textChars = 0;
    }
    byText.set(ownString(text), fp);
    textChars += text.length;
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
  const now = `${kindName(current[0])} under key "${key}"`;
  if (recorded[0] !== current[0]) return { words: `the journal recorded ${kindName(recorded[0])} here and the code now makes ${now}`, parts: ["kind"] };
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
      return /[\t\n\r]/.test(effect.name) ? `${LETTER.step}#${hash8(effect.name)}` : LETTER.step + effect.name;
    case "now":
      return LETTER.now;
    case "uuid":
      return LETTER.uuid;
    case "task":
      return LETTER.task;
    case "patch":
      return LETTER.patch + effect.id;
    case "sleep":
      return LETTER.sleep;
    case "attempt":
      return /[\t\n\r]/.test(effect.name) ? `${LETTER.attempt}#${hash8(effect.name)}` : LETTER.attempt + effect.name;
    case "progress":
      return LETTER.progress;
    case "signal":
      return LETTER.signal + effect.name;
    case "all": {
      const parts = Array.isArray(effect.asks)
        ? (effect.asks as readonly AskEffect[]).map((a, i) => fingerprintOf(a, subKey(key!, a, i)))
        : Object.entries(effect.asks).map(([name, a]) => `${name}=${fingerprintOf(a, subKey(key!, a, name))}`);
      return LETTER.all + hash8(`${key}\0${parts.join("\0")}`);
    }
    case "race":
      return raceFingerprints(effect, key!).end;
    case "parallel":
      // Never recorded (its steps are): what names it in traces and divergence messages.
      return LETTER.parallel + hash8(effect.steps.map((s) => s.effect.name).join("\0"));
    default:
      return askFingerprint(effect, key!, recorded, -1);
  }
}

/** The key of an ask that is a branch of a race: its explicit key, or the race's key and the branch's name. */
export const branchKey = (raceKey: string, branch: RaceBranch): string | undefined =>
  branch.effect.kind === "step" || branch.effect.kind === "sleep" || branch.effect.kind === "signal" ? undefined : subKey(raceKey, branch.effect, branch.name);

/**
 * A race's two fingerprints: `X<digest>` where it begins (its timers' wake times recorded),
 * `Y<digest>` where a branch won, followed by `/<name>` for each signal it waited on — the waits
 * it passed, which a token's ordinal counts (`waitsOn`). The digest covers the race's key and
 * each branch's name and fingerprint: a race changed in any branch is a divergence.
 */
export function raceFingerprints(effect: RaceEffect, key: string): { begin: string; end: string; branches: string[] } {
  const branches = effect.branches.map((b) => fingerprintOf(b.effect, branchKey(key, b)));
  const digest = hash8(`${key}\0${effect.branches.map((b, i) => `${b.name}=${branches[i]}`).join("\0")}`);
  let signals = "";
  for (const b of effect.branches) if (b.effect.kind === "signal") signals += `/${b.effect.name}`;
  return { begin: LETTER.race + digest, end: RACE_END_LETTER + digest + signals, branches };
}

/**
 * How many waits on signal `name` the records pass: each `waitForSignal(name)` (a `W<name>`
 * record) and each race that waited on it (a `Y…/<name>` record). The next wait on `name` has
 * this ordinal; a token for a smaller one is used up.
 */
export function waitsOn(records: readonly JournalRecord[], name: string): number {
  const fp = LETTER.signal + name;
  let n = 0;
  for (const [f] of records) {
    if (f === fp) n++;
    else if (f[0] === RACE_END_LETTER && f.includes(`/${name}`) && f.split("/").includes(name)) n++;
  }
  return n;
}

/** The fingerprint of a `ctx.can(kind)` answer. */
export const canFingerprint = (kind: Capability): string => LETTER.can + capabilityLetter[kind];

/** The key of a sub-ask of `all(...)`: its explicit key, or the all's key plus its index or name. */
export function subKey(allKey: string, ask: AskEffect, indexOrName: number | string): string {
  return ask.key ?? `${allKey}.${indexOrName}`;
}

/**
 * The default key of the call's `ordinal`-th ask (counting asks and `all`s only, from 0), so
 * adding a step, a `now()` or a `ctx.can` renames no key.
 */
export function defaultKey(kind: AskEffect["kind"] | "all" | "race", ordinal: number): string {
  // The same strings every round (a replay derives one per replayed ask): made once, then reused.
  const made = (DEFAULT_KEYS[kind] ??= []);
  return made[ordinal] ?? (ordinal < KEPT_DEFAULT_KEYS ? (made[ordinal] = `${kind}-${ordinal}`) : `${kind}-${ordinal}`);
}
/** How many default keys of each kind are made once and reused (the same string object each round). */
const KEPT_DEFAULT_KEYS = 1024;
const DEFAULT_KEYS: Partial<Record<AskEffect["kind"] | "all" | "race", string[]>> = {};
