import { describe, expect, it } from "vitest";
import { accept, cancel, decline, simulate } from "mcp-yield/testing";
import { bookFlight } from "../../examples/tools/book-flight.js";

const text = (r: { content: Array<Record<string, unknown>> }) => r.content.map((c) => String(c.text)).join("\n");

describe("book_flight (the DESIGN.md flow)", () => {
  it("accept with confirm true books, naming the draft", async () => {
    const sim = await simulate(bookFlight, { destination: "Lisbon" }, { confirm: accept({ confirm: true }) });
    expect(sim.rounds).toHaveLength(1);
    const ask = sim.rounds[0]!.inputRequests.confirm!;
    expect(ask.method).toBe("elicitation/create");
    const message = (ask.params as { message: string }).message;
    const draftId = /draft (D-[0-9a-f]{8})/.exec(message)?.[1];
    expect(message).toMatch(/Book Lisbon for \$\d+\?/);
    expect(draftId).toBeDefined();
    expect(sim.result.isError).toBeUndefined();
    expect(text(sim.result)).toContain("Booked Lisbon");
    // The draft was created once: the final answer names the same id the question did.
    expect(text(sim.result)).toContain(draftId!);
  });

  it.each([
    ["decline", decline()],
    ["cancel", cancel()],
    ["confirm false", accept({ confirm: false })],
  ])("%s -> isError 'cancelled'", async (_label, answer) => {
    const sim = await simulate(bookFlight, { destination: "Kyoto" }, { confirm: answer });
    expect(sim.result.isError).toBe(true);
    expect(text(sim.result)).toMatch(/cancelled/);
  });

  it("an invalid answer is asked again, then a valid one completes", async () => {
    const sim = await simulate(
      bookFlight,
      { destination: "Oslo" },
      {
        confirm: [accept({ confirm: "yes" }), () => ({ action: "maybe" }), accept({}), accept({ confirm: true })],
      },
    );
    expect(sim.rounds).toHaveLength(4);
    const messages = sim.rounds.map((r) => (r.inputRequests.confirm!.params as { message: string }).message);
    // The same question, the same draft, every time — each re-ask followed by why.
    const [question, ...reasons] = [messages[0]!, ...messages.slice(1).map((m) => m.slice(messages[0]!.length))];
    expect(messages.every((m) => m.startsWith(question))).toBe(true);
    expect(reasons).toEqual([
      "\n\n(Your previous answer was not accepted: confirm: Invalid input: expected boolean, received string. Please answer again.)",
      '\n\n(Your previous answer was not accepted: not an elicitation result (action: Invalid option: expected one of "accept"|"decline"|"cancel"). Please answer again.)',
      "\n\n(Your previous answer was not accepted: confirm: Invalid input: expected boolean, received undefined. Please answer again.)",
    ]);
    expect(text(sim.result)).toContain("Booked Oslo");
  });
});
