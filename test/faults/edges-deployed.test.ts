import { describe } from "vitest";
import { deployedSuiteStores } from "../support/deployed-suites.js";
import { edgeSuite } from "../support/edge-suite.js";
import { pgbouncerAvailable } from "../support/pgbouncer.js";

// The edges of a call (test/support/edge-suite.ts) on the stores as users deploy them beyond
// one server: a Redis Cluster (3 masters, 3 replicas), in every run; PostgreSQL through PgBouncer
// in transaction mode with its default configuration opt-in with the fault suites (`npm run
// test:faults`): the PostgreSQL store's code is the direct one's (its edges run in every run), and
// both would put CI past its 15 minutes.
const stores = await deployedSuiteStores("edges", { cluster: true, pgbouncer: process.env.MCP_YIELD_FAULTS_POSTGRES === "1" });
if (stores.cluster) edgeSuite("redis cluster", stores.cluster);
else describe.skip("the edges of a call on a Redis Cluster (no redis-server)", () => {});
if (stores.pgbouncer) edgeSuite("postgres via PgBouncer", stores.pgbouncer);
else describe.skip(`the edges of a call through PgBouncer (${pgbouncerAvailable ? "opt-in: npm run test:faults" : "no pgbouncer"})`, () => {});
