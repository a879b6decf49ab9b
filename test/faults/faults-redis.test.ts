import { afterAll, describe } from "vitest";
import { createRedisStore } from "mcp-yield/redis";
import { faultSuite } from "../support/fault-suite.js";
import { dropPrefix, REDIS_URL, redisAvailable, testPrefix } from "../support/redis.js";

// The fault-injection suite (test/support/fault-suite.ts) on a real Redis, each run under a key
// prefix of its own: no sweeper sees another run's tasks.
const prefix = testPrefix("faults");
let next = 0;
afterAll(async () => {
  if (redisAvailable) await dropPrefix(prefix);
});
if (redisAvailable) faultSuite("redis", () => createRedisStore({ url: REDIS_URL, prefix: `${prefix}${next++}:` }));
else describe.skip("fault injection on the redis store (no Redis)", () => {});
