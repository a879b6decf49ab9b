import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createRuntime, type Runtime, sleep, step, tool } from "mcp-yield";
import { createPostgresStore } from "mcp-yield/postgres";
import { testKey } from "../support/keys.js";
import { until } from "../support/instances.js";
import { type PrivatePostgres, privatePostgresAvailable, startPrivatePostgres } from "../support/private-postgres.js";

// Issue 55, point 7: PostgreSQL restarted under load (a fast shutdown, as a minor-version upgrade
// or a failover does): tasks in flight on two instances — in a step, asleep, between steps — all
// complete once it is back, each step run once. A server of this test's own (restarting the
// machine's would cut the other tests).

const TASKS = { clientCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } };
const keys = [testKey("pr", 17)];
const server: PrivatePostgres | undefined = privatePostgresAvailable ? await startPrivatePostgres() : undefined;
afterAll(() => server?.stop());

describe.skipIf(server === undefined)("PostgreSQL restarted while tasks run", () => {
  it("every task completes, each step once; the instances ride the restart on their own", async () => {
    const runs = new Map<string, number>();
    const count = (key: string) => runs.set(key, (runs.get(key) ?? 0) + 1);
    const job = tool({
      name: "job",
      description: "",
      input: z.object({ n: z.number() }),
      task: "required",
      async *run({ n }, ctx) {
        const a = yield* step("first", () => (count(ctx.idempotencyKey("first")), n));
        yield* sleep(200 + (n % 5) * 100);
        const b = yield* step("second", async () => {
          count(ctx.idempotencyKey("second"));
          await new Promise((r) => setTimeout(r, 50));
          return a * 2;
        });
        return `${n}:${b}`;
      },
    });
    const runtimes: Runtime[] = [];
    const stores = await Promise.all([0, 1].map(() => createPostgresStore({ connectionString: server!.url, schema: "restart", timeoutMs: 1000 })));
    for (const store of stores) {
      // A lease longer than a restart: each run rides it out (its writes retried), none is taken over.
      const r = createRuntime({ state: { keys }, store, onError: () => {}, tasks: { leaseMs: 10_000, sweepMs: 100 } });
      r.define([job]);
      runtimes.push(r);
    }
    try {
      const ids: string[] = [];
      for (let n = 0; n < 20; n++) ids.push(((await runtimes[n % 2]!.callTool(job, { name: "job", arguments: { n } }, TASKS)) as { taskId: string }).taskId);
      const { downMs } = await server!.restart();
      expect(downMs).toBeLessThan(10_000);
      console.log(`PostgreSQL was down ${Math.round(downMs)} ms`);
      const results = await until(async () => {
        const got = await Promise.all(ids.map((taskId) => runtimes[1]!.getTask({ taskId }, TASKS).catch(() => undefined)));
        const done = got.map((t) => t as { status?: string; result?: { content: Array<{ text: string }> } } | undefined);
        return done.every((t) => t?.status === "completed") ? done.map((t) => t!.result!.content[0]!.text) : undefined;
      }, 60_000);
      expect(results).toEqual(ids.map((_, n) => `${n}:${n * 2}`));
      expect([...runs.values()].filter((times) => times > 1)).toEqual([]);
      expect(runs.size).toBe(40);
    } finally {
      for (const r of runtimes) await r.close();
      for (const s of stores) await s.close();
    }
  }, 120_000);
});
