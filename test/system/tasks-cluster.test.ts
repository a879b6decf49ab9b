import { afterAll, describe, expect, it } from "vitest";
import { POSTGRES_URL, postgresAvailable, dropSchema, testSchema } from "../support/postgres.js";
import { dropPrefix, REDIS_URL, redisAvailable, testPrefix } from "../support/redis.js";
import { runTaskScenario } from "../../scripts/stress/task-scenario.js";
import { deployedStores } from "../support/stores.js";

// Three example-server processes (`npm start`) sharing one store, one SIGKILLed mid-run: on
// Redis, PostgreSQL, a Redis Cluster and PostgreSQL through PgBouncer. Scaled down for CI; `npm run stress` runs 300 task calls.
const prefix = testPrefix("cluster");
const schema = testSchema("cluster");
afterAll(async () => {
  if (redisAvailable) await dropPrefix(prefix);
  if (postgresAvailable) await dropSchema(schema);
});

const kinds: Array<[string, Record<string, string>]> = [];
if (redisAvailable) kinds.push(["Redis", { MCP_YIELD_REDIS_URL: REDIS_URL, MCP_YIELD_REDIS_PREFIX: prefix }]);
if (postgresAvailable) kinds.push(["PostgreSQL", { MCP_YIELD_POSTGRES_URL: POSTGRES_URL, MCP_YIELD_POSTGRES_SCHEMA: schema }]);
// And as users deploy them beyond one server: a Redis Cluster, PostgreSQL through PgBouncer.
kinds.push(...(await deployedStores("tasks-cluster")).map(([name, env]): [string, Record<string, string>] => [name, env]));

describe.each(kinds)("three instances on %s, one killed mid-run", (_name, storeEnv) => {
  it("every task call completes once with the right result; none stuck; every instance agrees on every result", async () => {
    const report = await runTaskScenario({ instances: 3, calls: 30, thinkMs: [50, 400], storeEnv, leaseMs: 2000 });
    expect(report.errors).toEqual([]);
    expect(report.wrong).toEqual([]);
    expect(report.stuck).toBe(0);
    expect(report.inconsistent).toEqual([]);
    expect(report.completed).toBe(30);
    // The crash really happened with calls in flight.
    const inFlight = Number(/\((\d+) calls in flight\)/.exec(report.events.find((e) => e.includes("killed"))!)![1]);
    expect(inFlight).toBeGreaterThanOrEqual(10);
  }, 180_000);
});
