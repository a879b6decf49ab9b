import { describe, expect, it } from "vitest";
import { z } from "zod";
import { elicit, step, tool } from "mcp-yield";
import { accept, simulate } from "mcp-yield/testing";

// verifyReplay / paths: "both" catch code that branches on ambient nondeterminism every time,
// not by chance: Math.random and Date.now answer from sequences that never meet on the round
// and on its check replay.

const Ok = z.object({ ok: z.boolean() });
const answers = { a: accept({ ok: true }), b: accept({ ok: true }) };

describe("ambient nondeterminism under verifyReplay", () => {
  const branches: Array<[string, () => boolean]> = [
    ["Math.random() < 0.5", () => Math.random() < 0.5],
    ["Math.random() < 0.1", () => Math.random() < 0.1],
    ["Date.now() is even", () => Date.now() % 2 === 0],
    ["the hour of Date.now() is before noon", () => new Date(Date.now()).getUTCHours() < 12],
  ];
  it.each(branches)("a branch on %s is caught 100 times of 100", async (_name, branch) => {
    const flaky = tool({
      name: "flaky",
      description: "",
      input: z.object({}),
      async *run() {
        if (branch()) yield* elicit("A?", Ok, { key: "a" });
        else yield* elicit("B?", Ok, { key: "b" });
        return "done";
      },
    });
    let caught = 0;
    for (let i = 0; i < 100; i++) {
      const outcome = await simulate(flaky, {}, answers, { paths: "both" }).then(
        () => "passed",
        (e: Error) => e.message,
      );
      if (/not deterministic/.test(outcome)) caught++;
    }
    expect(caught).toBe(100);
  });

  it("inside a step both are left alone (a step's result is recorded, not replayed), and are restored after", async () => {
    const random = Math.random;
    const now = Date.now;
    const fine = tool({
      name: "fine",
      description: "",
      input: z.object({}),
      async *run() {
        const r = yield* step("roll", () => Math.random());
        yield* elicit(`Rolled ${r}?`, Ok, { key: "a" });
        return String(r >= 0 && r < 1);
      },
    });
    for (let i = 0; i < 20; i++) {
      const sim = await simulate(fine, {}, { a: accept({ ok: true }) }, { paths: "both" });
      expect(sim.result.content).toEqual([{ type: "text", text: "true" }]);
    }
    expect(Math.random).toBe(random);
    expect(Date.now).toBe(now);
  });
});
