import superjson from "superjson";
import { escapeReservedKeys, unescapeReservedKeys } from "./reserved-keys.js";
import { ownString } from "../util/own-string.js";
import { jsonText } from "./json-text.js";

/**
 * The text form of a value a journal records (a step's result, an answer, a time, an id).
 *
 * A journal keeps every recorded value as text and hands author code a fresh decoding of that
 * text, whether the call resumed on this instance or replays on another: what code receives is
 * then exactly what any replay would give it, and no object the journal holds can be changed
 * by the code that received it.
 *
 * Carried exactly: JSON values, `undefined`, `-0`, `NaN`, `±Infinity`, `bigint`, valid `Date`s,
 * `Map`s and `Set`s, nested in arrays and objects with any string keys (`__proto__` included).
 * Plain objects come back with `Object.prototype`; two references to one object come back as
 * they were (superjson) or as two equal copies (plain JSON) — the same on every path.
 * Refused, with the path of the offending part: functions, symbols, class instances (they
 * would lose their prototype and methods), typed arrays, errors, promises, invalid dates,
 * cycles, sparse arrays, arrays with extra members, symbol keys, nesting deeper than 256.
 */

/** A value the journal cannot carry exactly; `path` locates the offending part (`$` is the value). */
export class UnsupportedValueError extends TypeError {
  override readonly name = "UnsupportedValueError";
  constructor(
    readonly path: string,
    readonly problem: string,
  ) {
    super(`${path} is ${problem}`);
  }
}

const MAX_DEPTH = 256;
/** Marks the superjson form; valid JSON text never starts with it. */
const RICH = "~";

interface Walk {
  /** Keys from the root to the value being checked (only read to report a failure). */
  path: Array<string | number | { at: string }>;
  /** Objects on the current path (cycle detection). */
  ancestors: Set<object>;
  reserved: boolean;
}

function pathText(path: Walk["path"]): string {
  let out = "$";
  for (const p of path) {
    if (typeof p === "number") out += `[${p}]`;
    else if (typeof p === "object") out += `.${p.at}`;
    else out += /^[A-Za-z_$][\w$]*$/.test(p) ? `.${p}` : `[${JSON.stringify(p)}]`;
  }
  return out;
}

function fail(walk: Walk, problem: string): never {
  throw new UnsupportedValueError(pathText(walk.path), problem);
}

function kindOf(value: object): string {
  const ctor = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor;
  const name = typeof ctor?.name === "string" && ctor.name !== "" ? ctor.name : "an anonymous class";
  return `an instance of ${name} (class instances lose their prototype and methods when replayed: return plain data)`;
}

/** For a value that is no object, symbol or function: whether plain JSON carries it exactly. */
function plainScalar(value: unknown): boolean {
  return typeof value === "number" ? Number.isFinite(value) && !Object.is(value, -0) : typeof value === "string" || typeof value === "boolean";
}

/** Check `value` is carriable; `true` when plain JSON carries it exactly (no superjson needed). */
function check(value: unknown, walk: Walk, depth: number): boolean {
  switch (typeof value) {
    case "object":
      break;
    case "symbol":
      return fail(walk, "a symbol");
    case "function":
      return fail(walk, `a function${value.name ? ` (${value.name})` : ""}`);
    default:
      return plainScalar(value);
  }
  if (value === null) return true;
  const object = value as object;
  if (depth > MAX_DEPTH) fail(walk, `nested deeper than ${MAX_DEPTH} levels`);
  if (walk.ancestors.has(object)) fail(walk, "a cycle (it contains itself)");
  const proto: unknown = Object.getPrototypeOf(object);
  walk.ancestors.add(object);
  let plain = true;
  const visit = (key: Walk["path"][number], v: unknown) => {
    walk.path.push(key);
    if (!check(v, walk, depth + 1)) plain = false;
    walk.path.pop();
  };
  if (proto === Array.prototype) {
    const array = object as unknown[];
    for (let i = 0; i < array.length; i++) {
      if (!(i in array)) fail(walk, `a sparse array (nothing at index ${i})`);
      visit(i, array[i]);
    }
    if (Object.keys(array).length !== array.length) fail(walk, "an array with members other than its items");
  } else if (proto === Object.prototype || proto === null) {
    if (Object.getOwnPropertySymbols(object).length > 0) fail(walk, "an object with symbol keys");
    for (const key of Object.keys(object)) {
      if (key === "__proto__" || key === "constructor" || key === "prototype" || key.startsWith("~~")) walk.reserved = true;
      visit(key, (object as Record<string, unknown>)[key]);
    }
  } else if (proto === Date.prototype) {
    if (Number.isNaN((object as Date).getTime())) fail(walk, "an invalid Date");
    plain = false;
  } else if (proto === Map.prototype) {
    let i = 0;
    for (const [k, v] of object as Map<unknown, unknown>) {
      visit({ at: `<Map key #${i}>` }, k);
      visit({ at: `<Map value #${i++}>` }, v);
    }
    plain = false;
  } else if (proto === Set.prototype) {
    let i = 0;
    for (const v of object as Set<unknown>) visit({ at: `<Set item #${i++}>` }, v);
    plain = false;
  } else {
    fail(walk, kindOf(object));
  }
  walk.ancestors.delete(object);
  return plain;
}

/** How deep `plainExact` looks before leaving the value to the full walk (which allows 256). */
const FAST_DEPTH = 64;

/**
 * Whether plain JSON carries `value` exactly, decided without the full walk's path, cycle set
 * and closures (this runs for every answer and step result recorded). `true` only where
 * `check` would return `true`; `false` for anything else — a value needing superjson, one to
 * refuse, a cycle or a deep one — which the full walk then examines and words.
 */
function plainExact(value: unknown, depth: number): boolean {
  if (typeof value !== "object") return typeof value !== "symbol" && typeof value !== "function" && plainScalar(value);
  if (value === null) return true;
  if (depth > FAST_DEPTH) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto === Array.prototype) {
    const array = value as unknown[];
    for (let i = 0; i < array.length; i++) if (!(i in array) || !plainExact(array[i], depth + 1)) return false;
    return Object.keys(array).length === array.length;
  }
  if (proto !== Object.prototype && proto !== null) return false;
  for (const key in value) if (Object.prototype.hasOwnProperty.call(value, key) && !plainExact((value as Record<string, unknown>)[key], depth + 1)) return false;
  return Object.getOwnPropertySymbols(value).length === 0;
}

/** Whether plain JSON carries `value` exactly (no superjson, nothing refused): what a result may hold. */
export function isPlainJson(value: unknown): boolean {
  if (plainExact(value, 0)) return true;
  try {
    return check(value, { path: [], ancestors: new Set(), reserved: false }, 0);
  } catch {
    return false;
  }
}

/**
 * `value` as JSON plus, where plain JSON cannot carry it exactly, superjson's metadata (`meta`)
 * and whether reserved keys were escaped (`escaped`). Throws `UnsupportedValueError` for
 * anything it could not carry exactly. The one rule set for every value a state carries: the
 * journal's recorded values (`encodeValue`) and a codec's sealed data.
 */
export function encodeParts(value: unknown): ValueParts {
  if (plainExact(value, 0)) return { json: value };
  const walk: Walk = { path: [], ancestors: new Set(), reserved: false };
  if (check(value, walk, 0)) return { json: value };
  // superjson refuses __proto__ / constructor / prototype keys: escape them (flag x).
  const { json, meta } = superjson.serialize(walk.reserved ? escapeReservedKeys(value) : value);
  return walk.reserved ? { json, meta, escaped: true } : { json, meta };
}

/** What `encodeParts` made of a value. */
export interface ValueParts {
  json: unknown;
  meta?: unknown;
  escaped?: true;
}

/** The value `encodeParts` was given, rebuilt from its parts. */
export function decodeParts(parts: ValueParts): unknown {
  const value = parts.meta === undefined ? parts.json : superjson.deserialize({ json: parts.json as never, meta: parts.meta as never });
  return parts.escaped ? unescapeReservedKeys(value) : value;
}

/**
 * The text of `value` (throws `UnsupportedValueError` for anything it could not carry
 * exactly). `undefined` is the empty string; plain JSON is its JSON text; anything else is
 * superjson's form behind a `~`.
 */
export function encodeValue(value: unknown): string {
  if (value === undefined) return "";
  // jsonText writes JSON.stringify's text for plain data without a call into it (json-text.ts):
  // every answer and step result recorded is written here.
  if (plainExact(value, 0)) return jsonText(value)!;
  return encodeValueWalked(value);
}

/** `encodeValue` by the full walk alone, whatever the value (exported for the test that holds the fast check to it). */
export function encodeValueWalked(value: unknown): string {
  if (value === undefined) return "";
  const walk: Walk = { path: [], ancestors: new Set(), reserved: false };
  if (check(value, walk, 0)) return JSON.stringify(value);
  // superjson refuses __proto__ / constructor / prototype keys: escape them (flag x).
  const escaped = walk.reserved;
  const { json, meta } = superjson.serialize(escaped ? escapeReservedKeys(value) : value);
  return RICH + JSON.stringify(escaped ? { j: json, m: meta, x: 1 } : { j: json, m: meta });
}

// Short plain-JSON texts are parsed once and copied after: a replay decodes the same recorded
// answers every round, and copying a small parsed value costs about a third of parsing it.
const SHORT_TEXT = 128;
const parsedTexts = new Map<string, unknown>();
const PARSED_CACHE = 4096;

/** A deep copy of a parsed JSON value (a `__proto__` key stays an own data property, as JSON.parse made it). */
function copyJson(value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map(copyJson);
  const copy: Record<string, unknown> = {};
  // for-in over own keys (JSON.parse makes only own, enumerable ones): no array of keys per
  // object, and this runs for every replayed answer. hasOwnProperty.call, not Object.hasOwn:
  // see isPlainForm in journal/journal.ts.
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
    const item = copyJson((value as Record<string, unknown>)[key]);
    if (key === "__proto__") Object.defineProperty(copy, key, { value: item, enumerable: true, writable: true, configurable: true });
    else copy[key] = item;
  }
  return copy;
}

/** A fresh value from `encodeValue`'s text: nothing returned is shared with any earlier call. */
export function decodeValue(text: string): unknown {
  if (text === "") return undefined;
  if (!text.startsWith(RICH)) {
    if (text.length > SHORT_TEXT) return JSON.parse(text);
    let parsed = parsedTexts.get(text);
    if (parsed === undefined) {
      parsed = JSON.parse(text) as unknown;
      if (parsedTexts.size >= PARSED_CACHE) parsedTexts.clear();
      // Kept as a copy: `text` is usually a slice of a whole journal, which it would keep alive.
      parsedTexts.set(ownString(text), parsed);
    }
    return copyJson(parsed);
  }
  const rich = JSON.parse(text.slice(1)) as { j: unknown; m?: unknown; x?: 1 };
  return decodeParts(rich.x === 1 ? { json: rich.j, meta: rich.m, escaped: true } : { json: rich.j, meta: rich.m });
}
