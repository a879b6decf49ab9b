import { afterAll, describe } from "vitest";
import type { Store } from "mcp-yield";
import { createPostgresStore } from "mcp-yield/postgres";
import { edgeSuite } from "../support/edge-suite.js";
import { dropSchema, POSTGRES_URL, postgresAvailable, testSchema } from "../support/postgres.js";
import { prefixedStore } from "../support/prefixed-store.js";

// The edges of a call (test/support/edge-suite.ts) on a real PostgreSQL: one pool, its tables
// made once, each run under a key prefix of its own.
const schema = testSchema("edges");
let shared: Promise<Store> | undefined;
let next = 0;
afterAll(async () => {
  if (shared) await (await shared).close();
  if (postgresAvailable) await dropSchema(schema);
});
if (postgresAvailable) edgeSuite("postgres", async () => prefixedStore(await (shared ??= createPostgresStore({ connectionString: POSTGRES_URL, schema })), `r${next++}:`));
else describe.skip("the edges of a call on the postgres store (no PostgreSQL)", () => {});
