import { createClient, createCluster } from "redis";
import type { FeedListener, Listening } from "../store.js";

// store/feed/redis-feed.ts owns the Redis store's change-feed listener: a subscriber connection of its
// own (pub/sub takes a connection over), subscribed to the channel on one server, or to each of
// the channel's shard channels on a cluster (SSUBSCRIBE: a notice goes only to the shard whose
// slot carries it, not over the whole cluster bus). node-redis resubscribes after a reconnect;
// the listener's `reset` then says notices may have been missed in between.

/** What a subscriber needs from a node-redis client or cluster client. */
interface Subscriber {
  on(event: string, handler: (...args: unknown[]) => void): unknown;
  connect(): Promise<unknown>;
  close?(): Promise<unknown>;
  destroy(): unknown;
  isOpen: boolean;
  subscribe?(channel: string, listener: (message: string) => void): Promise<void>;
  sSubscribe?(channel: string, listener: (message: string) => void): Promise<void>;
}

/** Where the subscriber connects: a URL, cluster node URLs, or a duplicate of a client the user gave. */
export type SubscriberSource = { url: string } | { clusterUrls: string[] } | { duplicate: () => unknown; cluster: boolean };

/** A cluster's shard channels of `channel` — one per index bucket, hash-tagged like the buckets' keys. */
export const shardChannels = (base: string, buckets: number): string[] => Array.from({ length: buckets }, (_, b) => `${base}:{${b}}`);

/**
 * Listen on `channels` (one on a server, the shard channels on a cluster). Resolves once
 * subscribed; `undefined` (after `warn`) when no subscriber can be opened from the source.
 */
export async function listenRedis(source: SubscriberSource, channels: string[], listener: FeedListener, timeoutMs: number, warn: (message: string) => void): Promise<Listening | undefined> {
  const reconnect = { connectTimeout: timeoutMs, reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 2000) };
  let sub: Subscriber;
  let sharded: boolean;
  if ("url" in source) [sub, sharded] = [createClient({ url: source.url, socket: reconnect }) as unknown as Subscriber, false];
  else if ("clusterUrls" in source) [sub, sharded] = [createCluster({ rootNodes: source.clusterUrls.map((url) => ({ url })), defaults: { socket: reconnect } }) as unknown as Subscriber, true];
  else [sub, sharded] = [source.duplicate() as Subscriber, source.cluster];
  // Unheard "error" events would crash the process; a lost subscriber shows as a reset when back.
  sub.on("error", () => {});
  let ready = false;
  const reset = () => {
    if (ready) listener.reset();
  };
  // One server: "ready" after each reconnect. A cluster: each node connection's "node-ready".
  sub.on(sharded ? "node-ready" : "ready", reset);
  const hear = (message: string) => listener.message(message);
  try {
    if (!sub.isOpen) await sub.connect();
    for (const channel of channels) await (sharded ? sub.sSubscribe!(channel, hear) : sub.subscribe!(channel, hear));
  } catch (error) {
    await Promise.resolve(sub.destroy()).catch(() => {});
    warn(`mcp-yield: the Redis store could not open its change-feed subscriber (${(error as Error).message}): tasks are found by polling only (sweepMs)`);
    return undefined;
  }
  ready = true;
  return {
    close: async () => {
      ready = false;
      if (sub.isOpen && sub.close) await sub.close().catch(() => sub.destroy());
      else await Promise.resolve(sub.destroy()).catch(() => {});
    },
  };
}
