import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { createMemoryStore, StoreError } from "mcp-yield";
import { createRedisStore } from "mcp-yield/redis";
import { dropPrefix, REDIS_URL, redisAvailable, startPrivateRedis, testPrefix } from "../support/redis.js";

// The contract every store keeps lives in store-contract.test.ts; here, what is one store's own.

const prefix = testPrefix("store");
afterAll(async () => {
  if (redisAvailable) await dropPrefix(prefix);
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
  it("never refuses a write while expired entries, in any order of lifetimes, would make room for it (property)", async () => {
    // The full scan for expired entries runs only so often at the bound; a refusal must still
    // come only when live entries fill the store. A model: the bytes of unexpired entries.
    const op = fc.record({ key: fc.integer({ min: 0, max: 40 }), size: fc.integer({ min: 1, max: 300 }), ttl: fc.integer({ min: 1, max: 400 }), advance: fc.integer({ min: 0, max: 60 }) });
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 200 }), async (ops) => {
        let now = 0;
        const maxBytes = 2_000;
        // No shrinking: only expiry can make room, so the model below is exact.
        const store = createMemoryStore({ maxBytes, reservedBytes: 0, clock: () => now, shrink: () => undefined });
        const model = new Map<string, { bytes: number; expiresAt: number }>();
        for (const { key, size, ttl, advance } of ops) {
          now += advance;
          const k = `k${key}`;
          const liveBytes = [...model].filter(([name, e]) => e.expiresAt > now && name !== k).reduce((sum, [name, e]) => sum + name.length + e.bytes, 0);
          const fits = liveBytes + k.length + size <= maxBytes;
          const written = await store.set(k, "v".repeat(size), ttl).then(
            () => true,
            (e: unknown) => e,
          );
          if (fits) expect(written).toBe(true);
          else expect(written).toMatchObject({ reason: "store_full" });
          if (written === true) model.set(k, { bytes: size, expiresAt: now + ttl });
          expect(store.bytes).toBeLessThanOrEqual(maxBytes);
        }
        await store.close();
      }),
      { numRuns: 300 },
    );
  });

  it("never passes its bound by replacing an entry the write itself reclaims (expired, or shrunk to make room)", async () => {
    let now = 0;
    // An expired value under the key being written, which expiry in write order has not reached.
    const expired = createMemoryStore({ maxBytes: 1_000, reservedBytes: 0, clock: () => now, shrink: () => undefined });
    await expired.set("a", "a".repeat(600), 1_000);
    await expired.set("k", "k".repeat(300), 10);
    now = 20;
    // 601 live bytes + 401 would pass the bound: refused, whatever the expired "k" held.
    await expect(expired.set("k", "n".repeat(400), 1_000)).rejects.toMatchObject({ reason: "store_full" });
    expect(expired.bytes).toBeLessThanOrEqual(1_000);
    // The value being replaced is the one the store shrinks to make room.
    const shrinking = createMemoryStore({ maxBytes: 1_000, reservedBytes: 0, clock: () => now, shrink: (_key, value) => (value.length > 10 ? "s" : undefined) });
    await shrinking.set("k", "k".repeat(500), 1_000);
    await shrinking.set("b", "b".repeat(450), 1_000);
    // 952 bytes, 90 more needed: the shed shrinks "k" (the oldest) to one character, which gives
    // back almost nothing to a write that replaces it — 451 + 591 would pass the bound: refused.
    await expect(shrinking.set("k", "n".repeat(590), 1_000)).rejects.toMatchObject({ reason: "store_full" });
    expect(shrinking.bytes).toBeLessThanOrEqual(1_000);
    await expired.close();
    await shrinking.close();
  });

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
      const written = await store.set(`task:${i}`, "x".repeat(500), 60_000).then(
        () => true,
        (e: unknown) => e,
      );
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
