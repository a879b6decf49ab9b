import { describe, expect, it } from "vitest";
import { z } from "zod";
import { elicit, tool } from "mcp-yield";
import { accept, simulate } from "mcp-yield/testing";

// A scripted answer the ask's schema refuses is asked for again, round after round: simulate
// says which answer it is, instead of only running out of rounds (issue 24).

const pick = tool({ name: "pick", description: "", input: z.object({}), *run() {
  const n = yield* elicit("A number of at least 10?", z.object({ n: z.number().min(10) }), { key: "n" });
  return n.action === "accept" ? `got ${n.content.n}` : "none";
} });

describe("simulate with an answer the schema refuses", () => {
  it("names the key, the answer and the ask when the call runs out of rounds on it", async () => {
    await expect(simulate(pick, {}, { n: accept({ n: 3 }) }, { maxRounds: 6 })).rejects.toThrow(
      /did not complete within 6 rounds: it asked for "n" in each of the last \d rounds and got the same answer each time, \{"action":"accept","content":\{"n":3\}\}.*Check it against the ask \(elicitation\/create "A number of at least 10\?", schema \{/,
    );
  });

  it("a valid answer completes as before", async () => {
    expect((await simulate(pick, {}, { n: accept({ n: 12 }) })).result).toMatchObject({ content: [{ type: "text", text: "got 12" }] });
  });
});
