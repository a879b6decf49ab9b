import { afterAll, describe } from "vitest";
import { createPostgresStore } from "mcp-yield/postgres";
import { edgeSuite } from "../support/edge-suite.js";
import { dropSchema, POSTGRES_URL, postgresAvailable, testSchema } from "../support/postgres.js";
import { namespaces } from "../support/prefixed-store.js";

// The edges of a call (test/support/edge-suite.ts) on a real PostgreSQL: one pool, its tables
// made once, each run under a key prefix of its own.
const schema = testSchema("edges");
const stores = namespaces(() => createPostgresStore({ connectionString: POSTGRES_URL, schema }));
afterAll(async () => {
  await stores.close();
  if (postgresAvailable) await dropSchema(schema);
});
if (postgresAvailable) edgeSuite("postgres", stores.next);
else describe.skip("the edges of a call on the postgres store (no PostgreSQL)", () => {});
