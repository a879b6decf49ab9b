import { execFileSync } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { StoreError } from "mcp-yield";
import { createRedisStore } from "mcp-yield/redis";
import { redisClusterAvailable, startRedisCluster } from "../support/redis-cluster.js";

// The Redis store on a Redis Cluster (issue 55, point 1): keys go to their slot's master, the
// indexes are spread over hash-tagged buckets so no one node holds every lease and due time,
// sweeping and listing read every bucket in the order one sorted set would give; and a store
// made for one server but pointed at a cluster node says so instead of "try again later".

const cluster = redisClusterAvailable ? await startRedisCluster() : undefined;
afterAll(() => cluster?.stop());

/** The keys on the node at `port` that match `pattern`. */
const keysOn = (port: number, pattern: string) =>
  execFileSync("redis-cli", ["-h", "127.0.0.1", "-p", String(port), "--scan", "--pattern", pattern], { encoding: "utf8" })
    .split("\n")
    .filter((k) => k !== "");

describe.skipIf(cluster === undefined)("the Redis store on a Redis Cluster", () => {
  it("an index is spread over every master, and due() and members() read it in one order", async () => {
    const store = await createRedisStore({ clusterUrls: [cluster!.urls[0]!], prefix: "spread:", onWarning: () => {} });
    try {
      const members = Array.from({ length: 200 }, (_, i) => `task-${i}`);
      // Times out of order, some equal: the merged order is by time, then member.
      await Promise.all(members.map((m, i) => store.schedule("leases", m, 1000 + ((i * 37) % 50))));
      const buckets = await Promise.all((await cluster!.masterPorts()).map((port) => keysOn(port, "spread:leases:*").length));
      expect(buckets.every((n) => n > 0)).toBe(true);
      expect(buckets.reduce((a, b) => a + b)).toBe(16);
      const expected = members.map((m, i) => ({ member: m, at: 1000 + ((i * 37) % 50) })).sort((a, b) => a.at - b.at || Buffer.compare(Buffer.from(a.member), Buffer.from(b.member)));
      expect(await store.due("leases", 1010, 500)).toEqual(expected.filter((e) => e.at <= 1010).map((e) => e.member));
      expect(await store.due("leases", 2000, 7)).toEqual(expected.slice(0, 7).map((e) => e.member));
      const pages = [];
      for (let page = await store.members("leases", 60); page.length > 0; page = await store.members("leases", 60, page.at(-1))) pages.push(...page);
      expect(pages).toEqual(expected);
      await store.unschedule("leases", expected[0]!.member);
      expect(await store.due("leases", 2000, 1)).toEqual([expected[1]!.member]);
    } finally {
      await store.close();
    }
  });

  it("a store for one server pointed at a cluster node: store_misconfigured, naming clusterUrls", async () => {
    const store = await createRedisStore({ url: cluster!.urls[0]!, prefix: "one:", onWarning: () => {} });
    try {
      // Some of these keys live on other nodes: the node answers MOVED.
      const errors = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          store.get(`k${i}`).then(
            () => undefined,
            (e: unknown) => e,
          ),
        ),
      );
      const moved = errors.find((e) => e !== undefined) as StoreError;
      expect(moved).toBeInstanceOf(StoreError);
      expect(moved.reason).toBe("store_misconfigured");
      expect(moved.message).toMatch(/MOVED .*this is a node of a Redis Cluster: connect with createRedisStore\(\{ clusterUrls \}\)/);
      expect(moved.cause).toBeInstanceOf(Error);
    } finally {
      await store.close();
    }
  });

  it("a node-redis cluster client of your own is taken as { client } (and not closed by the store)", async () => {
    const { createCluster } = await import("redis");
    const client = createCluster({ rootNodes: [{ url: cluster!.urls[1]! }] });
    await client.connect();
    try {
      const store = await createRedisStore({ client, prefix: "own:", onWarning: () => {} });
      for (let i = 0; i < 20; i++) expect(await store.add(`k${i}`, "v", 10_000)).toBe(true);
      expect(await store.swap("k3", "v", "w", 10_000)).toBe(true);
      expect(await store.get("k3")).toBe("w");
      expect(await store.incr("n", 5, 10_000)).toBe(5);
      await store.close();
      expect(await client.sendCommand("own:k3", true, ["GET", "own:k3"])).toBe("w");
    } finally {
      await client.close();
    }
  });

  it("refuses a prefix with a hash tag, and more than one of client, url, clusterUrls", async () => {
    await expect(createRedisStore({ clusterUrls: cluster!.urls, prefix: "{app}:" })).rejects.toThrow(/may not contain "\{"/);
    await expect(createRedisStore({ clusterUrls: cluster!.urls, url: cluster!.urls[0]! })).rejects.toThrow(/exactly one of client, url or clusterUrls/);
    await expect(createRedisStore({ clusterUrls: [] })).rejects.toThrow(/non-empty array/);
  });
});
