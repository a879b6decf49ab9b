import { afterAll } from "vitest";
import { createMemoryStore, type Store } from "mcp-yield";
import { createPostgresStore, type PostgresStoreOptions } from "mcp-yield/postgres";
import { createRedisStore, type RedisStoreOptions } from "mcp-yield/redis";
import { POSTGRES_URL, postgresAvailable, dropSchema, testSchema } from "./postgres.js";
import { dropPrefix, REDIS_URL, redisAvailable, testPrefix } from "./redis.js";
import { pgbouncerAvailable, startPgBouncer } from "./pgbouncer.js";
import { redisClusterAvailable, startRedisCluster } from "./redis-cluster.js";

/**
 * The stores several instances can share, each on its real server, in a namespace of this test
 * file's own (a Redis key prefix, a Postgres schema): `make` opens another connection to the same
 * namespace (another instance), `drop` removes what the tests left. Only the servers this
 * machine has (under CI=true both must be up: the support modules fail otherwise).
 */
export interface SharedStoreKind {
  name: "redis" | "postgres";
  make(options?: { timeoutMs?: number; port?: number }): Promise<Store>;
  drop(): Promise<void>;
  /** The server's port, for a proxy in front of it. */
  port: number;
  /** The same namespace as `npx mcp-yield tasks` flags. */
  cliFlags: string[];
}

export function sharedStores(file: string): SharedStoreKind[] {
  const kinds: SharedStoreKind[] = [];
  if (redisAvailable) {
    const prefix = testPrefix(file);
    const url = new URL(REDIS_URL);
    kinds.push({
      name: "redis",
      port: Number(url.port || 6379),
      cliFlags: ["--redis", REDIS_URL, "--redis-prefix", prefix],
      make: (o = {}) => {
        const options: RedisStoreOptions = { url: o.port === undefined ? REDIS_URL : `redis://127.0.0.1:${o.port}`, prefix };
        if (o.timeoutMs !== undefined) options.timeoutMs = o.timeoutMs;
        return createRedisStore(options);
      },
      drop: () => dropPrefix(prefix),
    });
  }
  if (postgresAvailable) {
    const schema = testSchema(file);
    const url = new URL(POSTGRES_URL);
    kinds.push({
      name: "postgres",
      port: Number(url.port || 5432),
      cliFlags: ["--postgres", POSTGRES_URL, "--postgres-schema", schema],
      make: (o = {}) => {
        const through = new URL(POSTGRES_URL);
        if (o.port !== undefined) through.port = String(o.port);
        const options: PostgresStoreOptions = { connectionString: through.toString(), schema };
        if (o.timeoutMs !== undefined) options.timeoutMs = o.timeoutMs;
        return createPostgresStore(options);
      },
      drop: () => dropSchema(schema),
    });
  }
  return kinds;
}

/**
 * Every store kind: memory (on an injected clock `elapse` moves) and the shared ones (where
 * `elapse` waits for real). `short` is a time to live tests let run out: on the memory store's
 * injected clock any will do; on a real server it must outlast the operations that come before
 * the wait even on a loaded machine (20 concurrent queries through a pool can take 100 ms there).
 */
export function allStores(file: string): Array<{ name: string; make: () => Promise<Store>; elapse: (ms: number) => Promise<void>; drop: () => Promise<void>; short: number }> {
  let memoryNow = 1_800_000_000_000;
  const wait = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
  return [
    {
      name: "memory",
      make: async () => createMemoryStore({ clock: () => memoryNow }),
      elapse: async (ms: number) => {
        memoryNow += ms;
      },
      drop: async () => {},
      short: 80,
    },
    ...sharedStores(file).map((k) => ({ name: k.name, make: () => k.make(), elapse: wait, drop: k.drop, short: 1500 })),
  ];
}

/**
 * For `describe.each`: the memory store and the shared ones, as `[name, make]`, with the shared
 * kinds (`kinds`, for tests that need a second connection or a port). Each shared namespace is
 * dropped after the file; call at the top level of the file.
 */
export function storesOf(file: string): { stores: Array<[string, () => Promise<Store>]>; kinds: SharedStoreKind[] } {
  const kinds = sharedStores(file);
  afterAll(async () => {
    for (const kind of kinds) await kind.drop();
  });
  return { kinds, stores: [["memory", async () => createMemoryStore()], ...kinds.map((k) => [k.name, () => k.make()] as [string, () => Promise<Store>])] };
}

/**
 * For tests that start the example server (`npm start`) on a shared store: each store this
 * machine has, as `[name, env]` — the environment that points an instance at it, in a namespace
 * of this test file's own, dropped after the file. Call at the top level of the file.
 */
export function exampleServerStores(file: string): Array<readonly [string, Record<string, string>]> {
  const prefix = testPrefix(file);
  const schema = testSchema(file);
  afterAll(async () => {
    if (redisAvailable) await dropPrefix(prefix);
    if (postgresAvailable) await dropSchema(schema);
  });
  return [
    ...(redisAvailable ? [["redis", { MCP_YIELD_REDIS_URL: REDIS_URL, MCP_YIELD_REDIS_PREFIX: prefix }] as const] : []),
    ...(postgresAvailable ? [["postgres", { MCP_YIELD_POSTGRES_URL: POSTGRES_URL, MCP_YIELD_POSTGRES_SCHEMA: schema }] as const] : []),
  ];
}

/**
 * The store deployments users run beyond one server, started for this file: a Redis Cluster (3
 * masters, 3 replicas, from the machine's redis-server) and PostgreSQL through PgBouncer in
 * transaction mode with its default configuration — each as `[name, env]` for the example
 * server, stopped (and their namespaces dropped) after the file. Await at the top level.
 */
export async function deployedStores(file: string): Promise<Array<readonly [string, Record<string, string>]>> {
  const envs: Array<readonly [string, Record<string, string>]> = [];
  if (redisClusterAvailable) {
    const cluster = await startRedisCluster();
    afterAll(() => cluster.stop());
    envs.push(["redis cluster", { MCP_YIELD_REDIS_CLUSTER: cluster.urls.join(","), MCP_YIELD_REDIS_PREFIX: testPrefix(file) }]);
  }
  if (pgbouncerAvailable) {
    const bouncer = await startPgBouncer("transaction");
    const schema = testSchema(`${file}_pgb`);
    afterAll(async () => {
      await bouncer.stop();
      await dropSchema(schema);
    });
    envs.push(["postgres via PgBouncer", { MCP_YIELD_POSTGRES_URL: bouncer.url, MCP_YIELD_POSTGRES_SCHEMA: schema }]);
  }
  return envs;
}

/**
 * For tests of several instances on one store: memory — one store object the instances share (one
 * process), as they share a server otherwise — and the shared kinds, whose `make` opens another
 * connection (another instance). With `cluster`, a Redis Cluster too (3 masters, 3 replicas),
 * started at the first `make` of a test that runs on it. Their namespaces are dropped (the
 * cluster stopped) after the file; call at the top level.
 */
export function instanceStores(file: string, want: { cluster?: boolean } = {}): Array<{ name: string; make: () => Promise<Store>; drop: () => Promise<void> }> {
  let shared: Store | undefined;
  const kinds = [{ name: "memory", make: async (): Promise<Store> => (shared ??= createMemoryStore()), drop: async () => {} }, ...sharedStores(file)];
  if (want.cluster === true && redisClusterAvailable) {
    let cluster: ReturnType<typeof startRedisCluster> | undefined;
    const prefix = testPrefix(`${file}-cluster`);
    kinds.push({
      name: "redis cluster",
      make: async () => createRedisStore({ clusterUrls: [(await (cluster ??= startRedisCluster())).urls[0]!], prefix, onWarning: () => {} }),
      drop: async () => (await cluster)?.stop(),
    });
  }
  afterAll(async () => {
    for (const k of kinds) await k.drop();
  });
  return kinds;
}
