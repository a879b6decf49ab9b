import { afterAll, describe } from "vitest";
import type { Store } from "mcp-yield";
import { createPostgresStore } from "mcp-yield/postgres";
import { faultSuite } from "../support/fault-suite.js";
import { dropSchema, POSTGRES_URL, postgresAvailable, testSchema } from "../support/postgres.js";
import { prefixedStore } from "../support/prefixed-store.js";

// The fault-injection suite (test/support/fault-suite.ts) on a real PostgreSQL: one store (one
// pool, its tables made once), each run under a key prefix of its own, as each Redis run has —
// no sweeper sees another run's tasks.
const schema = testSchema("faults");
let shared: Promise<Store> | undefined;
let next = 0;
afterAll(async () => {
  if (shared) await (await shared).close();
  if (postgresAvailable) await dropSchema(schema);
});
if (postgresAvailable) faultSuite("postgres", async () => prefixedStore(await (shared ??= createPostgresStore({ connectionString: POSTGRES_URL, schema })), `r${next++}:`));
else describe.skip("fault injection on the postgres store (no PostgreSQL)", () => {});
