import { afterAll, describe } from "vitest";
import type { Store } from "mcp-yield";
import { createPostgresStore } from "mcp-yield/postgres";
import { faultSuite } from "../support/fault-suite.js";
import { dropSchema, POSTGRES_URL, postgresAvailable, testSchema } from "../support/postgres.js";
import { prefixedStore } from "../support/prefixed-store.js";

// The fault-injection suite (test/support/fault-suite.ts) on a real PostgreSQL: one store (one
// pool, its tables made once), each run under a key prefix of its own, as each Redis run has —
// no sweeper sees another run's tasks.
//
// Run with `npm run test:faults` (MCP_YIELD_FAULTS_POSTGRES=1), and whenever the Postgres store's
// writes change. `npm test` leaves it out: its ~560 runs take 2.5 minutes alone on this 2-core
// machine and 8 beside the other fault suites, more than CI's budget allows; the Postgres store
// is held to the same contract as the others by test/store/store-contract.test.ts, and its tasks by
// test/tasks/tasks-shared-store.test.ts and the SIGKILL cluster test, in every run.
const enabled = process.env.MCP_YIELD_FAULTS_POSTGRES === "1";
const schema = testSchema("faults");
let shared: Promise<Store> | undefined;
let next = 0;
afterAll(async () => {
  if (shared) await (await shared).close();
  if (enabled && postgresAvailable) await dropSchema(schema);
});
if (enabled && postgresAvailable) faultSuite("postgres", async () => prefixedStore(await (shared ??= createPostgresStore({ connectionString: POSTGRES_URL, schema })), `r${next++}:`));
else describe.skip(`fault injection on the postgres store (${enabled ? "no PostgreSQL" : "opt-in: npm run test:faults"})`, () => {});
