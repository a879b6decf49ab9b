import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { exceedsJsonLimits } from "../../src/util/json-limits.js";

/** The walk as it was written with Object.keys per object: the reference. */
function reference(value: unknown, maxBytes: number, maxDepth: number): "size" | "depth" | undefined {
  let bytes = 0;
  const values: unknown[] = [value];
  const depths: number[] = [1];
  while (values.length > 0) {
    const v = values.pop();
    const depth = depths.pop()!;
    if (depth > maxDepth) return "depth";
    if (typeof v === "string") bytes += v.length + 2;
    else if (v === null || typeof v !== "object") bytes += 8;
    else if (Array.isArray(v)) {
      bytes += 2 + v.length;
      for (const item of v) {
        values.push(item);
        depths.push(depth + 1);
      }
    } else {
      for (const key of Object.keys(v)) {
        bytes += key.length + 4;
        values.push((v as Record<string, unknown>)[key]);
        depths.push(depth + 1);
      }
      bytes += 2;
    }
    if (bytes > maxBytes) return "size";
  }
  return undefined;
}

const deep = (levels: number): unknown => {
  let v: unknown = 1;
  for (let i = 0; i < levels; i++) v = i % 2 ? [v] : { k: v };
  return v;
};

describe("exceedsJsonLimits", () => {
  it("gives the reference walk's verdict for any value and limits", () => {
    fc.assert(
      fc.property(
        fc.anything({ withNullPrototype: true, withSparseArray: true, withObjectString: true, maxDepth: 6 }),
        fc.integer({ min: 0, max: 400 }),
        fc.integer({ min: 0, max: 8 }),
        (value, maxBytes, maxDepth) => {
          expect(exceedsJsonLimits(value, maxBytes, maxDepth)).toBe(reference(value, maxBytes, maxDepth));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("counts own enumerable keys only, as Object.keys does", () => {
    const proto = { inherited: "x".repeat(500) };
    const child = Object.create(proto) as Record<string, unknown>;
    child.own = 1;
    Object.defineProperty(child, "hidden", { value: "y".repeat(500), enumerable: false });
    expect(exceedsJsonLimits(child, 30, 4)).toBe(reference(child, 30, 4));
    expect(exceedsJsonLimits(child, 30, 4)).toBeUndefined();
    expect(exceedsJsonLimits({ [Symbol("s")]: "z".repeat(500) }, 10, 4)).toBeUndefined();
  });

  it("refuses nesting past the limit without recursing (100,000 levels)", () => {
    expect(exceedsJsonLimits(deep(100_000), Number.MAX_SAFE_INTEGER, 64)).toBe("depth");
    expect(exceedsJsonLimits(deep(63), Number.MAX_SAFE_INTEGER, 64)).toBeUndefined();
    expect(exceedsJsonLimits(deep(64), Number.MAX_SAFE_INTEGER, 64)).toBe("depth");
  });

  it("is right when a getter in the value walks another value meanwhile", () => {
    const inner = { a: "b".repeat(100) };
    // The getter runs while the outer walk holds `big` on its stack, still to be counted.
    const sneaky = {
      big: "s".repeat(2000),
      get later() {
        // A walk inside a walk: each counts its own value only.
        expect(exceedsJsonLimits(inner, 50, 4)).toBe("size");
        expect(exceedsJsonLimits(inner, 500, 4)).toBeUndefined();
        return "x";
      },
    };
    expect(exceedsJsonLimits(sneaky, 1000, 5)).toBe("size");
    expect(exceedsJsonLimits(sneaky, 5000, 5)).toBeUndefined();
    expect(exceedsJsonLimits({ pad: [1], nested: sneaky }, 5000, 2)).toBe("depth");
    // A getter that throws: the error reaches the caller, and the next walk starts clean.
    expect(() =>
      exceedsJsonLimits(
        {
          get boom(): never {
            throw new Error("boom");
          },
        },
        1000,
        5,
      ),
    ).toThrow("boom");
    expect(exceedsJsonLimits({ a: 1 }, 1000, 5)).toBeUndefined();
    expect(exceedsJsonLimits("x".repeat(10), 11, 1)).toBe("size");
  });
});
