/**
 * superjson refuses objects with the keys `__proto__`, `constructor` and `prototype` (its guard
 * against prototype pollution). Client answers and step results may legitimately hold them, so
 * the codec escapes such keys before serializing and restores them as own data properties
 * (never as prototypes) after verifying. The walk runs only when superjson refused, and the
 * reverse only for tokens flagged as escaped, so ordinary payloads pay nothing.
 */

const RESERVED = new Set(["__proto__", "constructor", "prototype"]);
const MARK = "~~";

const isPlainObject = (v: unknown): v is Record<string, unknown> => {
  if (v === null || typeof v !== "object") return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
};

function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function mapKeys(value: unknown, rename: (key: string) => string): unknown {
  if (Array.isArray(value)) return value.map((v) => mapKeys(v, rename));
  if (value instanceof Map) return new Map([...value].map(([k, v]) => [mapKeys(k, rename), mapKeys(v, rename)]));
  if (value instanceof Set) return new Set([...value].map((v) => mapKeys(v, rename)));
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) setOwn(out, rename(key), mapKeys(value[key], rename));
  return out;
}

/** Prefix reserved keys (and keys that already carry the prefix) so superjson accepts them. */
export function escapeReservedKeys(value: unknown): unknown {
  return mapKeys(value, (key) => (RESERVED.has(key) || key.startsWith(MARK) ? MARK + key : key));
}

/** Undo `escapeReservedKeys`; reserved keys come back as own enumerable data properties. */
export function unescapeReservedKeys(value: unknown): unknown {
  return mapKeys(value, (key) => (key.startsWith(MARK) ? key.slice(MARK.length) : key));
}
