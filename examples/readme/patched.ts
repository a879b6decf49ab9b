import { elicit, patched, step, tool } from "mcp-yield";
import { z } from "zod";

const Confirm = z.object({ confirm: z.boolean() });

export const book = tool({
  name: "book",
  description: "Book a trip once the user confirms (twice, since this deployment)",
  input: z.object({ destination: z.string() }),
  *run({ destination }) {
    const price = yield* step("quote", () => 420);
    if (yield* patched("confirm-twice")) {
      // New calls only: calls in flight from before this deployment replay the old path.
      const sure = yield* elicit(`Really book ${destination}?`, Confirm, { key: "again" });
      if (sure.action !== "accept" || !sure.content.confirm) return "Not booked.";
    }
    const ok = yield* elicit(`Book ${destination} for $${price}?`, Confirm, { key: "confirm" });
    return ok.action === "accept" && ok.content.confirm ? `Booked ${destination}.` : "Not booked.";
  },
});
