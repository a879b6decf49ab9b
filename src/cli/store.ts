import type { Store } from "../store/index.js";

/** Where the servers keep their tasks, as the command line or the environment names it. */
export interface StoreFlags {
  redis?: string | undefined;
  /** Comma-separated node URLs of a Redis Cluster. */
  "redis-cluster"?: string | undefined;
  "redis-prefix"?: string | undefined;
  postgres?: string | undefined;
  "postgres-schema"?: string | undefined;
}

/** The `parseArgs` options every store-reading command takes. */
export const STORE_OPTIONS = {
  redis: { type: "string" },
  "redis-cluster": { type: "string" },
  "redis-prefix": { type: "string" },
  postgres: { type: "string" },
  "postgres-schema": { type: "string" },
} as const;

/** Node URLs from a comma-separated list (`--redis-cluster`, MCP_YIELD_REDIS_CLUSTER). */
export const clusterUrlsOf = (text: string): string[] =>
  text
    .split(",")
    .map((u) => u.trim())
    .filter((u) => u !== "");

/**
 * The shared store the servers use: `--redis URL` / `--redis-cluster URL,URL...` / `--postgres
 * URL`, else MCP_YIELD_REDIS_URL / MCP_YIELD_REDIS_CLUSTER / MCP_YIELD_POSTGRES_URL (with the
 * prefix and schema the example server reads too). The store's client is loaded only when used
 * (both are optional peers).
 */
export async function openStore(flags: StoreFlags, env: Record<string, string | undefined>): Promise<Store> {
  const given = (v: string | undefined) => (v !== undefined && v.trim() !== "" ? v.trim() : undefined);
  const flagged = flags.redis !== undefined || flags["redis-cluster"] !== undefined || flags.postgres !== undefined;
  const redis = given(flags.redis) ?? (flagged ? undefined : given(env.MCP_YIELD_REDIS_URL));
  const cluster = given(flags["redis-cluster"]) ?? (flagged ? undefined : given(env.MCP_YIELD_REDIS_CLUSTER));
  const postgres = given(flags.postgres) ?? (flagged ? undefined : given(env.MCP_YIELD_POSTGRES_URL));
  if ([redis, cluster, postgres].filter((v) => v !== undefined).length > 1) throw new TypeError("more than one store is named: give one (--redis URL, --redis-cluster URL,URL... or --postgres URL)");
  if (postgres !== undefined) {
    const { createPostgresStore } = await import("../store/postgres/postgres-store.js");
    const schema = given(flags["postgres-schema"]) ?? given(env.MCP_YIELD_POSTGRES_SCHEMA);
    // Never creates tables: an operator's command only reads what the servers made.
    return createPostgresStore({ connectionString: postgres, createTables: false, timeoutMs: 5000, maxConnections: 4, ...(schema !== undefined ? { schema } : {}) });
  }
  if (redis !== undefined || cluster !== undefined) {
    const { createRedisStore } = await import("../store/redis.js");
    const prefix = flags["redis-prefix"] ?? env.MCP_YIELD_REDIS_PREFIX ?? "mcp-yield:";
    // An operator's command says nothing of the server's configuration: the servers do.
    const where = cluster !== undefined ? { clusterUrls: clusterUrlsOf(cluster) } : { url: redis! };
    return createRedisStore({ ...where, prefix, timeoutMs: 5000, checkConfig: false });
  }
  throw new TypeError(
    "no store named: tasks live in the store the servers share — give --redis URL, --redis-cluster URL,URL... or --postgres URL (or set MCP_YIELD_REDIS_URL / MCP_YIELD_REDIS_CLUSTER / MCP_YIELD_POSTGRES_URL)",
  );
}
