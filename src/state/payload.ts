import superjson from "superjson";
import { escapeReservedKeys, unescapeReservedKeys } from "./reserved-keys.js";

/**
 * How the data inside a token is encoded. Plain JSON values (the common case: answers, ids,
 * numbers) go through `JSON` as they are; anything else (Date, Map, Set, BigInt, undefined,
 * class instances) through superjson, whose metadata rides next to the data. Checking for
 * plain JSON is one allocation-free walk, far cheaper than superjson's annotated walk.
 */

export interface EncodedData {
  d: unknown;
  sj?: unknown;
  x?: 1;
}

/** Whether `JSON.parse(JSON.stringify(value))` gives back an equal value. */
export function isPlainJson(value: unknown, depth = 0): boolean {
  if (depth > 200) return false;
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(value) && !Object.is(value, -0); // JSON would turn -0 into 0
    case "object": {
      if (value === null) return true;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) if (!(i in value) || !isPlainJson(value[i], depth + 1)) return false;
        return true;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) return false;
      for (const key in value) {
        if (!Object.hasOwn(value, key)) return false;
        if (!isPlainJson((value as Record<string, unknown>)[key], depth + 1)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

export function encodeData(data: unknown): EncodedData {
  if (isPlainJson(data)) return { d: data };
  try {
    const { json, meta } = superjson.serialize(data);
    return meta === undefined ? { d: json } : { d: json, sj: meta };
  } catch {
    // superjson refuses __proto__ / constructor / prototype keys: escape them, flag it.
    const { json, meta } = superjson.serialize(escapeReservedKeys(data));
    return { d: json, ...(meta === undefined ? {} : { sj: meta }), x: 1 };
  }
}

export function decodeData(encoded: EncodedData): unknown {
  const data = encoded.sj === undefined ? encoded.d : superjson.deserialize({ json: encoded.d as never, meta: encoded.sj as never });
  return encoded.x === 1 ? unescapeReservedKeys(data) : data;
}
