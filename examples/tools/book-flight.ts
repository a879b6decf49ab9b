import { elicit, form, step, tool, toolError } from "mcp-yield";
import { z } from "zod";

const Confirm = form(z.object({ confirm: z.boolean().describe("Book it?") }));

/** A draft the (pretend) booking backend creates: runs once per call, memoized in the journal. */
function createDraft(destination: string) {
  return { id: `D-${crypto.randomUUID().slice(0, 8)}`, price: 200 + ((destination.length * 37) % 300) };
}

export const bookFlight = tool({
  name: "book_flight",
  description: "Book a flight after the user confirms the price",
  input: z.object({ destination: z.string().min(1).max(100) }),
  async *run({ destination }, ctx) {
    const draft = yield* step("draft", () => createDraft(destination));
    const answer = yield* elicit(`Book ${destination} for $${draft.price}? (draft ${draft.id})`, Confirm, { key: "confirm" });
    if (answer.action !== "accept" || !answer.content.confirm) return toolError(`Booking cancelled: draft ${draft.id} released.`);
    // The idempotency key is the same on a repeated round, so a real payment API would not charge twice.
    const receipt = yield* step("finalize", () => `R-${ctx.idempotencyKey("payment").slice(5, 13)}`);
    return `Booked ${destination} for $${draft.price}: draft ${draft.id}, receipt ${receipt}.`;
  },
});
