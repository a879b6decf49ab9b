import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SteadyMap } from "../src/util/steady-map.js";

// The live calls' maps (src/util/steady-map.ts): a Map kept from shrinking to empty. What callers
// see must be exactly a Map's behaviour — the padding invisible to get, size and delete.

describe("SteadyMap", () => {
  it("behaves as a Map over any sequence of sets and deletes, its padding never visible (property)", () => {
    const op = fc.oneof(fc.record({ set: fc.string({ maxLength: 4 }), value: fc.integer() }), fc.record({ del: fc.string({ maxLength: 4 }) }), fc.record({ get: fc.string({ maxLength: 4 }) }));
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        const steady = new SteadyMap<string, number>();
        const model = new Map<string, number>();
        for (const o of ops) {
          if ("set" in o) {
            steady.set(o.set, o.value);
            model.set(o.set, o.value);
          } else if ("del" in o) {
            steady.delete(o.del);
            model.delete(o.del);
          } else expect(steady.get(o.get)).toBe(model.get(o.get));
          expect(steady.size).toBe(model.size);
        }
      }),
    );
  });

  it("starts empty, and a key spelled like a padding key's description is an ordinary key", () => {
    const steady = new SteadyMap<string, string>();
    expect(steady.size).toBe(0);
    expect(steady.get("padding 0")).toBeUndefined();
    steady.set("padding 0", "mine");
    expect(steady.get("padding 0")).toBe("mine");
    expect(steady.size).toBe(1);
    steady.delete("padding 0");
    expect(steady.size).toBe(0);
  });
});
