import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson, deepFreeze } from "../../src/internal.js";
import { canonicalEntries } from "../../src/state/canonical.js";
import { jsonText, numberJson, quoteJson } from "../../src/state/json-text.js";
import { inputRequestsJson } from "../../src/journal/journal.js";

// json-text.ts writes JSON for plain data in JavaScript instead of calling JSON.stringify; what
// it writes is kept (a round's response in the store, canonical text under every digest), so
// it must be JSON.stringify's text to the character, or JSON.stringify's own exception.

/** What `f(value)` gives: its text, or the class and message of what it threw. */
function outcome(f: (value: unknown) => string | undefined, value: unknown): { text: string | undefined } | { threw: string } {
  try {
    return { text: f(value) };
  } catch (error) {
    return { threw: `${(error as Error).constructor.name}: ${(error as Error).message}` };
  }
}

/** canonicalJson as it was written before json-text.ts: JSON.stringify for every key and primitive. */
function canonicalReference(value: unknown): string {
  if (value === null || typeof value !== "object") {
    if (typeof value === "bigint") return `"${value.toString()}n"`;
    return JSON.stringify(value) ?? "null";
  }
  if (Array.isArray(value)) return `[${value.map((v: unknown) => (v === undefined ? "null" : canonicalReference(v))).join(",")}]`;
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  const members = Object.keys(value)
    .sort()
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined && typeof (value as Record<string, unknown>)[k] !== "function")
    .map((k) => `${JSON.stringify(k)}:${canonicalReference((value as Record<string, unknown>)[k])}`);
  return `{${members.join(",")}}`;
}

/** Strings a JSON writer can get wrong: controls, quotes, backslashes, lone and paired surrogates, U+2028. */
const trickyString = fc.oneof(
  fc.string({ unit: "binary", maxLength: 80 }),
  fc.string({ unit: fc.constantFrom("a", '"', "\\", "\n", "\u0000", "\u001f", "\u007f", "\u2028", "\ud800", "\udc00", "\ud83d\ude00", "é"), maxLength: 70 }),
);

describe("JSON text without JSON.stringify", () => {
  it("quotes any string exactly as JSON.stringify does (property)", () => {
    fc.assert(
      fc.property(trickyString, (s) => {
        expect(quoteJson(s)).toBe(JSON.stringify(s));
      }),
      { numRuns: 2000 },
    );
    // Around the length where the scan hands over to JSON.stringify.
    for (const n of [0, 1, 63, 64, 65, 200]) for (const c of ["x", '"', "\ud800"]) expect(quoteJson(c.repeat(n))).toBe(JSON.stringify(c.repeat(n)));
  });

  it("writes any number exactly as JSON.stringify does — whole numbers split in two parts around their bounds included (property)", () => {
    // Whole numbers from 2^31 to 2^31 millions are written as two small integers (times in
    // milliseconds): a dropped leading zero of the low six digits, or a millions part rounded by
    // the division, would give another number's text.
    const split = fc.oneof(
      fc.integer({ min: 2 ** 31 - 2, max: 2 ** 31 * 1e6 + 2 }),
      fc.tuple(fc.integer({ min: 2147, max: 2 ** 31 - 1 }), fc.constantFrom(0, 1, 9, 10, 999, 1_000, 1_005, 10_010, 99_999, 100_000, 999_999)).map(([millions, low]) => millions * 1e6 + low),
      fc.integer({ min: -1000, max: 1000 }).map((d) => 2 ** 31 * 1e6 + d),
      fc.integer({ min: -1000, max: 1000 }).map((d) => Number.MAX_SAFE_INTEGER - d),
      fc.integer({ min: 1_700_000_000_000, max: 1_900_000_000_000 }),
    );
    fc.assert(
      fc.property(fc.oneof(split, fc.double(), fc.integer()), (n) => {
        expect(numberJson(n)).toBe(JSON.stringify(n));
      }),
      { numRuns: 5000 },
    );
    for (const n of [
      2 ** 31,
      2 ** 31 - 1,
      2 ** 31 + 0.5,
      1e12,
      1e12 + 1,
      1_764_755_000_000,
      1_764_755_000_007,
      2 ** 31 * 1e6 - 1,
      2 ** 31 * 1e6,
      -(2 ** 31) - 1,
      2 ** 53,
      Infinity,
      -Infinity,
      Number.NaN,
      -0,
    ])
      expect(numberJson(n)).toBe(JSON.stringify(n));
  });

  it("writes any value exactly as JSON.stringify does, or throws what it throws (property)", () => {
    const anything = fc.anything({
      key: trickyString,
      values: [trickyString, fc.double(), fc.integer(), fc.boolean(), fc.constant(null), fc.constant(undefined), fc.constant(-0)],
      maxDepth: 4,
      withBigInt: true,
      withBoxedValues: true,
      withDate: true,
      withMap: true,
      withSet: true,
      withNullPrototype: true,
      withObjectString: true,
      withSparseArray: true,
      withTypedArray: true,
    });
    fc.assert(
      fc.property(anything, (v) => {
        expect(outcome(jsonText, v)).toEqual(outcome(JSON.stringify, v));
      }),
      { numRuns: 2000 },
    );
  });

  it("leaves what it does not write to JSON.stringify: toJSON, functions, symbols, class instances, deep nesting, cycles", () => {
    class Point {
      constructor(
        readonly x: number,
        readonly y: number,
      ) {}
    }
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = { back: cyclic };
    let deep: unknown = "bottom";
    for (let i = 0; i < 40; i++) deep = i % 2 ? [deep] : { d: deep };
    const cases: unknown[] = [
      { when: new Date(0), nested: { toJSON: () => "mine" } },
      { f: () => 1, s: Symbol("s"), u: undefined, list: [() => 1, Symbol("t"), undefined] },
      { p: new Point(1, 2), m: new Map([[1, 2]]) },
      Object.assign(Object.create(null) as object, { z: 1, a: [true, false, null] }),
      { [Symbol("hidden")]: 1, 2: "two", 1: "one", b: "b" },
      deep,
      cyclic,
      { n: [NaN, Infinity, -Infinity, -0, 1e21, 5e-324] },
      undefined,
      () => 1,
      10n,
    ];
    for (const v of cases) expect(outcome(jsonText, v)).toEqual(outcome(JSON.stringify, v));
  });

  it("writes a deep-frozen part (an elicitation schema) once, and the same text every time", () => {
    const schema = deepFreeze({ type: "object", properties: { n: { type: "integer", description: 'a "quoted" one' } }, required: ["n"] });
    const asks = (message: string) => ({ q: { method: "elicitation/create", params: { mode: "form", message, requestedSchema: schema } } });
    for (const message of ["Number 1?", "Number 2?", 'Say "hi"\n']) expect(jsonText(asks(message))).toBe(JSON.stringify(asks(message)));
  });

  it("keeps canonical text (argument digests, fingerprints) exactly what it was (property)", () => {
    const value = fc.oneof(fc.jsonValue({ maxDepth: 4 }), fc.dictionary(trickyString, fc.oneof(trickyString, fc.double(), fc.constant(undefined), fc.constant(-0))));
    fc.assert(
      fc.property(value, (v) => {
        expect(canonicalJson(v)).toBe(canonicalReference(v));
      }),
      { numRuns: 2000 },
    );
    expect(canonicalJson({ b: [1, undefined, "x\u2028"], a: { d: new Date(0), c: 2n } })).toBe(canonicalReference({ b: [1, undefined, "x\u2028"], a: { d: new Date(0), c: 2n } }));
  });

  it("orders an object's keys as the builtin sort does, few keys or many (property)", () => {
    // Up to 16 keys are sorted by hand (canonical.ts sortFew), more by Array#sort: both must give the same text.
    fc.assert(
      fc.property(fc.dictionary(trickyString, fc.nat(), { minKeys: 0, maxKeys: 40 }), (v) => {
        expect(canonicalJson(v)).toBe(canonicalReference(v));
      }),
      { numRuns: 1000 },
    );
  });

  it("writes a map of answers as the object of its entries would be written, key order and all (property)", () => {
    // The answers digest of a round with a store: canonicalEntries(map) stands for
    // canonicalJson(Object.fromEntries(map)), the text every kept response's digest was made of.
    const member = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.constant(undefined),
      fc.constant(() => 1),
      fc.record({ action: fc.constantFrom("accept", "decline", "cancel"), content: fc.dictionary(trickyString, fc.jsonValue({ maxDepth: 2 })) }),
    );
    const key = fc.oneof(trickyString, fc.constantFrom("__proto__", "constructor", "0", "10", "2", "-1", "01", "elicit-0"));
    fc.assert(
      fc.property(fc.array(fc.tuple(key, member), { maxLength: 40 }), (entries) => {
        const map = new Map(entries);
        expect(canonicalEntries(map)).toBe(canonicalJson(Object.fromEntries(map)));
        expect(canonicalEntries(map)).toBe(canonicalReference(Object.fromEntries(map)));
      }),
      { numRuns: 1000 },
    );
  });
});

describe("a round's asks as JSON (journal inputRequestsJson)", () => {
  it("writes any round's inputRequests exactly as JSON.stringify does, plain form elicitations from their parts (property)", () => {
    const frozenSchema = deepFreeze({ type: "object", properties: { n: { type: "integer", description: 'a "number"\n' } }, required: ["n"] });
    const looseSchema = { type: "object", properties: { n: { type: "integer" } } };
    const form = fc.record({ mode: fc.constant("form"), message: trickyString, requestedSchema: fc.constantFrom<object>(frozenSchema, looseSchema) });
    // The shape made from elicit(), and near misses: members in another order, one more or fewer,
    // another mode, a message that is not a string, a toJSON, another method, another kind of ask.
    const request = fc.oneof(
      form.map((params) => ({ method: "elicitation/create", params })),
      form.map((params) => ({ params, method: "elicitation/create" })),
      form.map(({ mode, message, requestedSchema }) => ({ method: "elicitation/create", params: { message, mode, requestedSchema } })),
      form.map((params) => ({ method: "elicitation/create", params: { ...params, extra: 1 } })),
      form.map(({ mode, message }) => ({ method: "elicitation/create", params: { mode, message } })),
      form.map((params) => ({ method: "elicitation/create", params: { ...params, mode: "url" } })),
      form.map((params) => ({ method: "elicitation/create", params: { ...params, message: 7 } })),
      form.map((params) => ({ method: "elicitation/create", params, toJSON: (key: string) => ({ key }) })),
      form.map((params) => ({ method: "elicitation/create", params: { ...params, requestedSchema: undefined } })),
      form.map((params) => ({ method: "sampling/createMessage", params })),
      fc.constant({ method: "roots/list" }),
      fc.constant(undefined),
    );
    const asks = fc.dictionary(fc.oneof(trickyString, fc.constantFrom("elicit-0", "0", "12", "__proto__")), request, { maxKeys: 4 });
    fc.assert(
      fc.property(asks, (inputRequests) => {
        expect(outcome((v) => inputRequestsJson(v as Record<string, unknown>), inputRequests)).toEqual(outcome((v) => JSON.stringify(v), inputRequests));
      }),
      { numRuns: 3000 },
    );
    // A form ask's text made from parts is the very text of the whole.
    const one = { "elicit-0": { method: "elicitation/create", params: { mode: "form", message: "Number 1 of 3?", requestedSchema: frozenSchema } } };
    expect(inputRequestsJson(one)).toBe(JSON.stringify(one));
    expect(inputRequestsJson({})).toBe("{}");
  });
});
