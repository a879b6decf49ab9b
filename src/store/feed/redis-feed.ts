import type { FeedListener, Listening } from "../store.js";

// store/feed/redis-feed.ts owns the Redis store's change-feed listener: on one server a subscriber
// connection of its own (pub/sub takes a connection over), subscribed to the channel; on a
// cluster the store's own cluster client, subscribed to each of the channel's shard channels
// (SSUBSCRIBE: a notice goes only to the shard whose slot carries it, not over the whole cluster
// bus; the cluster client keeps a pub/sub connection per shard beside its command connections,
// so no second cluster client — and its slot discovery, a whole client's CPU — is needed).
// node-redis resubscribes after a reconnect; the listener's `reset` then says notices may have
// been missed in between.

/** What a subscriber needs from a node-redis client or cluster client. */
interface Subscriber {
  on(event: string, handler: (...args: unknown[]) => void): unknown;
  connect(): Promise<unknown>;
  close?(): Promise<unknown>;
  destroy(): unknown;
  isOpen: boolean;
  subscribe?(channel: string, listener: (message: string) => void): Promise<void>;
  sSubscribe?(channel: string, listener: (message: string) => void): Promise<void>;
  sUnsubscribe?(channel: string, listener: (message: string) => void): Promise<void>;
  off?(event: string, handler: (...args: unknown[]) => void): unknown;
}

/** Where the subscriber connects: a duplicate of the store's client (one server: ours or the user's), or the store's cluster client itself. */
export type SubscriberSource = { duplicate: () => unknown } | { cluster: unknown };

/** A cluster's shard channels of `channel` — one per index bucket, hash-tagged like the buckets' keys. */
export const shardChannels = (base: string, buckets: number): string[] => Array.from({ length: buckets }, (_, b) => `${base}:{${b}}`);

/**
 * Listen on `channels` (one on a server, the shard channels on a cluster). Resolves once
 * subscribed; `undefined` (after `warn`) when no subscriber can be opened from the source.
 */
export async function listenRedis(source: SubscriberSource, channels: string[], listener: FeedListener, warn: (message: string) => void): Promise<Listening | undefined> {
  if ("cluster" in source) return listenCluster(source.cluster as Subscriber, channels, listener, warn);
  const sub = source.duplicate() as unknown as Subscriber;
  // Unheard "error" events would crash the process; a lost subscriber shows as a reset when back.
  sub.on("error", () => {});
  let ready = false;
  const reset = () => {
    if (ready) listener.reset();
  };
  sub.on("ready", reset);
  const hear = (message: string) => listener.message(message);
  try {
    if (!sub.isOpen) await sub.connect();
    for (const channel of channels) await sub.subscribe!(channel, hear);
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

/**
 * The shard channels subscribed on the store's cluster client (not closed with the listener: the
 * store owns it). Its "node-ready" — any node connection (re)connected, pub/sub ones included —
 * is the reset: a sweep more than needed at worst.
 */
async function listenCluster(sub: Subscriber, channels: string[], listener: FeedListener, warn: (message: string) => void): Promise<Listening | undefined> {
  let ready = false;
  const reset = () => {
    if (ready) listener.reset();
  };
  const hear = (message: string) => listener.message(message);
  const unsubscribe = async () => {
    sub.off?.("node-ready", reset);
    for (const channel of channels) await sub.sUnsubscribe!(channel, hear).catch(() => {});
  };
  sub.on("node-ready", reset);
  try {
    for (const channel of channels) await sub.sSubscribe!(channel, hear);
  } catch (error) {
    await unsubscribe();
    warn(`mcp-yield: the Redis store could not subscribe to its change feed (${(error as Error).message}): tasks are found by polling only (sweepMs)`);
    return undefined;
  }
  ready = true;
  return {
    close: async () => {
      ready = false;
      await unsubscribe();
    },
  };
}
