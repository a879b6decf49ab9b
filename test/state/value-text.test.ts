import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { UnsupportedValueError } from "mcp-yield";
import { decodeValue, encodeValue } from "../../src/internal.js";
import { encodeValueWalked } from "../../src/state/value-text.js";

// Everything the journal carries must come back exactly, and decode must hand out fresh objects.

const key = fc.oneof(fc.string(), fc.constantFrom("__proto__", "constructor", "prototype", "~~a", "~~~~b", "$", ""));
const leaf = fc.oneof(
  fc.string(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.double(), // includes -0, NaN, ±Infinity
  fc.integer(),
  fc.bigInt(),
  fc.date({ noInvalidDate: true }),
);
const { value } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    leaf,
    fc.array(tie("value"), { maxLength: 4 }),
    fc.array(fc.tuple(key, tie("value")), { maxLength: 4 }).map((entries) => {
      const o: Record<string, unknown> = {};
      // defineProperty: a "__proto__" key is an own member, as JSON.parse would make it
      for (const [k, v] of entries) Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
      return o;
    }),
    fc.array(fc.tuple(tie("value"), tie("value")), { maxLength: 3 }).map((entries) => new Map(entries)),
    fc.array(tie("value"), { maxLength: 3 }).map((items) => new Set(items)),
  ),
}));

describe("journal value text", () => {
  it("round-trips every carriable value exactly, and encoding its decoding gives the same text (property)", () => {
    fc.assert(
      fc.property(value, (v) => {
        const text = encodeValue(v);
        const back = decodeValue(text);
        // isDeepStrictEqual: Object.is on numbers, prototypes, Maps, Sets, Dates, own "constructor" keys
        expect(isDeepStrictEqual(back, v)).toBe(true);
        expect(encodeValue(back)).toBe(text);
      }),
      { numRuns: 3000 },
    );
  });

  it("hands out a fresh object every time", () => {
    const text = encodeValue({ a: { b: [1] }, d: new Date(0) });
    const one = decodeValue(text) as { a: { b: number[] }; d: Date };
    one.a.b.push(2);
    one.d.setTime(5);
    expect(decodeValue(text)).toStrictEqual({ a: { b: [1] }, d: new Date(0) });
  });

  it("hands out a fresh copy of a short plain value too (decoded once, copied after)", () => {
    const text = encodeValue({ a: { b: [1] }, n: -1.5 });
    for (let i = 0; i < 3; i++) {
      const got = decodeValue(text) as { a: { b: number[] }; n: number };
      expect(got).toStrictEqual({ a: { b: [1] }, n: -1.5 });
      got.a.b.push(2);
      got.n = 0;
    }
    const proto = decodeValue('{"__proto__":{"polluted":true}}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(proto)).toBe(Object.prototype);
    expect(Object.hasOwn(proto, "__proto__")).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(decodeValue('{"__proto__":{"polluted":true}}')).toStrictEqual(JSON.parse('{"__proto__":{"polluted":true}}'));
  });

  it("refuses what it cannot carry, naming the path", () => {
    class Money {
      cents = 1;
    }
    const cases: Array<[unknown, string]> = [
      [new Money(), "$ is an instance of Money"],
      [{ list: [1, { f() {} }] }, "$.list[1].f is a function (f)"],
      [{ "a b": Symbol("s") }, '$["a b"] is a symbol'],
      [new Map([["k", new Error("x")]]), "$.<Map value #0> is an instance of Error"],
      [[1, , 3], "$ is a sparse array (nothing at index 1)"],
      [Object.assign([1], { extra: 2 }), "$ is an array with members other than its items"],
      [{ [Symbol("k")]: 1 }, "$ is an object with symbol keys"],
      [Promise.resolve(1), "$ is an instance of Promise"],
    ];
    for (const [v, message] of cases) {
      expect(() => encodeValue(v)).toThrow(UnsupportedValueError);
      expect(() => encodeValue(v)).toThrow(message);
    }
    let deep: unknown = 1;
    for (let i = 0; i < 300; i++) deep = [deep];
    expect(() => encodeValue(deep)).toThrow(/nested deeper than 256/);
  });

  it("two references to one object come back the same way on every decoding", () => {
    const shared = { n: 1 };
    const text = encodeValue({ a: shared, b: shared, d: new Date(0) });
    const x = decodeValue(text) as { a: object; b: object };
    const y = decodeValue(text) as { a: object; b: object };
    expect(x.a === x.b).toBe(y.a === y.b);
  });
});

describe("the fast plain-JSON check", () => {
  // encodeValue skips the full walk for values plain JSON carries exactly; it must give the
  // walk's text, or its error, for every value — the odd ones included.
  class Money {
    cents = 1;
  }
  const cyclic = (): unknown => {
    const o: Record<string, unknown> = { a: 1 };
    o.self = { back: o };
    return o;
  };
  const nested = (levels: number, inner: unknown): unknown => {
    let v = inner;
    for (let i = 0; i < levels; i++) v = i % 2 ? [v] : { k: v };
    return v;
  };
  const odd = fc.oneof(
    fc.constantFrom<unknown>(
      new Money(),
      Symbol("s"),
      () => 1,
      [1, , 3],
      Object.assign([1], { extra: 2 }),
      { [Symbol("k")]: 1 },
      Object.create({ inherited: 1 }) as unknown,
      Object.create(null) as unknown,
      new Date(Number.NaN),
      new Uint8Array(2),
      -0,
      Number.NaN,
      10n,
    ),
    fc.constant(null).map(cyclic),
    fc.tuple(fc.integer({ min: 55, max: 75 }), fc.oneof(fc.constant(1), fc.constant(-0), fc.constant(new Money()))).map(([n, inner]) => nested(n, inner)),
  );
  const { mixed } = fc.letrec<{ mixed: unknown }>((tie) => ({
    mixed: fc.oneof({ depthSize: "small" }, value, odd, fc.array(tie("mixed"), { maxLength: 3 }), fc.dictionary(key, tie("mixed"), { maxKeys: 3, noNullPrototype: true })),
  }));
  const outcome = (encode: (v: unknown) => string, v: unknown) => {
    try {
      return { text: encode(v) };
    } catch (error) {
      return { error: String((error as Error).message) };
    }
  };

  it("gives the full walk's text or error for every value (property)", () => {
    fc.assert(
      fc.property(mixed, (v) => {
        expect(outcome(encodeValue, v)).toStrictEqual(outcome(encodeValueWalked, v));
      }),
      { numRuns: 2000 },
    );
  });
});
