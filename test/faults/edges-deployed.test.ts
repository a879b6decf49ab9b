import { describe } from "vitest";
import { deployedSuiteStores } from "../support/deployed-suites.js";
import { edgeSuite } from "../support/edge-suite.js";

// The edges of a call (test/support/edge-suite.ts) on the stores as users deploy them beyond
// one server: a Redis Cluster (3 masters, 3 replicas) and PostgreSQL through PgBouncer in
// transaction mode with its default configuration.
const stores = await deployedSuiteStores("edges", { cluster: true, pgbouncer: true });
if (stores.cluster) edgeSuite("redis cluster", stores.cluster);
else describe.skip("the edges of a call on a Redis Cluster (no redis-server)", () => {});
if (stores.pgbouncer) edgeSuite("postgres via PgBouncer", stores.pgbouncer);
else describe.skip("the edges of a call through PgBouncer (no pgbouncer)", () => {});
