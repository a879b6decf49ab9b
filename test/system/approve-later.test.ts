import { describe, expect, it } from "vitest";
import { createFetchSender } from "mcp-yield/client";
import { newKey, startCluster } from "../../scripts/stress/cluster.js";
import { deployedStores, exampleServerStores } from "../support/stores.js";
import { until } from "../support/instances.js";

// Issue 57, point 10: the example server's approve_later over three `npm start` instances
// sharing one store. The approval is POSTed while the task sleeps — to another instance than the
// one that made the URL, as a load balancer would send it — and answered 202; the task completes
// `approved` after its sleep with no further POST; the same POST again is refused (4xx).

// On Redis and PostgreSQL, and as users deploy them beyond one server: a Redis Cluster (through
// MCP_YIELD_REDIS_CLUSTER), PostgreSQL through PgBouncer in transaction mode.
const stores = [...exampleServerStores("approve-later"), ...(await deployedStores("approve-later"))];
const caps = { extensions: { "io.modelcontextprotocol/tasks": {} } };
type Task = { taskId: string; status: string; statusMessage?: string; result?: { content: Array<{ text: string }> } };

describe.each(stores)("approve_later over three instances sharing %s", (_name, env) => {
  it("an approval POSTed during the sleep is kept (202) and taken after it; the same POST again is refused", async () => {
    const instances = await startCluster(3, newKey("a"), env);
    try {
      const [a, b, c] = instances.map((i) => createFetchSender(i.url, { capabilities: caps }));
      const { taskId } = (await a!("tools/call", { name: "approve_later", arguments: { delaySeconds: 3 } })) as Task;
      const url = await until(async () => ((await b!("tasks/get", { taskId })) as Task).statusMessage?.match(/^Approval URL: (http\S+)$/)?.[1], 15_000);
      // Sent to the third instance while the task sleeps.
      const third = new URL(instances[2]!.url);
      const target = new URL(url);
      target.host = third.host;
      const post = () => fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ approved: true }) });
      const sent = await post();
      expect(sent.status, await sent.clone().text()).toBe(202);
      expect((await c!("tasks/get", { taskId })) as Task).toMatchObject({ status: "working" });
      const again = await post();
      expect(again.status).toBeGreaterThanOrEqual(400);
      expect(again.status).toBeLessThan(500);
      const done = await until(async () => {
        const t = (await c!("tasks/get", { taskId })) as Task;
        return t.status === "working" ? undefined : t;
      }, 30_000);
      expect(done.status).toBe("completed");
      expect(done.result!.content[0]!.text).toBe("approved");
      expect((await post()).status).toBe(409); // used, the task done
    } finally {
      await Promise.all(instances.map((i) => i.stop()));
    }
  }, 90_000);
});
