import { afterAll, describe } from "vitest";
import { createRedisStore } from "mcp-yield/redis";
import { edgeSuite } from "../support/edge-suite.js";
import { namespaces } from "../support/prefixed-store.js";
import { dropPrefix, REDIS_URL, redisAvailable, testPrefix } from "../support/redis.js";

// The edges of a call (test/support/edge-suite.ts) on a real Redis: one store, each run under a
// key prefix of its own.
const prefix = testPrefix("edges");
const stores = namespaces(() => createRedisStore({ url: REDIS_URL, prefix }));
afterAll(async () => {
  await stores.close();
  if (redisAvailable) await dropPrefix(prefix);
});
if (redisAvailable) edgeSuite("redis", stores.next);
else describe.skip("the edges of a call on the redis store (no Redis)", () => {});
