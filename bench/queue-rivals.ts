// The job queues a user would pick instead of tasks for durable work, driven the way their own
// documentation drives them, each as a `Runner` (task-runners.ts): BullMQ on Redis, pg-boss on
// PostgreSQL. A zero-work job is submitted, run by a worker in this process and awaited as a
// caller of that queue awaits one: BullMQ through its QueueEvents stream (waitUntilFinished),
// pg-boss — which has no completion event — by one poller for every outstanding job, one query
// each 5 ms (not a query per job: that would measure our poller, not pg-boss).
import { Queue, QueueEvents, Worker } from "bullmq";
import PgBoss from "pg-boss";
import pg from "pg";
import { createClient } from "redis";
import type { Runner } from "./task-runners.js";

/** BullMQ 6 on Redis (node-redis clients), a worker of `concurrency`, completed jobs kept 1,000 at a time. */
export async function bullmqRunner(url: string, name: string, concurrency: number): Promise<Runner> {
  const clients: Array<{ quit(): Promise<unknown> }> = [];
  const client = async () => {
    const c = createClient({ url });
    c.on("error", () => {});
    await c.connect();
    clients.push(c);
    return c;
  };
  const queue = new Queue(name, { connection: await client() });
  const events = new QueueEvents(name, { connection: await client() });
  const worker = new Worker(name, async () => "done", { connection: await client(), concurrency });
  await Promise.all([queue.waitUntilReady(), events.waitUntilReady(), worker.waitUntilReady()]);
  // Each awaited job listens for the end on these while it runs: `concurrency` at once is expected.
  for (const emitter of [queue, events]) emitter.setMaxListeners(concurrency * 2 + 10);
  return {
    name: "BullMQ",
    async call() {
      const job = await queue.add("zero", {}, { removeOnComplete: 1000 });
      if ((await job.waitUntilFinished(events)) !== "done") throw new Error("BullMQ: unexpected result");
    },
    async close() {
      await worker.close();
      await events.close();
      await queue.obliterate({ force: true }).catch(() => {});
      await queue.close();
      for (const c of clients) await c.quit().catch(() => {});
    },
  };
}

/** pg-boss 10 on PostgreSQL in `schema`: one worker fetching `concurrency` jobs at a time, woken in-process on each send. */
export async function pgBossRunner(url: string, schema: string, concurrency: number): Promise<Runner> {
  const boss = new PgBoss({ connectionString: url, schema, max: 10, supervise: false, schedule: false });
  boss.on("error", () => {});
  await boss.start();
  const queue = "zero";
  await boss.createQueue(queue);
  const worker = await boss.work(queue, { batchSize: concurrency, pollingIntervalSeconds: 0.5 }, async (jobs) => jobs.map(() => "done"));
  // The awaiting side: every outstanding job's id, checked together.
  const reader = new pg.Pool({ connectionString: url, max: 1 });
  const waiting = new Map<string, () => void>();
  let polling = false;
  const poll = async () => {
    if (polling) return;
    polling = true;
    while (waiting.size > 0) {
      const { rows } = await reader.query<{ id: string }>(`SELECT id FROM "${schema}".job WHERE name = $1 AND id = ANY($2::uuid[]) AND state = 'completed'`, [queue, [...waiting.keys()]]);
      for (const { id } of rows) {
        waiting.get(id)?.();
        waiting.delete(id);
      }
      if (waiting.size > 0) await new Promise((r) => setTimeout(r, 5));
    }
    polling = false;
  };
  return {
    name: "pg-boss",
    async call() {
      const id = await boss.send(queue, {});
      if (id === null) throw new Error("pg-boss: send returned no id");
      boss.notifyWorker(worker);
      await new Promise<void>((resolve) => {
        waiting.set(id, resolve);
        void poll();
      });
    },
    async close() {
      await boss.stop({ graceful: false, wait: true });
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
      await reader.end();
    },
  };
}
