import { decodeBase64url } from "../base64url.js";
import type { CryptoBackend } from "./crypto.js";
import { StateConfigError } from "../errors.js";

/** A secret with a public id. The id travels in every token so any key of the ring can open it. */
export interface StateKey {
  /** 1–32 characters of `[A-Za-z0-9_-]`; appears in tokens in clear. */
  id: string;
  /** At least 32 random bytes. */
  secret: Uint8Array;
}

/** Per-purpose subkeys derived from one secret, so no key is used for two jobs. */
export interface DerivedKey {
  readonly id: string;
  readonly mac: Uint8Array;
  readonly aead: Uint8Array;
  readonly principal: Uint8Array;
}

/** The shortest secret a key may have, in bytes. */
export const MIN_SECRET_BYTES = 32;
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;
const encoder = new TextEncoder();

/** Build the ring: validates every key, derives subkeys once. The first key seals. */
export function buildKeyRing(keys: readonly StateKey[], backend: CryptoBackend): DerivedKey[] {
  if (!Array.isArray(keys) || keys.length === 0) throw new StateConfigError("state keys: at least one key is required");
  const seen = new Set<string>();
  return keys.map((key, index) => {
    if (typeof key?.id !== "string" || !KEY_ID.test(key.id)) {
      throw new StateConfigError(`state keys[${index}]: id must be 1-32 characters of [A-Za-z0-9_-]`);
    }
    if (seen.has(key.id)) throw new StateConfigError(`state keys[${index}]: duplicate id "${key.id}"`);
    seen.add(key.id);
    if (!(key.secret instanceof Uint8Array) || key.secret.length < MIN_SECRET_BYTES) {
      throw new StateConfigError(`state key "${key.id}": secret must be at least ${MIN_SECRET_BYTES} bytes (got ${key.secret instanceof Uint8Array ? key.secret.length : typeof key.secret})`);
    }
    const derive = (label: string) => backend.hmacSha256(key.secret, encoder.encode(`mcp-yield/v1/${label}`));
    return { id: key.id, mac: derive("mac"), aead: derive("aead"), principal: derive("principal") };
  });
}

/**
 * Parse `id:base64secret[,id:base64secret...]` (standard or url-safe base64), the format of
 * the `MCP_YIELD_KEYS` environment variable. Throws `StateConfigError` naming the bad entry.
 */
export function parseKeyRing(text: string | undefined): StateKey[] {
  if (typeof text !== "string" || text.trim() === "") {
    throw new StateConfigError("key ring: no keys given (is MCP_YIELD_KEYS set?). Generate one with `npx mcp-yield keygen`; every instance needs the same ring: id:base64secret[,id:base64secret...]");
  }
  const entries = text
    .split(",")
    .map((e) => e.trim())
    .filter((e) => e !== "");
  if (entries.length === 0) throw new StateConfigError("key ring: no keys given");
  return entries.map((entry, index) => {
    const colon = entry.indexOf(":");
    if (colon <= 0) throw new StateConfigError(`key ring entry ${index + 1}: expected id:base64secret`);
    const id = entry.slice(0, colon);
    const b64 = entry
      .slice(colon + 1)
      .replace(/=+$/, "")
      .replace(/\+/g, "-")
      .replace(/\//g, "_");
    const secret = decodeBase64url(b64);
    if (!secret) throw new StateConfigError(`key ring entry "${id}": secret is not valid base64`);
    return { id, secret };
  });
}
