import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { OpenHashTable, tailHash } from "../../src/util/open-hash-table.js";

// The live calls' indexes (src/util/open-hash-table.ts): what callers see must be exactly a
// Map's behaviour, whatever the hashes — colliding, clustered, wrapping past the table's end —
// through growth and deletes that shift entries back.

describe("OpenHashTable", () => {
  // Hashes from a few values make long clusters (and every deletion shifts entries back); the
  // last character's code makes the table's own hash of a key, as the live calls give it.
  const hashings: Record<string, (key: string) => number> = {
    tailHash: tailHash,
    "three hashes for every key": (key) => key.length % 3,
    "one hash for every key": () => 7,
    "hashes near the top of the table (wrapping)": (key) => -1 - (key.charCodeAt(0) % 4 || 0),
  };

  for (const [name, hash] of Object.entries(hashings)) {
    it(`behaves as a Map over any sequence of sets, deletes and gets, with ${name} (property)`, () => {
      // Few keys, so that deletes and gets mostly find what sets put in.
      const key = fc.string({ unit: fc.constantFrom("a", "b", "c", "d"), maxLength: 3 });
      const op = fc.oneof(fc.record({ set: key, value: fc.integer() }), fc.record({ del: key }), fc.record({ get: key }));
      fc.assert(
        fc.property(fc.array(op, { maxLength: 300 }), fc.integer({ min: 0, max: 40 }), (ops, capacity) => {
          const table = new OpenHashTable<number>(capacity);
          const model = new Map<string, number>();
          for (const o of ops) {
            if ("set" in o) {
              table.set(hash(o.set), o.set, o.value);
              model.set(o.set, o.value);
            } else if ("del" in o) {
              table.delete(hash(o.del), o.del);
              model.delete(o.del);
            } else expect(table.get(hash(o.get), o.get)).toBe(model.get(o.get));
            expect(table.size).toBe(model.size);
          }
          for (const [k, v] of model) expect(table.get(hash(k), k)).toBe(v);
        }),
      );
    });
  }

  it("holds thousands of entries and finds each after the others came and went", () => {
    const table = new OpenHashTable<number>();
    for (let i = 0; i < 5000; i++) table.set(tailHash(`call-${i}`), `call-${i}`, i);
    for (let i = 0; i < 5000; i += 2) table.delete(tailHash(`call-${i}`), `call-${i}`);
    expect(table.size).toBe(2500);
    for (let i = 0; i < 5000; i++) expect(table.get(tailHash(`call-${i}`), `call-${i}`)).toBe(i % 2 === 0 ? undefined : i);
  });

  it("tailHash reads only the last eight characters, and tells apart strings that differ there", () => {
    expect(tailHash("a".repeat(50) + "12345678")).toBe(tailHash("b".repeat(9) + "12345678"));
    expect(tailHash("x12345678")).not.toBe(tailHash("x12345679"));
    expect(Number.isInteger(tailHash("any"))).toBe(true);
  });
});
