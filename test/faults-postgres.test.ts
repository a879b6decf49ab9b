import { afterAll, describe } from "vitest";
import { createPostgresStore } from "mcp-yield/postgres";
import { faultSuite } from "./support/fault-suite.js";
import { dropSchema, POSTGRES_URL, postgresAvailable, testSchema } from "./support/postgres.js";

// The fault-injection suite (test/support/fault-suite.ts) on a real PostgreSQL, each run in
// tables of its own (as each Redis run has its own prefix): no sweeper sees another run's tasks.
const schema = testSchema("faults");
let next = 0;
afterAll(async () => {
  if (postgresAvailable) await dropSchema(schema);
});
if (postgresAvailable) faultSuite("postgres", () => createPostgresStore({ connectionString: POSTGRES_URL, schema, tablePrefix: `r${next++}_`, maxConnections: 4 }));
else describe.skip("fault injection on the postgres store (no PostgreSQL)", () => {});
