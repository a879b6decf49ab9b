import { createClient } from "redis";
import { integerOption } from "../util/options.js";
import { bounded, redact } from "./bounded.js";
import { type Store, StoreError } from "./store.js";

/** The part of a node-redis client the store uses (any node-redis ≥ 4 has it). */
export interface RedisCommandClient {
  sendCommand(args: string[], options?: { timeout?: number }): Promise<unknown>;
}

// Every operation is bounded by our own timer (`bounded`): node-redis's own per-command timeout
// (5 s by default since v5, an AbortSignal.timeout armed per command) would be a second timer
// per command for nothing — measured as the larger part of a GET's client CPU. Off per command.
const NO_CLIENT_TIMEOUT = { timeout: 0 };

/** Options of `createRedisStore`. */
export interface RedisStoreOptions {
  /** A connected node-redis client you own (the store never closes it), or… */
  client?: RedisCommandClient;
  /** …a URL (`redis://host:port/db`) the store connects to and owns. */
  url?: string;
  /** Prefix of every key, so several applications or test runs can share a server. Default `mcp-yield:`. */
  prefix?: string;
  /**
   * Time limit of every operation, connecting included. Past it the operation fails with
   * `StoreError("store_unavailable")`: a request then gets a clear error, never a hang.
   * Default 1000 ms.
   */
  timeoutMs?: number;
}

// Compare-and-swap on the exact value, atomically on the server.
const SWAP = `local cur = redis.call('GET', KEYS[1])
if cur == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) return 1 end
return 0`;
// Increment; a key this creates gets its time to live (one round trip, atomically).
const INCR = `local sum = redis.call('INCRBY', KEYS[1], ARGV[1])
if redis.call('PTTL', KEYS[1]) == -1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return sum`;

/**
 * A store on a Redis server, shared by every instance pointed at it. Each operation is one
 * round trip (compare-and-swap is a Lua script); an unreachable, closed or slow server fails
 * the operation within `timeoutMs` with `StoreError("store_unavailable")`, and commands are
 * never queued while disconnected (a queued write could land after the caller gave up).
 */
export async function createRedisStore(options: RedisStoreOptions): Promise<Store> {
  const timeoutMs = integerOption("timeoutMs", options.timeoutMs, 1000);
  const prefix = options.prefix ?? "mcp-yield:";
  if ((options.client === undefined) === (options.url === undefined)) throw new TypeError("createRedisStore: give exactly one of client or url");
  let owned: ReturnType<typeof createClient> | undefined;
  let client: RedisCommandClient;
  if (options.client !== undefined) {
    client = options.client;
  } else {
    owned = createClient({
      url: options.url!,
      disableOfflineQueue: true,
      socket: { connectTimeout: timeoutMs, reconnectStrategy: (retries) => Math.min(50 * 2 ** retries, 2000) },
    });
    // node-redis emits "error" on every failed reconnect; unheard, it would crash the process.
    owned.on("error", () => {});
    await bounded(owned.connect(), timeoutMs, "Redis", `connecting to ${redact(options.url!)}`).catch(async (error: unknown) => {
      await owned?.destroy();
      throw error;
    });
    client = owned as unknown as RedisCommandClient;
  }

  const run = (args: string[]) => bounded(client.sendCommand(args, NO_CLIENT_TIMEOUT), timeoutMs, "Redis", args[0]!);
  const shas = new Map<string, string>();
  /** Run a Lua script by its digest, loading it first (and again when the server lost its cache: a restart, SCRIPT FLUSH). */
  const script = async (source: string, args: string[]): Promise<unknown> => {
    let sha = shas.get(source);
    if (sha === undefined) shas.set(source, (sha = String(await run(["SCRIPT", "LOAD", source]))));
    try {
      return await run(["EVALSHA", sha, ...args]);
    } catch (error) {
      if (!String((error as Error).message).includes("NOSCRIPT")) throw error;
      return run(["EVAL", source, ...args]);
    }
  };
  const ms = (ttlMs: number) => String(integerOption("ttlMs", Math.ceil(ttlMs), 1));

  return {
    async get(key) {
      const value = await run(["GET", prefix + key]);
      return typeof value === "string" ? value : undefined;
    },
    async add(key, value, ttlMs) {
      return (await run(["SET", prefix + key, value, "PX", ms(ttlMs), "NX"])) === "OK";
    },
    async swap(key, expected, value, ttlMs) {
      return (await script(SWAP, ["1", prefix + key, expected, value, ms(ttlMs)])) === 1;
    },
    async set(key, value, ttlMs) {
      await run(["SET", prefix + key, value, "PX", ms(ttlMs)]);
    },
    async delete(key) {
      await run(["DEL", prefix + key]);
    },
    async incr(key, delta, ttlMs) {
      if (!Number.isSafeInteger(delta)) throw new TypeError(`incr: delta must be a safe integer, got ${delta}`);
      return Number(await script(INCR, ["1", prefix + key, String(delta), ms(ttlMs)]));
    },
    async schedule(index, member, atMs) {
      await run(["ZADD", prefix + index, String(atMs), member]);
    },
    async unschedule(index, member) {
      await run(["ZREM", prefix + index, member]);
    },
    async due(index, nowMs, limit) {
      const members = await run(["ZRANGE", prefix + index, "-inf", String(nowMs), "BYSCORE", "LIMIT", "0", String(limit)]);
      return Array.isArray(members) ? members.map(String) : [];
    },
    async members(index, offset, limit) {
      if (limit <= 0) return [];
      const reply = await run(["ZRANGE", prefix + index, String(offset), String(offset + limit - 1), "WITHSCORES"]);
      if (!Array.isArray(reply)) return [];
      // RESP2 answers member, score, member, score…; RESP3 answers [member, score] pairs.
      const flat = reply.flat() as unknown[];
      const page: Array<{ member: string; at: number }> = [];
      for (let i = 0; i + 1 < flat.length; i += 2) page.push({ member: String(flat[i]), at: Number(flat[i + 1]) });
      return page;
    },
    async time() {
      const reply = await run(["TIME"]);
      if (!Array.isArray(reply) || reply.length !== 2) throw new StoreError("store_unavailable", "Redis answered TIME with something else than [seconds, microseconds]");
      return Number(reply[0]) * 1000 + Math.floor(Number(reply[1]) / 1000);
    },
    async close() {
      if (owned?.isOpen) await owned.close();
      else await owned?.destroy();
    },
  };
}
