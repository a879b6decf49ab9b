import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { toRequestedSchema } from "mcp-yield";
import { canonicalJson, shortDigest } from "../../src/internal.js";
import { defaultKey, fingerprintOf } from "../../src/journal/journal.js";
import type { AskEffect } from "../../src/authoring/effects.js";

// A replayed form ask is recognised through caches (the last fingerprint per schema object and
// key — or, for a default key, per ordinal — and the schema last looked at) rather than hashed again. Whatever the order asks come in —
// schemas, keys and messages interleaved, the recorded fingerprint right, wrong or absent — the
// fingerprint must be the one the journal format defines: "e", then 16 bits of SHA-256 of the
// key, 24 of the message, 24 of the rest of the request (mode and schema), base64url.

const schemas = [z.object({ name: z.string() }), z.object({ n: z.number().int() }), z.object({ ok: z.boolean() })].map((s) => toRequestedSchema(s));
/**
 * A key as the runtime passes it with its ordinal hint: a default key (defaultKey's own string)
 * with its ordinal, past the kept default keys too; the same text given as an explicit key
 * (a fresh string, no ordinal); another key; and hints that do not belong to the key (the
 * runtime never passes one, but a hint must only ever find a fingerprint faster).
 */
const keyed = (choice: number): [key: string, ordinal: number] => {
  switch (choice) {
    case 0:
      return [defaultKey("elicit", 0), 0];
    case 1:
      return [defaultKey("elicit", 1), 1];
    case 2:
      return [`elicit-${"1"}`, -1];
    case 3:
      return [defaultKey("elicit", 1500), 1500];
    case 4:
      return ["confirm", -1];
    case 5:
      return ["confirm", 1];
    default:
      return [defaultKey("elicit", 0), 1];
  }
};
const messages = (i: number) => [`Number ${i + 1} of 30?`, `Name ${i}?`, "Sure?"];

const defined = (schema: object, key: string, message: string) => `e${shortDigest(key, 2)}${shortDigest(message, 3)}${shortDigest(canonicalJson({ mode: "form", requestedSchema: schema }), 3)}`;

/** A form ask as `elicit()` yields it, its message a fresh string each time (as a template literal makes it). */
const formAsk = (schema: (typeof schemas)[number], message: string): AskEffect =>
  ({
    kind: "elicit",
    key: undefined,
    acceptUnasked: false,
    params: { mode: "form", message: `${message.slice(0, 1)}${message.slice(1)}`, requestedSchema: schema },
    schema: z.object({}),
  }) as unknown as AskEffect;

describe("form ask fingerprints through the caches", () => {
  it("equal the defined fingerprint in any order of schemas, keys (with or without an ordinal hint), messages and recorded hints (property)", () => {
    const ask = fc.record({ s: fc.nat(2), k: fc.nat(6), m: fc.nat(2), i: fc.nat(3), hint: fc.constantFrom("none", "right", "other schema", "other message") });
    fc.assert(
      fc.property(fc.array(ask, { minLength: 1, maxLength: 40 }), (asks) => {
        for (const { s, k, m, i, hint } of asks) {
          const schema = schemas[s]!;
          const [key, ordinal] = keyed(k);
          const message = messages(i)[m]!;
          const expected = defined(schema, key, message);
          const recorded = { none: undefined, right: expected, "other schema": defined(schemas[(s + 1) % 3]!, key, message), "other message": defined(schema, key, `${message}!`) }[hint];
          expect(fingerprintOf(formAsk(schema, message), key, recorded, ordinal)).toBe(expected);
        }
      }),
    );
  });

  it("tell any message from the one cached for its schema and key: a prefix, the same length, any characters (property)", () => {
    // The cache compares the fresh message with the cached one without `===` (journal.ts
    // `sameText`): equal text must hit, and every other text miss and be hashed.
    const text = fc.string({ unit: "binary", maxLength: 12 });
    const pair = fc.oneof(
      fc.tuple(text, text),
      text.chain((t) => fc.tuple(fc.constant(t), fc.constant(t))),
      fc.tuple(text, text).map(([a, b]) => [a + b, a] as [string, string]),
      fc.tuple(text, text).map(([a, b]) => [a, a + b] as [string, string]),
      fc
        .tuple(text, fc.nat(11))
        .map(([a, i]) => [a, a.length === 0 ? "x" : a.slice(0, i % a.length) + String.fromCharCode(a.charCodeAt(i % a.length) ^ 1) + a.slice((i % a.length) + 1)] as [string, string]),
    );
    const schema = schemas[2]!;
    fc.assert(
      fc.property(pair, fc.boolean(), ([cached, fresh], hinted) => {
        expect(fingerprintOf(formAsk(schema, cached), "confirm", undefined)).toBe(defined(schema, "confirm", cached));
        const expected = defined(schema, "confirm", fresh);
        expect(fingerprintOf(formAsk(schema, fresh), "confirm", hinted ? defined(schema, "confirm", cached) : undefined)).toBe(expected);
      }),
    );
  });

  it("equal the defined fingerprint with hundreds of calls in flight, each with messages of its own, asked in turn (property)", () => {
    // More distinct messages per key than a key's cache keeps (it is cleared whole at its bound):
    // found or made again, every fingerprint is the defined one.
    fc.assert(
      fc.property(fc.integer({ min: 200, max: 700 }), fc.nat(2), fc.nat(5), (calls, s, keys) => {
        const schema = schemas[s]!;
        for (let round = 0; round < 2; round++)
          for (let call = 0; call < calls; call++)
            for (let line = 0; line <= keys; line++) {
              const message = `Order ord-${call} for customer ${call % 97}, line ${line + 1}: approve?`;
              expect(fingerprintOf(formAsk(schema, message), `line-${line}`, round === 0 ? undefined : defined(schema, `line-${line}`, message))).toBe(defined(schema, `line-${line}`, message));
            }
      }),
      { numRuns: 5 },
    );
  });

  it("tell apart two schemas asked in turn under the same key and message", () => {
    const [a, b] = [schemas[0]!, schemas[1]!];
    for (let round = 0; round < 3; round++) {
      expect(fingerprintOf(formAsk(a, "Who?"), "elicit-0", defined(a, "elicit-0", "Who?"))).toBe(defined(a, "elicit-0", "Who?"));
      expect(fingerprintOf(formAsk(b, "Who?"), "elicit-0", defined(a, "elicit-0", "Who?"))).toBe(defined(b, "elicit-0", "Who?"));
    }
    expect(defined(a, "elicit-0", "Who?")).not.toBe(defined(b, "elicit-0", "Who?"));
  });
});
