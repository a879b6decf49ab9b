import { describe, expect, it } from "vitest";
import { createFetchSender } from "mcp-yield/client";
import { newKey, startCluster } from "../../scripts/stress/cluster.js";
import { exampleServerStores } from "../support/stores.js";
import { textOf } from "../support/results.js";

// Issue 54, point 7: the example server's charge_once over three `npm start` instances sharing
// one store. 30 concurrent identical first requests with one `_meta.idempotencyKey`, spread over
// the instances, all end with the same text (one charge); the same key with another amount is
// refused with idempotency_conflict; another key charges anew.

const stores = exampleServerStores("charge-once");

describe.each(stores)("charge_once over three instances sharing %s", (_name, env) => {
  it("one key: one charge and one text for 30 concurrent requests; another amount is a conflict; another key charges anew", async () => {
    const instances = await startCluster(3, newKey("c"), env);
    try {
      const senders = instances.map((i) => createFetchSender(i.url, { capabilities: {} }));
      const call = (i: number, amount: number, key: string) => senders[i % 3]!("tools/call", { name: "charge_once", arguments: { amount }, _meta: { idempotencyKey: key } });
      const key = `order-${Date.now()}`;
      const texts = (await Promise.all(Array.from({ length: 30 }, (_, i) => call(i, 25, key)))).map((r) => textOf(r));
      expect(new Set(texts).size).toBe(1);
      expect(texts[0]).toMatch(/^charged 25 as ch_[0-9a-f-]{12}$/);
      await expect(call(1, 26, key)).rejects.toMatchObject({ rpc: { code: -32602, data: { reason: "idempotency_conflict" } } });
      const other = textOf(await call(2, 25, `${key}-b`));
      expect(other).toMatch(/^charged 25 as ch_/);
      expect(other).not.toBe(texts[0]);
    } finally {
      await Promise.all(instances.map((i) => i.stop()));
    }
  }, 90_000);
});
