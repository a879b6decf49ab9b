import { afterAll } from "vitest";
import { createPostgresStore } from "mcp-yield/postgres";
import { createRedisStore } from "mcp-yield/redis";
import { pgbouncerAvailable, startPgBouncer } from "./pgbouncer.js";
import { dropSchema, testSchema } from "./postgres.js";
import { namespaces } from "./prefixed-store.js";
import { redisClusterAvailable, startRedisCluster } from "./redis-cluster.js";

/**
 * For the fault and edge suites on the stores as users deploy them beyond one server: a fresh,
 * empty namespace of each, per run — on a Redis Cluster (3 masters, 3 replicas; one client, a key
 * prefix per run) and through PgBouncer in transaction mode (one pool, a key prefix per run) — for the ones
 * asked for and present (`undefined` otherwise), stopped and dropped after the file. Await at the
 * top level.
 */
export async function deployedSuiteStores(name: string, want: { cluster: boolean; pgbouncer: boolean }) {
  const cluster = want.cluster && redisClusterAvailable ? await startRedisCluster() : undefined;
  const bouncer = want.pgbouncer && pgbouncerAvailable ? await startPgBouncer("transaction") : undefined;
  const schema = testSchema(`${name}_pgb`);
  const onCluster = namespaces(() => createRedisStore({ clusterUrls: cluster!.urls, prefix: `${name}:`, onWarning: () => {} }));
  const throughBouncer = namespaces(() => createPostgresStore({ connectionString: bouncer!.url, schema, onWarning: () => {} }));
  afterAll(async () => {
    await onCluster.close();
    await throughBouncer.close();
    await cluster?.stop();
    await bouncer?.stop();
    if (bouncer) await dropSchema(schema);
  });
  return {
    cluster: cluster && onCluster.next,
    pgbouncer: bouncer && throughBouncer.next,
  };
}
