import { encodeBase64url, randomBytes } from "../state/index.js";

// `mcp-yield keygen`: a new entry for the key ring.

const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;

export const keygenUsage = `  mcp-yield keygen [id]              print a new key ring entry, id:secret (32 random bytes), for MCP_YIELD_KEYS
                                     (default id: k<yyyymmdd>-<6 random characters>, unique even for two keys made
                                     the same day; give each key its own id so rotation can tell them apart)`;

/**
 * A new key ring entry `id:secret`, the format `parseKeyRing` and MCP_YIELD_KEYS take. The
 * default id is the day plus random characters: two keys made the same day must not share an id
 * (a token would then be checked with the wrong secret: `bad_signature`).
 */
export function keygen(id = `k${new Date().toISOString().slice(0, 10).replaceAll("-", "")}-${encodeBase64url(randomBytes(6)).slice(0, 6)}`): string {
  if (!KEY_ID.test(id)) throw new TypeError(`key id must be 1-32 characters of [A-Za-z0-9_-], got ${JSON.stringify(id)}`);
  return `${id}:${encodeBase64url(randomBytes(32))}`;
}
