import type { Store } from "../store/index.js";

/** Where the servers keep their tasks, as the command line or the environment names it. */
export interface StoreFlags {
  redis?: string | undefined;
  "redis-prefix"?: string | undefined;
  postgres?: string | undefined;
  "postgres-schema"?: string | undefined;
}

/** The `parseArgs` options every store-reading command takes. */
export const STORE_OPTIONS = {
  redis: { type: "string" },
  "redis-prefix": { type: "string" },
  postgres: { type: "string" },
  "postgres-schema": { type: "string" },
} as const;

/**
 * The shared store the servers use: `--redis URL` / `--postgres URL`, else MCP_YIELD_REDIS_URL /
 * MCP_YIELD_POSTGRES_URL (with the prefix and schema the example server reads too). The store's
 * client is loaded only when used (both are optional peers).
 */
export async function openStore(flags: StoreFlags, env: Record<string, string | undefined>): Promise<Store> {
  const given = (v: string | undefined) => (v !== undefined && v.trim() !== "" ? v.trim() : undefined);
  const redis = given(flags.redis) ?? (flags.postgres === undefined ? given(env.MCP_YIELD_REDIS_URL) : undefined);
  const postgres = given(flags.postgres) ?? (flags.redis === undefined ? given(env.MCP_YIELD_POSTGRES_URL) : undefined);
  if (redis !== undefined && postgres !== undefined) throw new TypeError("both a Redis and a PostgreSQL store are named: give one (--redis URL or --postgres URL)");
  if (postgres !== undefined) {
    const { createPostgresStore } = await import("../store/postgres.js");
    const schema = given(flags["postgres-schema"]) ?? given(env.MCP_YIELD_POSTGRES_SCHEMA);
    // Never creates tables: an operator's command only reads what the servers made.
    return createPostgresStore({ connectionString: postgres, createTables: false, timeoutMs: 5000, maxConnections: 4, ...(schema !== undefined ? { schema } : {}) });
  }
  if (redis !== undefined) {
    const { createRedisStore } = await import("../store/redis.js");
    return createRedisStore({ url: redis, prefix: flags["redis-prefix"] ?? env.MCP_YIELD_REDIS_PREFIX ?? "mcp-yield:", timeoutMs: 5000 });
  }
  throw new TypeError("no store named: tasks live in the store the servers share — give --redis URL or --postgres URL (or set MCP_YIELD_REDIS_URL / MCP_YIELD_POSTGRES_URL)");
}
