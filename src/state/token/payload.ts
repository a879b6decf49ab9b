import { decodeParts, encodeParts } from "../value-text.js";

/**
 * How the data inside a token is encoded: by the journal's own value rules (`value-text.ts`).
 * Plain JSON values go as they are; Dates, Maps, Sets, BigInts, undefined, -0, NaN through
 * superjson, whose metadata rides next to the data; anything else (class instances, functions,
 * cycles, …) is refused with `UnsupportedValueError` naming where it is, never renamed or
 * flattened on the way.
 */

export interface EncodedData {
  d: unknown;
  sj?: unknown;
  x?: 1;
}

export function encodeData(data: unknown): EncodedData {
  const { json, meta, escaped } = encodeParts(data);
  const encoded: EncodedData = { d: json };
  if (meta !== undefined) encoded.sj = meta;
  if (escaped) encoded.x = 1;
  return encoded;
}

export function decodeData(encoded: EncodedData): unknown {
  return decodeParts(encoded.x === 1 ? { json: encoded.d, meta: encoded.sj, escaped: true } : { json: encoded.d, meta: encoded.sj });
}
