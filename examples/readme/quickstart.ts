import { elicit, step, tool, toolError } from "mcp-yield";
import { z } from "zod";

export const bookFlight = tool({
  name: "book_flight",
  description: "Book a flight after the user confirms the price",
  input: z.object({ destination: z.string() }),
  async *run({ destination }, ctx) {
    const draft = yield* step("draft", () => createDraft(destination)); // runs once per call
    const answer = yield* elicit(`Book ${destination} for $${draft.price}?`, z.object({ confirm: z.boolean() }), { key: "confirm" }); // typed, validated
    if (answer.action !== "accept" || !answer.content.confirm) return toolError("Booking cancelled.");
    const receipt = yield* step("pay", () => pay(draft, ctx.idempotencyKey("pay"))); // once, even if a round repeats
    return `Booked ${destination}: ${receipt}`;
  },
});

// Stand-ins for your backend.
async function createDraft(destination: string) {
  return { id: `D-${destination.toLowerCase()}`, price: 120 };
}
async function pay(draft: { id: string; price: number }, idempotencyKey: string) {
  return `receipt ${draft.id}-${idempotencyKey.slice(5, 11)}`;
}
