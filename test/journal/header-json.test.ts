import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createStateCodec, type StateBinding } from "mcp-yield";
import { decodeBase64url } from "../../src/internal.js";
import { headerJson, type StateHeader } from "../../src/journal/journal.js";
import { jsonMinterOf } from "../../src/state/token/codec.js";
import { testKey } from "../support/keys.js";

// The runtime seals its header as JSON text written by hand (journal.ts `headerJson`) through
// its codec's `mintJson`. The token must read back exactly as `mint`'s would: the same header
// text as JSON.stringify makes, and the same claims around it, member for member.

const text = fc.string({ unit: "binary", maxLength: 16 });
/** Keys as authors and JSON give them: any text, numbers (ordered first by JSON), names of Object.prototype's members. */
const key = fc.oneof(text, fc.nat(50).map(String), fc.constantFrom("constructor", "toString", "prototype", "~~x", ""));
const stringMap = fc.array(fc.tuple(key, text), { maxLength: 5 }).map((pairs) => {
  const map: Record<string, string> = {};
  for (const [k, v] of pairs) Object.defineProperty(map, k, { value: v, enumerable: true, writable: true, configurable: true });
  return map;
});
const header = fc.record({ r: fc.nat(), c: text, o: stringMap, v: fc.option(text, { nil: undefined }), p: fc.option(stringMap, { nil: undefined }) }).map((h) => {
  // Built as the runtime builds it: r, c, o, then v and p only when present.
  const built: StateHeader = { r: h.r, c: h.c, o: h.o };
  if (h.v !== undefined) built.v = h.v;
  if (h.p !== undefined) built.p = h.p;
  return built;
});
const binding = fc.record({
  method: fc.constantFrom("tools/call" as const, "prompts/get" as const, "resources/read" as const),
  target: text,
  argumentsDigest: fc.constantFrom("x3kZ0d9gH2mQv8Lr5TnB7wYc1pE4sJ6fUaKo0iRlXyZ"),
  principal: fc.option(text, { nil: undefined }),
});

/** A signed token's plaintext, its nonce blanked (random per token). */
function plaintextOf(token: string, nonce: string): string {
  const bytes = decodeBase64url(token.split(".")[2]!)!;
  return new TextDecoder().decode(bytes).replace(JSON.stringify(nonce), '"<nonce>"');
}

describe("the header sealed as hand-written JSON", () => {
  it("is the text JSON.stringify makes of it (property)", () => {
    fc.assert(
      fc.property(header, (h) => {
        expect(headerJson(h)).toBe(JSON.stringify(h));
      }),
    );
  });

  it("refuses what is not a header: a member of another type, a map of another prototype", () => {
    expect(headerJson({ r: 1.5, c: "c", o: {} })).toBeUndefined();
    expect(headerJson({ r: 1, c: "c", o: { k: 1 as unknown as string } })).toBeUndefined();
    expect(headerJson({ r: 1, c: "c", o: {}, p: new Map() as unknown as Record<string, string> })).toBeUndefined();
    expect(headerJson({ r: 1, c: "c", o: Object.create(null) as Record<string, string> })).toBeUndefined();
  });

  it("mints the token mint() mints, but for its nonce, in either mode; it opens to the same header (property)", () => {
    const clock = () => 1_764_700_000_123;
    const keys = [testKey("k1", 7)];
    const signed = createStateCodec({ keys, clock, mode: "signed" });
    const sealed = createStateCodec({ keys, clock });
    fc.assert(
      fc.property(header, binding, text, (h, b, body) => {
        const bound: StateBinding = b.principal === undefined ? { method: b.method, target: b.target, argumentsDigest: b.argumentsDigest } : b;
        const viaJson = jsonMinterOf(signed)!(bound, headerJson(h)!, body);
        const viaMint = signed.mint({ binding: bound, data: h, body });
        expect(plaintextOf(viaJson.token, viaJson.nonce)).toBe(plaintextOf(viaMint.token, viaMint.nonce));
        expect([viaJson.issuedAt, viaJson.expiresAt]).toEqual([viaMint.issuedAt, viaMint.expiresAt]);
        for (const codec of [signed, sealed]) {
          const minted = jsonMinterOf(codec)!(bound, headerJson(h)!, body);
          const opened = codec.open(minted.token, bound);
          expect(JSON.stringify(opened.data)).toBe(JSON.stringify(h));
          expect([opened.body, opened.nonce, opened.expiresAt]).toEqual([body, minted.nonce, minted.expiresAt]);
        }
      }),
    );
  });

  it("is only offered by codecs createStateCodec made", () => {
    const codec = createStateCodec({ keys: [testKey("k1", 7)] });
    expect(jsonMinterOf(codec)).toBeTypeOf("function");
    expect(jsonMinterOf({ ...codec })).toBeUndefined();
  });
});
