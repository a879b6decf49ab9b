import { afterAll, describe, expect, it } from "vitest";
import { createFetchSender } from "mcp-yield/client";
import { newKey, startCluster } from "../../scripts/stress/cluster.js";
import { dropPrefix, REDIS_URL, redisAvailable, testPrefix } from "../support/redis.js";
import { until } from "../support/instances.js";

// The durable fixtures of the example server over real HTTP, two server processes sharing one
// store: each task starts on the first instance, which is killed (SIGKILL) while the task
// sleeps, waits for its approval or backs off between attempts; the second instance finishes
// it — its sweeper wakes the sleeper and the retrier, and the approval is POSTed to its
// webhook route. The signal URL points at the second instance, as it would at a load balancer.

const prefix = testPrefix("durable-http");
afterAll(async () => {
  if (redisAvailable) await dropPrefix(prefix);
});
const caps = { extensions: { "io.modelcontextprotocol/tasks": {} } };
type Task = { taskId: string; status: string; statusMessage?: string; result?: { content: Array<{ text: string }> } };

// On Redis. (On a Redis Cluster and through PgBouncer the durable fixtures run in
// approve-later.test.ts, over three instances, and the SIGKILL scenario in tasks-cluster.test.ts:
// here too they would add CI time, not coverage.)
const kinds: Array<readonly [string, Record<string, string>]> = redisAvailable ? [["Redis", { MCP_YIELD_REDIS_URL: REDIS_URL, MCP_YIELD_REDIS_PREFIX: prefix }]] : [];

describe.each(kinds)("durable fixtures across two processes sharing %s, the first killed mid-wait", (_name, storeEnv) => {
  it("remind_later, await_approval and flaky_fetch complete on the second instance", async () => {
    const env = { ...storeEnv, MCP_YIELD_TASK_LEASE_MS: "1000" };
    const keys = newKey("d");
    const [a, b] = await startCluster(2, keys, env);
    // Signal URLs name the second instance (the "load balancer" here): restart the first with it.
    const base = `http://127.0.0.1:${b!.port}/signals/`;
    a!.env.MCP_YIELD_SIGNAL_BASE_URL = base;
    await a!.restart();
    try {
      const onA = createFetchSender(a!.url, { capabilities: caps });
      const onB = createFetchSender(b!.url, { capabilities: caps });
      const start = async (name: string, args: Record<string, unknown>) => ((await onA("tools/call", { name, arguments: args })) as Task).taskId;
      const get = async (taskId: string) => (await onB("tasks/get", { taskId })) as Task;

      const reminder = await start("remind_later", { seconds: 2 });
      const approval = await start("await_approval", { what: "the release" });
      const retrier = await start("flaky_fetch", {});
      // Each is underway on the first instance: the approval shows its URL, the fetch failed once.
      const message = await until(async () => (await get(approval)).statusMessage?.match(/to (http\S+)$/)?.[1], 15_000);
      expect(message.startsWith(base)).toBe(true);
      expect((await get(reminder)).status).toBe("working");
      await a!.stop("SIGKILL");

      const response = await fetch(message, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ approved: true }) });
      expect(response.status).toBe(200);
      const replay = await fetch(message, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ approved: false }) });
      expect([409, 410]).toContain(replay.status); // used (or its task already ended)
      const forged = await fetch(`${base}${message.slice(base.length, -4)}AAAA`, { method: "POST", body: "{}" });
      expect(forged.status).toBe(404);

      const done = async (taskId: string) =>
        until(async () => {
          const t = await get(taskId);
          return t.status === "completed" || t.status === "failed" ? t : undefined;
        }, 20_000);
      expect((await done(reminder)).result!.content[0]!.text).toBe("reminded");
      expect((await done(approval)).result!.content[0]!.text).toContain("approved");
      expect((await done(retrier)).result!.content[0]!.text).toBe("attempts: 3");
    } finally {
      await Promise.all([a!.stop(), b!.stop()]);
    }
  }, 60_000);
});
