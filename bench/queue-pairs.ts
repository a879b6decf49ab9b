// The task engine against the job queue users would pick on the same store (BullMQ on Redis,
// pg-boss on PostgreSQL): zero-work tasks and jobs submitted and awaited by `concurrency`
// callers in this process, the two alternated in `rounds` rounds (each on a fresh prefix or
// schema, the one going first swapped each round), compared round by round. Used by
// `npm run bench:tasks` (its table) and `npm run bench` (its targets).
import { createPostgresStore } from "mcp-yield/postgres";
import { createRedisStore } from "mcp-yield/redis";
import { dropPostgresSchema } from "./cleanup.js";
import { bullmqRunner, pgBossRunner } from "./queue-rivals.js";
import { engineRunner, type Runner, throughput, type Throughput } from "./task-runners.js";

export interface QueuePairs {
  store: "Redis" | "PostgreSQL";
  rival: string;
  /** Each round's engine and rival, measured back to back. */
  pairs: Array<{ engine: Throughput; rival: Throughput }>;
  /** Engine calls per second over the rival's jobs per second, per round. */
  ratios: number[];
}

export interface QueuePairOptions {
  redisUrl: string;
  postgresUrl: string;
  rounds: number;
  seconds: number;
  concurrency: number;
}

/** The engine on a store against `rival` on the same store: `rounds` paired runs, each on fresh keys. */
async function paired(store: QueuePairs["store"], engine: (round: number) => Promise<Runner>, rival: (round: number) => Promise<Runner>, o: QueuePairOptions): Promise<QueuePairs> {
  const pairs: QueuePairs["pairs"] = [];
  let rivalName = "";
  for (let round = 0; round < o.rounds; round++) {
    const got: Partial<Record<"engine" | "rival", Throughput>> = {};
    for (const side of round % 2 === 0 ? (["engine", "rival"] as const) : (["rival", "engine"] as const)) {
      const runner = await (side === "engine" ? engine(round) : rival(round));
      if (side === "rival") rivalName = runner.name;
      try {
        got[side] = await throughput(runner, o.concurrency, o.seconds);
      } finally {
        await runner.close();
      }
    }
    pairs.push({ engine: got.engine!, rival: got.rival! });
  }
  return { store, rival: rivalName, pairs, ratios: pairs.map((p) => p.engine.perSecond / p.rival.perSecond) };
}

/** Both comparisons: Redis (BullMQ), then PostgreSQL (pg-boss). */
export async function versusQueues(o: QueuePairOptions): Promise<QueuePairs[]> {
  const run = `${process.pid}-${Date.now().toString(36)}`;
  return [
    await paired(
      "Redis",
      async (round) => {
        const store = await createRedisStore({ url: o.redisUrl, prefix: `mcp-yield-bench-engine:${run}:${round}:` });
        const runner = engineRunner(store, "engine");
        return { ...runner, close: async () => (await runner.close(), await store.close()) };
      },
      (round) => bullmqRunner(o.redisUrl, `mcp-yield-bench-bullmq-${run}-${round}`, o.concurrency),
      o,
    ),
    await paired(
      "PostgreSQL",
      async (round) => {
        const schema = `bench_engine_${run}_${round}`.replace(/-/g, "_");
        const store = await createPostgresStore({ connectionString: o.postgresUrl, schema });
        const runner = engineRunner(store, "engine");
        return { ...runner, close: async () => (await runner.close(), await store.close(), await dropPostgresSchema(o.postgresUrl, schema)) };
      },
      (round) => pgBossRunner(o.postgresUrl, `bench_pgboss_${run}_${round}`.replace(/-/g, "_"), o.concurrency),
      o,
    ),
  ];
}
