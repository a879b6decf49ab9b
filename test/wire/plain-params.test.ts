import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { plainCallToolParams, plainElicitResult, plainGetPromptParams, plainReadResourceParams } from "../../src/wire/plain-params.js";
import { callToolParams, elicitResult, getPromptParams, readResourceParams } from "../../src/wire/index.js";

// Params are read by hand when plainly valid, by zod otherwise. The hand check must accept
// only what zod accepts, and read it as zod does; and it must accept what clients really send.

const nullProto = (entries: Record<string, unknown>) => Object.assign(Object.create(null) as object, entries);
const odd = fc.constantFrom<unknown>(
  null,
  [],
  ["a"],
  new Date(0),
  new Map(),
  nullProto({ a: 1 }),
  JSON.parse('{"__proto__": {"x": 1}}'),
  { constructor: 1 },
  { constructor: { prototype: 1 } },
  { [Symbol("s")]: 1 },
  Object.create({ inherited: 1 }) as object,
);
const member = fc.oneof(fc.anything(), odd, fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.string(), fc.jsonValue(), odd), { maxKeys: 4 }));
const params = fc.record(
  { name: fc.oneof(fc.string(), member), uri: fc.oneof(fc.string(), member), arguments: member, inputResponses: member, requestState: fc.oneof(fc.string(), member), _meta: member, extra: member },
  { requiredKeys: [] },
);
// Params objects carrying members zod's looseObject treats specially at the top level.
const withOddMembers = fc.tuple(params, fc.constantFrom("constructor", "symbol", "__proto__", "toString")).map(([p, odd]) => {
  const o: Record<string | symbol, unknown> = { ...p };
  if (odd === "symbol") o[Symbol("s")] = 1;
  else Object.defineProperty(o, odd, { value: { x: 1 }, enumerable: true, writable: true, configurable: true });
  return o;
});
const anyParams = fc.oneof(params, member, withOddMembers);

const cases = [
  { name: "tools/call", plain: plainCallToolParams, schema: callToolParams },
  { name: "prompts/get", plain: plainGetPromptParams, schema: getPromptParams },
  { name: "resources/read", plain: plainReadResourceParams, schema: readResourceParams },
] as const;

const readMembers = ["name", "uri", "arguments", "inputResponses", "requestState", "_meta"] as const;

describe.each(cases)("$name params read by hand", ({ plain, schema }) => {
  it("accept only what zod accepts, and read the members as zod does (property)", () => {
    fc.assert(
      fc.property(anyParams, (raw) => {
        const mine = plain(raw as never) as Record<string, unknown> | undefined;
        if (mine === undefined) return;
        const theirs = schema.safeParse(raw);
        expect(theirs.success).toBe(true);
        for (const key of readMembers) expect(mine[key]).toStrictEqual((theirs.data as Record<string, unknown>)[key]);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("elicitation answers read by hand", () => {
  const field = fc.oneof(fc.string(), fc.double(), fc.integer(), fc.boolean(), fc.array(fc.string(), { maxLength: 3 }), fc.array(fc.oneof(fc.string(), fc.integer()), { maxLength: 3 }), member);
  const answer = fc.record(
    {
      action: fc.oneof(fc.constantFrom("accept", "decline", "cancel", "Accept", ""), member),
      content: fc.oneof(fc.dictionary(fc.string({ maxLength: 6 }), field, { maxKeys: 4 }), member),
      _meta: member,
      extra: member,
    },
    { requiredKeys: [] },
  );

  it("accept only what zod accepts, and read action and content as zod does (property)", () => {
    const oddAnswer = fc.tuple(answer, fc.constantFrom("constructor", "symbol", "__proto__")).map(([a, odd]) => {
      const o: Record<string | symbol, unknown> = { ...a };
      if (odd === "symbol") o[Symbol("s")] = 1;
      else Object.defineProperty(o, odd, { value: 1, enumerable: true, writable: true, configurable: true });
      return o;
    });
    fc.assert(
      fc.property(fc.oneof(answer, member, oddAnswer), (raw) => {
        const mine = plainElicitResult(raw);
        if (mine === undefined) return;
        const theirs = elicitResult.safeParse(raw);
        expect(theirs.success).toBe(true);
        expect(mine.action).toBe(theirs.data!.action);
        expect(mine.content).toStrictEqual(theirs.data!.content);
      }),
      { numRuns: 3000 },
    );
  });

  it("read what clients send by hand", () => {
    const answers = [{ action: "accept", content: { n: 1, s: "x", b: true, tags: ["a"] } }, { action: "decline" }, { action: "cancel", _meta: {} }];
    for (const a of answers) expect(plainElicitResult(a)).toBe(a);
    expect(plainElicitResult({ action: "accept", content: { n: Number.NaN } })).toBeUndefined();
    expect(plainElicitResult({ action: "accept", content: { n: { deep: 1 } } })).toBeUndefined();
  });
});

describe("what clients send is read by hand", () => {
  it("the params of a first round and of a retry", () => {
    const first = { name: "count", arguments: { rounds: 3 }, _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } };
    const retry = { ...first, inputResponses: { n0: { action: "accept", content: { n: 1 } } }, requestState: "y2e.k.abc" };
    for (const p of [first, retry, JSON.parse(JSON.stringify(retry)) as unknown]) expect(plainCallToolParams(p)).toBe(p);
    expect(plainGetPromptParams({ name: "p", arguments: { a: "x" } })).toBeDefined();
    expect(plainGetPromptParams({ name: "p", arguments: { a: 1 } })).toBeUndefined();
    expect(plainReadResourceParams({ uri: "notes://a", requestState: "t" })).toBeDefined();
    expect(plainCallToolParams({ name: "count", arguments: JSON.parse('{"__proto__": {}}') })).toBeUndefined();
  });
});
