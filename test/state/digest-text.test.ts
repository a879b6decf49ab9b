import { createHash, createHmac } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson, digestOf, encodeBase64url, shortDigest } from "../../src/internal.js";
import { truncateBase64url } from "../../src/state/base64url.js";
import { nodeBackend, portableBackend } from "../../src/state/token/crypto.js";

// Digests and MACs are made as base64url text in one native step (no byte buffer). Tokens,
// fingerprints and argument digests already issued must keep their exact text: these compare
// the text path with the byte path it replaced, on every backend.

const bytesOf = (text: string) => new Uint8Array(Buffer.from(text, "utf8"));

describe("digests as text", () => {
  it("truncating a base64url text equals encoding the truncated bytes (property)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 48 }), fc.nat(), (bytes, n) => {
        const take = 1 + (n % bytes.length);
        expect(truncateBase64url(encodeBase64url(bytes), take)).toBe(encodeBase64url(bytes.subarray(0, take)));
      }),
    );
  });

  it("SHA-256 and HMAC-SHA256 as base64url equal the bytes encoded, natively and portably (property)", () => {
    const key = new Uint8Array(32).fill(9);
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 300 }), (text) => {
        const sha = createHash("sha256").update(bytesOf(text)).digest("base64url");
        const mac = createHmac("sha256", key).update(bytesOf(text)).digest("base64url");
        for (const backend of [nodeBackend!, portableBackend]) {
          expect(backend.sha256Base64url(text)).toBe(sha);
          expect(backend.sha256Base64url(bytesOf(text))).toBe(sha);
          expect(encodeBase64url(backend.sha256(text))).toBe(sha);
          expect(backend.hmacSha256Base64url(key, text)).toBe(mac);
          expect(encodeBase64url(backend.hmacSha256(key, text))).toBe(mac);
        }
      }),
    );
  });

  it("HMAC-SHA256 made from one-shot hashes equals createHmac, for any key length and input (property)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 150 }), fc.oneof(fc.string({ unit: "binary", maxLength: 2000 }), fc.uint8Array({ maxLength: 2000 })), (key, data) => {
        const expected = createHmac("sha256", key).update(data).digest("base64url");
        expect(nodeBackend!.hmacSha256Base64url(key, data)).toBe(expected);
        // The same key again (its padded blocks are kept) and after another key.
        expect(nodeBackend!.hmacSha256Base64url(new Uint8Array(32).fill(1), "x")).toBe(createHmac("sha256", new Uint8Array(32).fill(1)).update("x").digest("base64url"));
        expect(nodeBackend!.hmacSha256Base64url(key, data)).toBe(expected);
      }),
      { numRuns: 300 },
    );
    const key = new Uint8Array(32).fill(5);
    const huge = "z".repeat(300_000); // past the scratch space
    expect(nodeBackend!.hmacSha256Base64url(key, huge)).toBe(createHmac("sha256", key).update(huge).digest("base64url"));
  });

  it("argument digests and short digests keep the text the byte path gave (property)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: 1, max: 32 }), (value, bytes) => {
        const canonical = canonicalJson(value);
        const full = createHash("sha256").update(bytesOf(canonical)).digest();
        expect(digestOf(value)).toBe(full.toString("base64url"));
        expect(shortDigest(canonical, bytes)).toBe(full.subarray(0, bytes).toString("base64url"));
      }),
    );
  });

  it("canonical JSON: the value's own JSON meaning, the same text whatever the key order, keys sorted at every level (property)", () => {
    // The reference, written plainly: every object's keys sorted (as strings: an object made
    // again would put integer-like keys first), no whitespace.
    const reference = (v: unknown): string =>
      Array.isArray(v)
        ? `[${v.map(reference).join(",")}]`
        : v !== null && typeof v === "object"
          ? `{${Object.keys(v)
              .sort()
              .map((k) => `${JSON.stringify(k)}:${reference((v as Record<string, unknown>)[k])}`)
              .join(",")}}`
          : JSON.stringify(v);
    const reversed = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(reversed)
        : v !== null && typeof v === "object"
          ? Object.fromEntries(
              Object.keys(v)
                .reverse()
                .map((k) => [k, reversed((v as Record<string, unknown>)[k])]),
            )
          : v;
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalJson(value);
        expect(text).toBe(reference(value));
        expect(canonicalJson(reversed(value))).toBe(text);
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
      }),
      { numRuns: 500 },
    );
  });
});
