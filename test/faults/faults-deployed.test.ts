import { afterAll, describe } from "vitest";
import type { Store } from "mcp-yield";
import { createPostgresStore } from "mcp-yield/postgres";
import { createRedisStore } from "mcp-yield/redis";
import { faultSuite } from "../support/fault-suite.js";
import { pgbouncerAvailable, startPgBouncer } from "../support/pgbouncer.js";
import { dropSchema, testSchema } from "../support/postgres.js";
import { prefixedStore } from "../support/prefixed-store.js";
import { redisClusterAvailable, startRedisCluster } from "../support/redis-cluster.js";

// The fault-injection suite (test/support/fault-suite.ts) on a Redis Cluster and on PostgreSQL
// through PgBouncer (transaction mode, default configuration), each run under a prefix of its
// own. Opt-in with the PostgreSQL one (`npm run test:faults`, MCP_YIELD_FAULTS_POSTGRES=1), for
// the same reason: each is as long as the Redis suite, past CI's budget beside the others. In
// every run: the edges of a call on both (edges-deployed.test.ts), the store contract, the
// three-instance SIGKILL scenario and the durable fixtures.
const enabled = process.env.MCP_YIELD_FAULTS_POSTGRES === "1";
const cluster = enabled && redisClusterAvailable ? await startRedisCluster() : undefined;
const bouncer = enabled && pgbouncerAvailable ? await startPgBouncer("transaction") : undefined;
const schema = testSchema("faults_pgb");
let shared: Promise<Store> | undefined;
let next = 0;
afterAll(async () => {
  if (shared) await (await shared).close();
  await cluster?.stop();
  await bouncer?.stop();
  if (bouncer) await dropSchema(schema);
});
if (cluster) faultSuite("redis cluster", () => createRedisStore({ clusterUrls: cluster.urls, prefix: `f${next++}:`, onWarning: () => {} }));
else describe.skip(`fault injection on a Redis Cluster (${enabled ? "no redis-server" : "opt-in: npm run test:faults"})`, () => {});
if (bouncer) faultSuite("postgres via PgBouncer", async () => prefixedStore(await (shared ??= createPostgresStore({ connectionString: bouncer.url, schema, onWarning: () => {} })), `r${next++}:`));
else describe.skip(`fault injection through PgBouncer (${enabled ? "no pgbouncer" : "opt-in: npm run test:faults"})`, () => {});
