import { afterAll, describe, expect, it } from "vitest";
import { createMemoryStore, type Store, StoreError } from "mcp-yield";
import { createRedisStore } from "mcp-yield/redis";
import { dropPrefix, REDIS_URL, redisAvailable, startPrivateRedis, testPrefix } from "./support/redis.js";

// One contract, two stores: what the runtime relies on holds for memory and for a real Redis.

const prefix = testPrefix("store");
// The memory store runs on an injected clock that `elapse` moves; Redis keeps time on the
// server, so there `elapse` waits for real (a wait only ever runs longer under load).
let memoryNow = 1_800_000_000_000;
const stores: Array<[string, () => Promise<Store>, (ms: number) => Promise<void>]> = [
  [
    "memory",
    async () => createMemoryStore({ clock: () => memoryNow }),
    async (ms) => {
      memoryNow += ms;
    },
  ],
];
if (redisAvailable) stores.push(["redis", () => createRedisStore({ url: REDIS_URL, prefix }), (ms) => new Promise((r) => setTimeout(r, ms))]);
afterAll(async () => {
  if (redisAvailable) await dropPrefix(prefix);
});

describe.each(stores)("%s store", (_name, make, elapse) => {
  it("get, add (only if absent), set, delete", async () => {
    const store = await make();
    expect(await store.get("a")).toBeUndefined();
    expect(await store.add("a", "1", 10_000)).toBe(true);
    expect(await store.add("a", "2", 10_000)).toBe(false);
    expect(await store.get("a")).toBe("1");
    await store.set("a", "3", 10_000);
    expect(await store.get("a")).toBe("3");
    await store.delete("a");
    expect(await store.get("a")).toBeUndefined();
    await store.close();
  });

  it("swap replaces only the exact expected value, and concurrent swaps from one value let exactly one win", async () => {
    const store = await make();
    await store.set("s", "v0", 10_000);
    expect(await store.swap("s", "nope", "x", 10_000)).toBe(false);
    expect(await store.swap("missing", "v0", "x", 10_000)).toBe(false);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => store.swap("s", "v0", `w${i}`, 10_000)));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await store.get("s")).toBe(`w${results.indexOf(true)}`);
    await store.close();
  });

  it("values expire after their time to live", async () => {
    const store = await make();
    await store.set("t", "x", 50);
    expect(await store.add("u", "y", 50)).toBe(true);
    await elapse(120);
    expect(await store.get("t")).toBeUndefined();
    expect(await store.add("u", "z", 10_000)).toBe(true); // expired: absent again
    await store.close();
  });

  it("incr adds atomically (concurrent additions all count), and a counter it creates expires after its time to live", async () => {
    const store = await make();
    expect(await store.incr("n", 5, 80)).toBe(5);
    const sums = await Promise.all(Array.from({ length: 20 }, () => store.incr("n", 1, 80)));
    expect(new Set(sums).size).toBe(20);
    expect(Math.max(...sums)).toBe(25);
    expect(await store.incr("n", -25, 80)).toBe(0);
    expect(await store.get("n")).toBe("0");
    await elapse(150); // later additions kept the expiry the first one set
    expect(await store.get("n")).toBeUndefined();
    await store.close();
  });

  it("a due-time index returns members whose time has come, earliest first", async () => {
    const store = await make();
    await store.schedule("idx", "late", 300);
    await store.schedule("idx", "early", 100);
    await store.schedule("idx", "later", 900);
    expect(await store.due("idx", 500, 10)).toEqual(["early", "late"]);
    await store.schedule("idx", "early", 1000); // moved
    await store.unschedule("idx", "late");
    expect(await store.due("idx", 500, 10)).toEqual([]);
    expect(await store.due("idx", 2000, 2)).toEqual(["later", "early"]);
    await store.close();
  });
});

describe.skipIf(!redisAvailable)("redis store clock", () => {
  it("time() is the server's clock (Redis TIME), in epoch milliseconds", async () => {
    const store = await createRedisStore({ url: REDIS_URL, prefix });
    const before = Date.now();
    const theirs = await store.time!();
    const after = Date.now();
    // Same machine here: the server's clock reads within the round trip (and a little rounding).
    expect(theirs).toBeGreaterThanOrEqual(before - 5);
    expect(theirs).toBeLessThanOrEqual(after + 5);
    await store.close();
  });
});

describe("memory store bound", () => {
  it("refuses a write past its byte bound with store_full, and frees expired space first", async () => {
    let now = 0;
    const store = createMemoryStore({ maxBytes: 100, clock: () => now });
    await store.set("k1", "x".repeat(60), 1000);
    await expect(store.set("k2", "y".repeat(60), 1000)).rejects.toMatchObject({ reason: "store_full" });
    expect(await store.get("k2")).toBeUndefined();
    now = 2000; // k1 has expired: its bytes are reclaimed
    await store.set("k2", "y".repeat(60), 1000);
    expect(store.bytes).toBe(62);
  });

  it("keeps headroom for exactly-once bookkeeping: filled by other writes, it still records redemptions", async () => {
    const store = createMemoryStore({ maxBytes: 16_000 }); // 1,000 bytes reserved by default
    let filled = 0;
    for (let i = 0; ; i++) {
      const written = await store.set(`task:${i}`, "x".repeat(500), 60_000).then(() => true, (e: unknown) => e);
      if (written !== true) {
        expect(written).toMatchObject({ reason: "store_full", message: expect.stringContaining("kept for exactly-once bookkeeping") });
        break;
      }
      filled++;
    }
    // Other writes stopped at maxBytes − reserved (15,000), not at maxBytes.
    expect(filled).toBe(29);
    expect(store.bytes).toBeLessThanOrEqual(15_000);
    expect(store.bytes + `task:${filled}`.length + 500).toBeGreaterThan(15_000);
    expect(await store.add("redeem:n1", "y".repeat(800), 60_000)).toBe(true);
    await expect(store.add("redeem:n2", "y".repeat(800), 60_000)).rejects.toMatchObject({ reason: "store_full" });
    expect(() => createMemoryStore({ maxBytes: 100, reservedBytes: 100 })).toThrow(/reservedBytes \(100\) must be less than maxBytes \(100\)/);
  });
});

describe.skipIf(!redisAvailable)("redis store failures", () => {
  it("an unreachable server fails within the time limit with store_unavailable", async () => {
    const started = Date.now();
    const error = await createRedisStore({ url: "redis://127.0.0.1:1", timeoutMs: 300 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).reason).toBe("store_unavailable");
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("a server stopped mid-run fails each operation within the limit, and works again once back", async () => {
    const redis = await startPrivateRedis();
    const store = await createRedisStore({ url: redis.url, timeoutMs: 300 });
    await store.set("k", "v", 60_000);
    await redis.stop();
    const started = Date.now();
    await expect(store.get("k")).rejects.toMatchObject({ reason: "store_unavailable" });
    await expect(store.swap("k", "v", "w", 60_000)).rejects.toMatchObject({ reason: "store_unavailable" });
    expect(Date.now() - started).toBeLessThan(2000);
    await redis.restart();
    // The restarted server kept nothing (no persistence); the client reconnects by itself.
    let value: string | undefined | "error" = "error";
    for (let i = 0; i < 50 && value === "error"; i++) {
      value = await store.get("k").catch(() => "error" as const);
      if (value === "error") await new Promise((r) => setTimeout(r, 100));
    }
    expect(value).toBeUndefined();
    await store.close();
    await redis.stop();
  }, 30_000);
});
