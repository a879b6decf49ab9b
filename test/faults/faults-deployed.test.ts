import { describe } from "vitest";
import { deployedSuiteStores } from "../support/deployed-suites.js";
import { faultSuite } from "../support/fault-suite.js";

// The fault-injection suite (test/support/fault-suite.ts) on a Redis Cluster (3 masters, 3
// replicas) and on PostgreSQL through PgBouncer (transaction mode, default configuration), each
// run under a prefix of its own. Beside it: the edges of a call on both (edges-deployed.test.ts),
// the store contract, the three-instance SIGKILL scenario and the durable fixtures.
const stores = await deployedSuiteStores("faults", { cluster: true, pgbouncer: true });
if (stores.cluster) faultSuite("redis cluster", stores.cluster);
else describe.skip("fault injection on a Redis Cluster (no redis-server)", () => {});
if (stores.pgbouncer) faultSuite("postgres via PgBouncer", stores.pgbouncer);
else describe.skip("fault injection through PgBouncer (no pgbouncer)", () => {});
