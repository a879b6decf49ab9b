import { describe } from "vitest";
import { deployedSuiteStores } from "../support/deployed-suites.js";
import { faultSuite } from "../support/fault-suite.js";

// The fault-injection suite (test/support/fault-suite.ts) on a Redis Cluster and on PostgreSQL
// through PgBouncer (transaction mode, default configuration), each run under a prefix of its
// own. Opt-in with the PostgreSQL one (`npm run test:faults`, MCP_YIELD_FAULTS_POSTGRES=1), for
// the same reason: each is as long as the Redis suite, past CI's budget beside the others. In
// every run: the edges of a call on both (edges-deployed.test.ts), the store contract, the
// three-instance SIGKILL scenario and the durable fixtures.
const enabled = process.env.MCP_YIELD_FAULTS_POSTGRES === "1";
const stores = await deployedSuiteStores("faults", { cluster: enabled, pgbouncer: enabled });
if (stores.cluster) faultSuite("redis cluster", stores.cluster);
else describe.skip(`fault injection on a Redis Cluster (${enabled ? "no redis-server" : "opt-in: npm run test:faults"})`, () => {});
if (stores.pgbouncer) faultSuite("postgres via PgBouncer", stores.pgbouncer);
else describe.skip(`fault injection through PgBouncer (${enabled ? "no pgbouncer" : "opt-in: npm run test:faults"})`, () => {});
