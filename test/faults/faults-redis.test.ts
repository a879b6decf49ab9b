import { afterAll, describe } from "vitest";
import { createRedisStore } from "mcp-yield/redis";
import { faultSuite } from "../support/fault-suite.js";
import { namespaces } from "../support/prefixed-store.js";
import { dropPrefix, REDIS_URL, redisAvailable, testPrefix } from "../support/redis.js";

// The fault-injection suite (test/support/fault-suite.ts) on a real Redis: one store (one
// connection and its subscriber), each run under a key prefix of its own — no sweeper sees
// another run's tasks.
const prefix = testPrefix("faults");
const stores = namespaces(() => createRedisStore({ url: REDIS_URL, prefix }));
afterAll(async () => {
  await stores.close();
  if (redisAvailable) await dropPrefix(prefix);
});
if (redisAvailable) faultSuite("redis", stores.next);
else describe.skip("fault injection on the redis store (no Redis)", () => {});
