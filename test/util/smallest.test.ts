import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { smallest } from "../../src/util/smallest.js";

// smallest() stands in for sort-then-slice in the memory store's due index and member pages: the
// same entries, in the same order (equal ones as they came), for every limit.

const byKey = (a: { key: number }, b: { key: number }) => a.key - b.key;

describe("smallest", () => {
  it("gives what a stable sort's first `limit` would, for any items and limit", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 300 }), fc.integer({ min: -1, max: 320 }), (keys, limit) => {
        const items = keys.map((key, at) => ({ key, at }));
        const expected = limit <= 0 ? [] : [...items].sort(byKey).slice(0, limit);
        expect(smallest([...items], limit, byKey)).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });

  it("takes the smallest few of many in their worst order (descending), its items read, not reordered", () => {
    const items = Array.from({ length: 10_000 }, (_, i) => ({ key: 10_000 - i }));
    expect(smallest(items, 3, byKey).map((x) => x.key)).toEqual([1, 2, 3]);
    expect(items[0]!.key).toBe(10_000);
  });
});
