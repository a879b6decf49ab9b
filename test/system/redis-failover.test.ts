import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createRuntime, type Runtime, type Store, step, tool } from "mcp-yield";
import { createRedisStore } from "mcp-yield/redis";
import { testKey } from "../support/keys.js";
import { until } from "../support/instances.js";
import { type RunningRedisCluster, redisClusterAvailable, startRedisCluster } from "../support/redis-cluster.js";

// Issue 55, point 2: with minReplicas, a write is acknowledged only once a replica holds it, so
// a master SIGKILLed right after acknowledging a step's result never leads to that step running
// again: its replica, promoted, has the result.
// A Redis Cluster on loopback (3 masters, 3 replicas): while `charge` runs, the master holding
// the task is cut from its replica (which connects again within a second) — replication lags, as
// it does under load — and the master is killed the moment the store acknowledges the write that
// records `charge`, before the runtime goes on. Its replica is promoted; the killed master,
// restarted, rejoins as a replica (until then, with minReplicas, that shard refuses writes).

const TASKS = { clientCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } };
const keys = [testKey("fo", 11)];
const clusters: RunningRedisCluster[] = [];
afterAll(async () => {
  for (const c of clusters) await c.stop();
});

async function crashAfterCharge(minReplicas: number): Promise<{ charges: number; text: string }> {
  const cluster = await startRedisCluster();
  clusters.push(cluster);
  const prefix = "failover:";
  let charges = 0;
  let taskKey = "";
  const pay = tool({
    name: "pay",
    description: "",
    input: z.object({}),
    task: "required",
    async *run(_input, ctx) {
      const receipt = yield* step("charge", async () => {
        charges++;
        // (The task's key is known once tools/call has answered.)
        if (charges === 1) await cluster.cutReplica(await cluster.masterOf(await until(async () => taskKey || undefined)));
        return `receipt-${ctx.idempotencyKey("charge").slice(-6)}`;
      });
      return `${receipt} ${yield* step("mail", () => "mailed")}`;
    },
  });
  const options = { clusterUrls: cluster.urls, prefix, minReplicas, timeoutMs: 1000, onWarning: () => {} };
  const inners: Store[] = [];
  let killed: number | undefined;
  // The store as an instance sees it: once the write that records `charge` is acknowledged,
  // its master is SIGKILLed before the acknowledgement reaches the runtime.
  const crashing = async (): Promise<Store> => {
    const inner = await createRedisStore(options);
    inners.push(inner);
    const store: Store = Object.create(inner) as Store;
    store.swap = async (key, expected, value, ttlMs) => {
      const done = await inner.swap(key, expected, value, ttlMs);
      if (done && killed === undefined && value.includes('"Scharge"') && !expected.includes('"Scharge"')) {
        killed = await cluster.masterOf(prefix + key);
        await cluster.kill(killed);
      }
      return done;
    };
    store.time = inner.time!.bind(inner);
    return store;
  };
  const runtimes: Runtime[] = [];
  // What the store told the instances: printed if the test fails.
  const errors: unknown[] = [];
  const instance = (on: Store) => {
    const r = createRuntime({ state: { keys }, store: on, onError: (e) => errors.push(e), tasks: { leaseMs: 4000, sweepMs: 100 } });
    r.define([pay]);
    runtimes.push(r);
    return r;
  };
  const a = instance(await crashing());
  // A second instance on its own connection: it takes over when the first cannot go on.
  const b = instance(await crashing());
  try {
    // As a client does: `store_unavailable` (here, a replica that has not acknowledged the new
    // task's record within the WAIT) is tried again.
    const retryable = (e: unknown) => ((e as { data?: { reason?: string } }).data?.reason === "store_unavailable" ? undefined : Promise.reject(e));
    const { taskId } = (await until(() => a.callTool(pay, { name: "pay", arguments: {}, _meta: { idempotencyKey: "pay-1" } }, TASKS).catch(retryable), 30_000)) as { taskId: string };
    taskKey = prefix + `task:${taskId}`;
    const dead = await until(async () => killed, 30_000);
    // Its replica took over; the killed master comes back as a replica of it.
    await until(async () => ((await cluster.masterOf(taskKey).catch(() => dead)) !== dead ? true : undefined), 30_000);
    await cluster.restart(dead);
    const done = await until(async () => {
      const t = (await b.getTask({ taskId }, TASKS).catch(() => undefined)) as { status?: string; result?: { content: Array<{ text: string }> } } | undefined;
      return t?.status === "completed" ? t : undefined;
    }, 60_000);
    return { charges, text: done.result!.content[0]!.text };
  } catch (error) {
    console.error("the instances were told:", errors);
    throw error;
  } finally {
    for (const r of runtimes) await r.close();
    for (const s of inners) await s.close();
  }
}

describe.skipIf(!redisClusterAvailable)("a master dies right after acknowledging a step's result", () => {
  it("with minReplicas: 1 the step never runs again: the promoted replica has its result", async () => {
    const { charges, text } = await crashAfterCharge(1);
    expect(text).toMatch(/^receipt-\S+ mailed$/);
    expect(charges).toBe(1);
  }, 120_000);
});
