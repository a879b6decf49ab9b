import { afterAll, describe } from "vitest";
import { createPostgresStore } from "mcp-yield/postgres";
import { faultSuite } from "../support/fault-suite.js";
import { dropSchema, POSTGRES_URL, postgresAvailable, testSchema } from "../support/postgres.js";
import { namespaces } from "../support/prefixed-store.js";

// The fault-injection suite (test/support/fault-suite.ts) on a real PostgreSQL: one store (one
// pool, its tables made once), each run under a key prefix of its own, as on Redis —
// no sweeper sees another run's tasks.
const schema = testSchema("faults");
const stores = namespaces(() => createPostgresStore({ connectionString: POSTGRES_URL, schema }));
afterAll(async () => {
  await stores.close();
  if (postgresAvailable) await dropSchema(schema);
});
if (postgresAvailable) faultSuite("postgres", stores.next);
else describe.skip("fault injection on the postgres store (no PostgreSQL)", () => {});
