import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { dropKeptResponse } from "../../src/store/kept-response.js";
import { doneRecord } from "../../src/runtime/single-use/redeem.js";

// The record of an answered round is written by hand for the common case (a result asking for
// input, its token spliced in unescaped): it must say exactly what JSON.stringify would.
const token = fc.stringMatching(/^[A-Za-z0-9_.-]{0,600}$/);
const json = fc.jsonValue({ maxDepth: 3 });
const inputRequired = fc.record({ resultType: fc.constant("input_required"), inputRequests: fc.dictionary(fc.string(), json), requestState: fc.oneof(token, fc.string()) });
const response = fc.oneof(
  inputRequired.map((result) => ({ result })),
  fc.tuple(inputRequired, fc.string(), json).map(([result, key, extra]) => ({ result: { ...result, [key]: extra } })),
  json.map((result) => ({ result })),
  fc.record({ error: fc.record({ code: fc.integer(), message: fc.string() }) }),
);

describe("the record of an answered round", () => {
  it("reads back as the very response, whatever the response (property)", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9_-]{43}$/), response, (digest, r) => {
        const text = doneRecord(digest, r as never);
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify({ d: digest, s: "done", r })));
      }),
      { numRuns: 500 },
    );
  });

  it("splices the token in only where it needs no escaping, and stays shrinkable by a full memory store", () => {
    const quoted = 'a"b\\c\u2028';
    const asked = { resultType: "input_required", inputRequests: { q: { method: "elicitation/create", params: { message: "Number?" } } } };
    for (const requestState of ["y2e.k.abc-_", quoted]) {
      const text = doneRecord("d1", { result: { ...asked, requestState } });
      expect(JSON.parse(text).r.result.requestState).toBe(requestState);
      // The memory store shrinks a kept response by reading the record's head as text.
      expect(dropKeptResponse("redeem:n", text)).toBe('{"d":"d1","s":"done","dropped":true}');
    }
    // A result that serializes itself its own way is serialized its way.
    class Asked {
      resultType = "input_required";
      inputRequests = {};
      requestState = "y2e.k.abc";
      toJSON() {
        return { resultType: "input_required", inputRequests: {}, requestState: "y2e.k.other" };
      }
    }
    expect(JSON.parse(doneRecord("d1", { result: new Asked() })).r.result.requestState).toBe("y2e.k.other");
  });
});
