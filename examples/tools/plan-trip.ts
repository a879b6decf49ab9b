import { elicit, form, tool, toolError } from "mcp-yield";
import { z } from "zod";

const Name = form(z.object({ name: z.string().min(1).max(80).describe("Your name") }));
const Destination = form(z.object({ destination: z.enum(["Lisbon", "Kyoto", "Reykjavik", "Nairobi"]).describe("Where to?") }));
const Confirm = form(z.object({ confirm: z.boolean() }));

export const planTrip = tool({
  name: "plan_trip",
  description: "Plan a trip in three questions: your name, a destination, a confirmation",
  input: z.object({}),
  *run() {
    const who = yield* elicit("What is your name?", Name, { key: "name" });
    if (who.action !== "accept") return toolError("Trip planning cancelled.");
    const where = yield* elicit(`Where would you like to go, ${who.content.name}?`, Destination, { key: "destination" });
    if (where.action !== "accept") return toolError("Trip planning cancelled.");
    const ok = yield* elicit(`Plan a trip to ${where.content.destination} for ${who.content.name}?`, Confirm, { key: "confirm" });
    if (ok.action !== "accept" || !ok.content.confirm) return toolError("Trip planning cancelled.");
    return `Trip planned: ${who.content.name} is going to ${where.content.destination}.`;
  },
});
