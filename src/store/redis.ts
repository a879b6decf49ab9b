import { sha1 } from "@noble/hashes/legacy.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";
import { createClient, createCluster } from "redis";
import { integerOption } from "../util/options.js";
import { bounded, redact } from "./bounded.js";
import { checkRedisConfig } from "./redis-config.js";
import { listenRedis, shardChannels } from "./feed/redis-feed.js";
import { sharedFeed } from "./feed/shared-feed.js";
import { type IndexPosition, isAfter, type Store, StoreError } from "./store.js";

/** The part of a node-redis client the store uses (any node-redis ≥ 4 has it). */
export interface RedisCommandClient {
  sendCommand(args: string[], options?: { timeout?: number }): Promise<unknown>;
}

/** The part of a node-redis cluster client (`createCluster`) the store uses: commands routed by their first key. */
export interface RedisClusterCommandClient {
  sendCommand(firstKey: string | undefined, isReadonly: boolean | undefined, args: string[], options?: { timeout?: number }): Promise<unknown>;
  /** Present on a cluster client (how the store tells one from a client of one server). */
  nodeClient(node: never): Promise<unknown>;
}

// Every operation is bounded by our own timer (`bounded`): node-redis's own per-command timeout
// (5 s by default since v5, an AbortSignal.timeout armed per command) would be a second timer
// per command for nothing — measured as the larger part of a GET's client CPU. Off per command.
const NO_CLIENT_TIMEOUT = { timeout: 0 };

/** Options of `createRedisStore`. */
export interface RedisStoreOptions {
  /**
   * A connected node-redis client you own (the store never closes it) — of one server
   * (`createClient`) or of a Redis Cluster (`createCluster`) — or…
   */
  client?: RedisCommandClient | RedisClusterCommandClient;
  /** …a URL (`redis://host:port/db`) the store connects to and owns, or… */
  url?: string;
  /**
   * …the URLs of some nodes of a Redis Cluster (one is enough; more survive one being down): the
   * store discovers the rest, connects a cluster client and owns it. Keys go to their slot's
   * master; the indexes (leases, due times, task lists) are spread over `indexBuckets` slots.
   */
  clusterUrls?: string[];
  /**
   * On a cluster, how many slots each index is spread over (hash-tagged buckets), so that no
   * node holds every lease and due time. Listing and sweeping read every bucket. Default 16; on
   * one server an index is one sorted set.
   */
  indexBuckets?: number;
  /**
   * Check the server's configuration when the store is made (`CONFIG GET`, skipped where a
   * managed service forbids it) and warn (`onWarning`) about what breaks exactly-once: eviction
   * of keys (`maxmemory-policy` other than `noeviction`) or no persistence at all. Default true.
   */
  checkConfig?: boolean;
  /**
   * Replicas that must hold each write before the store reports it done (Redis `WAIT` after
   * it, on the same connection): a write only the master had is lost if the master dies before
   * its replicas copy it (replication is asynchronous), and the call or task would then go back
   * to before it — a completed step run again. A write fewer replicas confirm within `timeoutMs`
   * fails as `store_unavailable` (the round or task retries; nothing is acknowledged). Default
   * 0: no wait — right for one server, whose persistence (appendfsync) is what keeps writes.
   * On a replicated Redis or a cluster with replicas, 1.
   */
  minReplicas?: number;
  /** Where the store's warnings go (a configuration that breaks exactly-once). Default: the console, each once per process. */
  onWarning?: (message: string) => void;
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
// The same, announcing `notice` (ARGV[4] channel, ARGV[5] message) to the server's subscribers
// when it swapped: in the script, so a notice goes out exactly for a write that landed.
const SWAP_NOTIFY = `local cur = redis.call('GET', KEYS[1])
if cur == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) redis.call('PUBLISH', ARGV[4], ARGV[5]) return 1 end
return 0`;
// Increment; a key this creates gets its time to live (one round trip, atomically).
const INCR = `local sum = redis.call('INCRBY', KEYS[1], ARGV[1])
if redis.call('PTTL', KEYS[1]) == -1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return sum`;

/** Each script's SHA-1, as EVALSHA names it (made here: no SCRIPT LOAD round trip, on any node). */
const digests = new Map([SWAP, SWAP_NOTIFY, INCR].map((source) => [source, bytesToHex(sha1(utf8ToBytes(source)))]));

/** Where a member of an index lives: one of `buckets` hash-tagged keys (FNV-1a of the member), or the index itself on one server. */
function bucketOf(member: string, buckets: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < member.length; i++) h = Math.imul(h ^ member.charCodeAt(i), 0x01000193);
  return (h >>> 0) % buckets;
}

/** What a Redis error says is wrong with the setup (no repeat helps), in words that name the fix; `undefined` for anything else. */
function misconfiguredRedis(error: unknown): string | undefined {
  const message = String((error as Error)?.message ?? error);
  if (/^(MOVED|ASK) /.test(message)) return "this is a node of a Redis Cluster: connect with createRedisStore({ clusterUrls }) (the example server: MCP_YIELD_REDIS_CLUSTER)";
  if (/^READONLY/.test(message)) return "this is a read-only replica: point the store at the master";
  if (/^(NOPERM|NOAUTH|WRONGPASS)/.test(message)) return "the user lacks permission (the store needs GET, SET, DEL, EVALSHA/EVAL, ZADD, ZREM, ZRANGE, TIME on its prefix)";
  return undefined;
}

/** Order of index members: by time, then by member bytewise (the store contract's). */
const byTimeThenMember = (a: { member: string; at: number }, b: { member: string; at: number }) => a.at - b.at || Buffer.compare(Buffer.from(a.member), Buffer.from(b.member));

/**
 * A store on a Redis server, shared by every instance pointed at it. Each operation is one
 * round trip (compare-and-swap is a Lua script); an unreachable, closed or slow server fails
 * the operation within `timeoutMs` with `StoreError("store_unavailable")`, and commands are
 * never queued while disconnected (a queued write could land after the caller gave up).
 */
export async function createRedisStore(options: RedisStoreOptions): Promise<Store> {
  const timeoutMs = integerOption("timeoutMs", options.timeoutMs, 1000);
  const prefix = options.prefix ?? "mcp-yield:";
  const given = [options.client, options.url, options.clusterUrls].filter((o) => o !== undefined).length;
  if (given !== 1) throw new TypeError("createRedisStore: give exactly one of client, url or clusterUrls");
  if (options.clusterUrls !== undefined && (!Array.isArray(options.clusterUrls) || options.clusterUrls.length === 0 || !options.clusterUrls.every((u) => typeof u === "string")))
    throw new TypeError("createRedisStore: clusterUrls must be a non-empty array of redis:// URLs");
  const cluster = options.clusterUrls !== undefined || (options.client !== undefined && typeof (options.client as Partial<RedisClusterCommandClient>).nodeClient === "function");
  // A hash tag in the prefix would put every key in one slot, and the index buckets' own tags
  // (which spread the indexes) would not count: on a cluster the prefix carries none.
  if (cluster && prefix.includes("{")) throw new TypeError(`createRedisStore: on a Redis Cluster the prefix may not contain "{" (a hash tag), got ${JSON.stringify(prefix)}`);
  const buckets = cluster ? integerOption("indexBuckets", options.indexBuckets, 16) : 1;
  let owned: { close(): Promise<unknown>; destroy(): unknown; isOpen: boolean } | undefined;
  // The cluster client (the user's or ours): the change feed subscribes on it (feed/redis-feed.ts).
  let clusterClient: unknown = cluster ? options.client : undefined;
  // Our client (`url`): the feed's subscriber is its duplicate, which shares its class — node-redis
  // builds one with every module's commands per new set of options (≈ 9 ms of CPU each).
  let ownClient: { duplicate(overrides: { disableOfflineQueue: boolean }): unknown } | undefined;
  /** Send one command; `key` routes it on a cluster (`undefined`: any node). */
  let send: (key: string | undefined, readonly: boolean, args: string[]) => Promise<unknown>;
  if (options.client !== undefined) {
    const client = options.client;
    send = cluster
      ? (key, readonly, args) => (client as RedisClusterCommandClient).sendCommand(key, readonly, args, NO_CLIENT_TIMEOUT)
      : (_key, _readonly, args) => (client as RedisCommandClient).sendCommand(args, NO_CLIENT_TIMEOUT);
  } else if (options.clusterUrls !== undefined) {
    const made = createCluster({
      rootNodes: options.clusterUrls.map((url) => ({ url })),
      defaults: { disableOfflineQueue: true, socket: { connectTimeout: timeoutMs, reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 2000) } },
    });
    made.on("error", () => {});
    await bounded(made.connect(), timeoutMs, "Redis Cluster", `connecting to ${options.clusterUrls.map(redact).join(", ")}`).catch(async (error: unknown) => {
      await Promise.resolve(made.destroy()).catch(() => {});
      throw error;
    });
    owned = made as unknown as NonNullable<typeof owned>;
    clusterClient = made;
    send = (key, readonly, args) => made.sendCommand(key, readonly, args, NO_CLIENT_TIMEOUT);
  } else {
    const made = createClient({
      url: options.url!,
      disableOfflineQueue: true,
      socket: { connectTimeout: timeoutMs, reconnectStrategy: (retries) => Math.min(50 * 2 ** retries, 2000) },
    });
    // node-redis emits "error" on every failed reconnect; unheard, it would crash the process.
    made.on("error", () => {});
    await bounded(made.connect(), timeoutMs, "Redis", `connecting to ${redact(options.url!)}`).catch(async (error: unknown) => {
      await made.destroy();
      throw error;
    });
    owned = made as unknown as NonNullable<typeof owned>;
    ownClient = made;
    send = (_key, _readonly, args) => made.sendCommand(args, NO_CLIENT_TIMEOUT);
  }
  const service = cluster ? "Redis Cluster" : "Redis";
  const run = (key: string | undefined, args: string[], readonly = false) => bounded(send(key, readonly, args), timeoutMs, service, args[0]!, misconfiguredRedis);
  const minReplicas = integerOption("minReplicas", options.minReplicas, 0, 0);
  /** `run` for a write: done once `minReplicas` replicas hold it (WAIT, sent to the same node after it). */
  const write =
    minReplicas === 0
      ? run
      : async (key: string | undefined, args: string[]): Promise<unknown> => {
          const reply = await run(key, args);
          // WAIT's own limit leaves room inside ours, so its count (not our timer) answers.
          const acked = Number(await run(key, ["WAIT", String(minReplicas), String(Math.max(1, Math.floor(timeoutMs / 2)))]));
          if (!(acked >= minReplicas))
            throw new StoreError("store_unavailable", `${service}: ${args[0]} reached ${acked} of the ${minReplicas} replicas minReplicas requires within ${Math.floor(timeoutMs / 2)} ms`);
          return reply;
        };
  /** Run a Lua script by its digest, sent whole where the node lacks it (a restart, SCRIPT FLUSH, another node of a cluster). */
  const script = async (source: string, key: string, args: string[]): Promise<unknown> => {
    const sha = digests.get(source)!;
    try {
      return await write(key, ["EVALSHA", sha, "1", key, ...args]);
    } catch (error) {
      if (!String((error as Error).message).includes("NOSCRIPT")) throw error;
      return write(key, ["EVAL", source, "1", key, ...args]);
    }
  };
  if (options.checkConfig !== false) await checkRedisConfig(run, cluster, options.onWarning);
  const ms = (ttlMs: number) => String(integerOption("ttlMs", Math.ceil(ttlMs), 1));
  /** A change-feed channel under the prefix (pub/sub channels are one namespace per server, like keys). */
  const feedChannel = (channel: string) => `${prefix}feed:${channel}`;
  const warnFeed = options.onWarning ?? ((message: string) => console.warn(message));

  const indexKeys = (index: string): string[] => (buckets === 1 ? [prefix + index] : Array.from({ length: buckets }, (_, b) => `${prefix}${index}:{${b}}`));
  const indexKey = (index: string, member: string): string => (buckets === 1 ? prefix + index : `${prefix}${index}:{${bucketOf(member, buckets)}}`);
  /** Members and times from a ZRANGE … WITHSCORES reply (RESP2 flat, RESP3 pairs). */
  const scored = (reply: unknown): Array<{ member: string; at: number }> => {
    if (!Array.isArray(reply)) return [];
    const flat = reply.flat() as unknown[];
    const page: Array<{ member: string; at: number }> = [];
    for (let i = 0; i + 1 < flat.length; i += 2) page.push({ member: String(flat[i]), at: Number(flat[i + 1]) });
    return page;
  };

  /**
   * Up to `limit` members of one sorted set after `after`. ZRANGE … BYSCORE starts at the
   * position's time; the members at that very time up to the position itself (ties, few) are
   * stepped over page by page.
   */
  async function pageAfter(key: string, limit: number, after: IndexPosition | undefined): Promise<IndexPosition[]> {
    const found: IndexPosition[] = [];
    for (let offset = 0; ; ) {
      const page = scored(await run(key, ["ZRANGE", key, after === undefined ? "-inf" : String(after.at), "+inf", "BYSCORE", "LIMIT", String(offset), String(limit), "WITHSCORES"], true));
      for (const entry of page) if (after === undefined || isAfter(entry, after)) found.push(entry);
      if (found.length >= limit || page.length < limit) return found.slice(0, limit);
      offset += page.length;
    }
  }

  return {
    async get(key) {
      const value = await run(prefix + key, ["GET", prefix + key], true);
      return typeof value === "string" ? value : undefined;
    },
    async getMany(keys) {
      const text = (value: unknown) => (typeof value === "string" ? value : undefined);
      if (keys.length === 0) return [];
      // On a cluster the keys' slots differ: each is read on its own node, all in flight at once.
      if (cluster) return Promise.all(keys.map(async (key) => text(await run(prefix + key, ["GET", prefix + key], true))));
      return ((await run(prefix + keys[0]!, ["MGET", ...keys.map((key) => prefix + key)], true)) as unknown[]).map(text);
    },
    async add(key, value, ttlMs) {
      return (await write(prefix + key, ["SET", prefix + key, value, "PX", ms(ttlMs), "NX"])) === "OK";
    },
    async swap(key, expected, value, ttlMs, notice) {
      if (notice === undefined) return (await script(SWAP, prefix + key, [expected, value, ms(ttlMs)])) === 1;
      if (buckets === 1) return (await script(SWAP_NOTIFY, prefix + key, [expected, value, ms(ttlMs), feedChannel(notice.channel), notice.message])) === 1;
      // A cluster: a script may not publish to a shard channel of another slot, so the notice
      // follows the write (not awaited: it is best effort, and the write is what the caller waits for).
      const swapped = (await script(SWAP, prefix + key, [expected, value, ms(ttlMs)])) === 1;
      if (swapped) {
        const channel = shardChannels(feedChannel(notice.channel), buckets)[bucketOf(key, buckets)]!;
        void run(channel, ["SPUBLISH", channel, notice.message]).catch(() => {});
      }
      return swapped;
    },
    listen: sharedFeed(async (channel, listener) => {
      const base = feedChannel(channel);
      if (clusterClient !== undefined) return listenRedis({ cluster: clusterClient }, shardChannels(base, buckets), listener, warnFeed);
      if (options.client !== undefined && typeof (options.client as { duplicate?: unknown }).duplicate !== "function") {
        warnFeed("mcp-yield: the Redis client given to the store has no duplicate(): no change-feed subscriber, tasks are found by polling only (sweepMs)");
        return undefined;
      }
      // A subscriber's commands wait while it reconnects; the store's fail at once.
      const own = ownClient;
      const duplicate = own !== undefined ? () => own.duplicate({ disableOfflineQueue: false }) : () => (options.client as unknown as { duplicate(): unknown }).duplicate();
      return listenRedis({ duplicate }, [base], listener, warnFeed);
    }),
    async set(key, value, ttlMs) {
      await write(prefix + key, ["SET", prefix + key, value, "PX", ms(ttlMs)]);
    },
    async delete(key) {
      await write(prefix + key, ["DEL", prefix + key]);
    },
    async incr(key, delta, ttlMs) {
      if (!Number.isSafeInteger(delta)) throw new TypeError(`incr: delta must be a safe integer, got ${delta}`);
      return Number(await script(INCR, prefix + key, [String(delta), ms(ttlMs)]));
    },
    async schedule(index, member, atMs) {
      const key = indexKey(index, member);
      await write(key, ["ZADD", key, String(atMs), member]);
    },
    async unschedule(index, member) {
      const key = indexKey(index, member);
      await write(key, ["ZREM", key, member]);
    },
    async index(changes) {
      // Keys in several slots (a cluster): one command per change, all in flight together.
      await Promise.all(
        changes.map(({ index, member, at }) => {
          const key = indexKey(index, member);
          return write(key, at === null ? ["ZREM", key, member] : ["ZADD", key, String(at), member]);
        }),
      );
    },
    async due(index, nowMs, limit) {
      if (buckets === 1) {
        const members = await run(prefix + index, ["ZRANGE", prefix + index, "-inf", String(nowMs), "BYSCORE", "LIMIT", "0", String(limit)], true);
        return Array.isArray(members) ? members.map(String) : [];
      }
      // Each bucket's earliest, merged: the earliest `limit` of them all.
      const pages = await Promise.all(indexKeys(index).map((key) => run(key, ["ZRANGE", key, "-inf", String(nowMs), "BYSCORE", "LIMIT", "0", String(limit), "WITHSCORES"], true)));
      return pages
        .flatMap(scored)
        .sort(byTimeThenMember)
        .slice(0, limit)
        .map((m) => m.member);
    },
    async size(index) {
      const counts = await Promise.all(indexKeys(index).map((key) => run(key, ["ZCARD", key], true)));
      return counts.reduce<number>((sum, n) => sum + Number(n), 0);
    },
    async members(index, limit, after) {
      if (limit <= 0) return [];
      // Each bucket's first `limit` after the position, merged: the first `limit` of them all.
      const pages = await Promise.all(indexKeys(index).map((key) => pageAfter(key, limit, after)));
      return buckets === 1 ? pages[0]! : pages.flat().sort(byTimeThenMember).slice(0, limit);
    },
    async time() {
      // One node's clock for every instance (the slot of this key's master), as on one server.
      const reply = await run(`${prefix}clock`, ["TIME"], true);
      if (!Array.isArray(reply) || reply.length !== 2) throw new StoreError("store_unavailable", `${service} answered TIME with something else than [seconds, microseconds]`);
      return Number(reply[0]) * 1000 + Math.floor(Number(reply[1]) / 1000);
    },
    async close() {
      if (owned?.isOpen) await owned.close();
      else await owned?.destroy();
    },
  };
}
