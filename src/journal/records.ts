// journal/records.ts owns the journal as data: its records, the state's header, and the line
// text a token carries them in.
//
// Invariants:
// 1. A round appends lines; it never rewrites the lines a token already carries.
// 2. The header and the lines are checked by hand when read back: anything else is `undefined`.

import { quoteJson } from "../state/json-text.js";

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
