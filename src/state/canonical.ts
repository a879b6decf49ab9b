import { encodeBase64url } from "./base64url.js";
import { defaultBackend } from "./crypto.js";

/**
 * Canonical JSON: object keys sorted, no whitespace, `undefined` members dropped, so equal
 * values always give equal text. Used for argument digests and effect fingerprints.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") {
    if (typeof value === "bigint") return `"${value.toString()}n"`;
    return JSON.stringify(value) ?? "null";
  }
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : canonicalJson(v))).join(",")}]`;
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  const keys = Object.keys(value).sort();
  const parts: string[] = [];
  for (const key of keys) {
    const v = (value as Record<string, unknown>)[key];
    if (v === undefined || typeof v === "function") continue;
    parts.push(`${JSON.stringify(key)}:${canonicalJson(v)}`);
  }
  return `{${parts.join(",")}}`;
}

const encoder = new TextEncoder();

/** base64url SHA-256 of the canonical JSON of `value` (43 characters). */
export function digestOf(value: unknown): string {
  return encodeBase64url(defaultBackend.sha256(encoder.encode(canonicalJson(value))));
}
