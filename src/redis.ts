// `mcp-yield/redis`: the Redis store, in its own entry point so that only its users load a Redis client.
export { createRedisStore, type RedisStoreOptions, type RedisCommandClient, type RedisClusterCommandClient } from "./store/redis.js";
