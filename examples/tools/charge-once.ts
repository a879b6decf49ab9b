import { step, tool } from "mcp-yield";
import { z } from "zod";

/**
 * A test fixture for idempotent first requests: a foreground tool whose one step stands in for
 * a payment provider (about 300 ms, a fresh charge id each time it really runs). Sent twice with
 * one `_meta.idempotencyKey` — a retry after a lost reply, on any instance — it charges once and
 * both requests end with the same text; the same key with another amount is refused.
 */
export const chargeOnce = tool({
  name: "charge_once",
  description: "Charge an amount once per idempotency key (a test fixture: nothing is really charged)",
  input: z.object({ amount: z.number().positive().max(1_000_000) }),
  async *run({ amount }) {
    const charge = yield* step("charge", async () => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      return `ch_${crypto.randomUUID().slice(0, 12)}`;
    });
    return `charged ${amount} as ${charge}`;
  },
});
