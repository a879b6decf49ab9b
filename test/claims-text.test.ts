import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Claims, claimsJson } from "../src/state/claims.js";

// The claims are written out by hand for speed; they must be exactly JSON.stringify's text, so
// tokens read the same whoever made them.

const text = fc.string({ unit: "binary", maxLength: 24 });
const number = fc.oneof(fc.integer(), fc.double(), fc.constantFrom(Number.MAX_SAFE_INTEGER, -0, Number.NaN, Number.POSITIVE_INFINITY));
const claims = fc.record(
  {
    iat: number,
    exp: number,
    m: fc.constantFrom("tools/call", "prompts/get", "resources/read"),
    t: text,
    a: text,
    n: text,
    d: fc.oneof(fc.jsonValue(), fc.constant(undefined), fc.date({ noInvalidDate: true })),
    sj: fc.oneof(fc.jsonValue(), fc.constant(undefined)),
    x: fc.constant(1 as const),
    p: text,
  },
  { requiredKeys: ["iat", "exp", "m", "t", "a", "n", "d"] },
);

describe("claims as text", () => {
  it("are JSON.stringify's text of the claims, member for member (property)", () => {
    fc.assert(
      fc.property(claims, (c) => {
        // Members in the order mint sets them.
        const ordered: Record<string, unknown> = { iat: c.iat, exp: c.exp, m: c.m, t: c.t, a: c.a, n: c.n, d: c.d };
        for (const k of ["sj", "x", "p"] as const) if (k in c) ordered[k] = c[k];
        expect(claimsJson(ordered as Claims)).toBe(JSON.stringify(ordered));
      }),
      { numRuns: 1000 },
    );
  });
});
