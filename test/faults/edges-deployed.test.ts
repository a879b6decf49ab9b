import { afterAll, describe } from "vitest";
import type { Store } from "mcp-yield";
import { createPostgresStore } from "mcp-yield/postgres";
import { createRedisStore } from "mcp-yield/redis";
import { edgeSuite } from "../support/edge-suite.js";
import { pgbouncerAvailable, startPgBouncer } from "../support/pgbouncer.js";
import { dropSchema, testSchema } from "../support/postgres.js";
import { prefixedStore } from "../support/prefixed-store.js";
import { redisClusterAvailable, startRedisCluster } from "../support/redis-cluster.js";

// The edges of a call (test/support/edge-suite.ts) on the stores as users deploy them beyond
// one server: a Redis Cluster (3 masters, 3 replicas), in every run; PostgreSQL through PgBouncer
// in transaction mode with its default configuration opt-in with the fault suites (`npm run
// test:faults`): the PostgreSQL store's code is the direct one's (its edges run in every run), and
// both would put CI past its 15 minutes.
const cluster = redisClusterAvailable ? await startRedisCluster() : undefined;
const bouncer = pgbouncerAvailable && process.env.MCP_YIELD_FAULTS_POSTGRES === "1" ? await startPgBouncer("transaction") : undefined;
const schema = testSchema("edges_pgb");
let shared: Promise<Store> | undefined;
let next = 0;
afterAll(async () => {
  if (shared) await (await shared).close();
  await cluster?.stop();
  await bouncer?.stop();
  if (bouncer) await dropSchema(schema);
});
if (cluster) edgeSuite("redis cluster", () => createRedisStore({ clusterUrls: cluster.urls, prefix: `e${next++}:`, onWarning: () => {} }));
else describe.skip("the edges of a call on a Redis Cluster (no redis-server)", () => {});
if (bouncer) edgeSuite("postgres via PgBouncer", async () => prefixedStore(await (shared ??= createPostgresStore({ connectionString: bouncer.url, schema, onWarning: () => {} })), `r${next++}:`));
else describe.skip(`the edges of a call through PgBouncer (${pgbouncerAvailable ? "opt-in: npm run test:faults" : "no pgbouncer"})`, () => {});
