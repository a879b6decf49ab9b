/**
 * `JSON.stringify`'s text, made with fewer calls into it. Each call into `JSON.stringify` pays a
 * fixed setup in V8's C++ (a string builder, a replacer check, a `toJSON` lookup per object):
 * counted under cachegrind, serializing a round's ask (≈ 190 characters) took ≈ 8,000
 * instructions, and a canonical digest of one answer (a call per key and per value) ≈ 4,600.
 * Here plain data is written in JavaScript — short strings that need no escaping quoted as they
 * are, deep-frozen parts (elicitation schemas) serialized once — and anything else is left to
 * `JSON.stringify` itself, so the text is always exactly the one it makes.
 */

/** Strings longer than this are left to `JSON.stringify` (its scan is the faster one there). */
const QUOTE_SCAN = 64;

/** `JSON.stringify(s)` for a string. */
export function quoteJson(s: string): string {
  if (s.length > QUOTE_SCAN) return JSON.stringify(s);
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    // Controls, quote and backslash are escaped; a surrogate may be a lone one (escaped too).
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return JSON.stringify(s);
  }
  return `"${s}"`;
}

/**
 * Member names, quoted once: the same few names recur in every ask and record, and a property
 * name from `Object.keys` is an internalized string whose hash V8 keeps, so a lookup is cheaper
 * than scanning it again (with the frozen-flag check below: an object of three short strings
 * 393 → 342 ns, in one process).
 */
const quotedKeys = new Map<string, string>();
const QUOTED_KEYS = 1024;

export function quotedKey(key: string): string {
  // Long names are scanned by JSON.stringify anyway, and are not worth holding.
  if (key.length > QUOTE_SCAN) return JSON.stringify(key);
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    if (quotedKeys.size >= QUOTED_KEYS) quotedKeys.clear();
    quotedKeys.set(key, (quoted = quoteJson(key)));
  }
  return quoted;
}

/**
 * `JSON.stringify(n)` for a number. A whole number past 2^31 — a time in milliseconds, as every
 * token's `iat` and `exp` are — is a heap number, and V8 writes one it has not cached by its
 * general double-to-text path: ≈ 165 ns for a fresh 13-digit time (Node 20, one process).
 * Written here as its millions (a small integer, the same text for 16 minutes, so V8's
 * number-to-string cache has it) and its six low digits as two three-digit strings from a
 * table — no number turned into text at all for them. With `String(low)` for the low digits,
 * a server whose clock moves between mints (each mint a fresh millisecond) missed that cache
 * for each: in the memory store's bench process `numberJson` took 1.9 µs of a call's 82
 * (eight numbers), against 0.5 µs where mints share a millisecond. `%` and the division are
 * exact here (`n - low` is a multiple of a million below 2^53), and the millions stay small
 * integers below HIGH_SPLIT.
 */
export function numberJson(n: number): string {
  if (n >= LOW_SPLIT && n < HIGH_SPLIT && Number.isInteger(n)) {
    const low = n % 1e6;
    const thousands = (low / 1000) | 0;
    return String((n - low) / 1e6) + THREE_DIGITS[thousands]! + THREE_DIGITS[low - thousands * 1000]!;
  }
  return Number.isFinite(n) ? String(n) : "null";
}

/** Whole numbers from here (≥ 2^31: heap numbers) to HIGH_SPLIT are written in two parts. */
const LOW_SPLIT = 2 ** 31;
/** 2^31 millions: the millions part is a small integer below this (a time until the year 70,000). */
const HIGH_SPLIT = 2 ** 31 * 1e6;
/** "000" to "999". */
const THREE_DIGITS: readonly string[] = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, "0"));

const deepFrozen = new WeakSet<object>();
const frozenJson = new WeakMap<object, string>();

/** Mark `value` (already deep-frozen by the caller) as unable to change: its JSON text is made once. */
export function markDeepFrozen(value: object): void {
  deepFrozen.add(value);
}

/** Whether `value` was marked deep-frozen. */
export const isDeepFrozen = (value: object): boolean => deepFrozen.has(value);

/** Nesting beyond this is left to `JSON.stringify` (which also reports a cycle, as it always did). */
const MAX_DEPTH = 32;

/**
 * `JSON.stringify(value)` exactly (same text, same `undefined`, same exceptions). Plain objects,
 * arrays and primitives are written here; a deep-frozen object's text is made once and reused;
 * anything else (a `toJSON`, a class instance, a bigint, a cycle) goes to `JSON.stringify`.
 */
export function jsonText(value: unknown): string | undefined {
  const text = plainJson(value, 0);
  return text ?? JSON.stringify(value);
}

/** The text of plain data, or `undefined` when `JSON.stringify` must do it (see `jsonText`). */
function plainJson(value: unknown, depth: number): string | undefined {
  switch (typeof value) {
    case "string":
      return quoteJson(value);
    case "number":
      return numberJson(value);
    case "boolean":
      return value ? "true" : "false";
    case "object":
      break;
    default:
      return undefined;
  }
  if (value === null) return "null";
  // Only a frozen object can be marked deep-frozen: the flag is read first, and the set is
  // looked up for those alone, not for every object walked.
  if (Object.isFrozen(value) && deepFrozen.has(value)) {
    let text = frozenJson.get(value);
    if (text === undefined) {
      text = JSON.stringify(value);
      // Only a text: a frozen value that stringifies to nothing is left to the caller's fallback.
      if (text === undefined) return undefined;
      frozenJson.set(value, text);
    }
    return text;
  }
  if (depth >= MAX_DEPTH || typeof (value as { toJSON?: unknown }).toJSON === "function") return undefined;
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto === Array.prototype && Array.isArray(value)) {
    let text = "[";
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const t = item === undefined || typeof item === "function" || typeof item === "symbol" ? "null" : plainJson(item, depth + 1);
      if (t === undefined) return undefined;
      text += i === 0 ? t : `,${t}`;
    }
    return `${text}]`;
  }
  if (proto !== Object.prototype && proto !== null) return undefined;
  let text = "{";
  for (const key of Object.keys(value)) {
    const member: unknown = (value as Record<string, unknown>)[key];
    if (member === undefined || typeof member === "function" || typeof member === "symbol") continue;
    const t = plainJson(member, depth + 1);
    if (t === undefined) return undefined;
    text += `${text.length === 1 ? "" : ","}${quotedKey(key)}:${t}`;
  }
  return `${text}}`;
}
