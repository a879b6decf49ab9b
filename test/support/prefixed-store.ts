import type { Store } from "mcp-yield";

/**
 * A view of `store` under a key prefix (keys and index names alike), whose `close` leaves the
 * store open: many short runs on one connection pool, each in a namespace of its own (what a
 * Redis key prefix gives, without creating tables per run on PostgreSQL).
 */
export function prefixedStore(store: Store, prefix: string): Store {
  const view: Store = {
    get: (key) => store.get(prefix + key),
    add: (key, value, ttlMs) => store.add(prefix + key, value, ttlMs),
    swap: (key, expected, value, ttlMs, notice) => store.swap(prefix + key, expected, value, ttlMs, notice && { ...notice, channel: prefix + notice.channel }),
    set: (key, value, ttlMs) => store.set(prefix + key, value, ttlMs),
    delete: (key) => store.delete(prefix + key),
    incr: (key, delta, ttlMs) => store.incr(prefix + key, delta, ttlMs),
    schedule: (index, member, atMs) => store.schedule(prefix + index, member, atMs),
    unschedule: (index, member) => store.unschedule(prefix + index, member),
    index: (changes) => store.index(changes.map((c) => ({ ...c, index: prefix + c.index }))),
    due: (index, nowMs, limit) => store.due(prefix + index, nowMs, limit),
    size: (index) => store.size(prefix + index),
    members: (index, limit, after) => store.members(prefix + index, limit, after),
    close: async () => {},
  };
  if (store.getMany !== undefined) view.getMany = (keys) => store.getMany!(keys.map((key) => prefix + key));
  if (store.swapIndexed !== undefined)
    view.swapIndexed = (key, expected, value, ttlMs, notice, changes) =>
      store.swapIndexed!(
        prefix + key,
        expected,
        value,
        ttlMs,
        notice && { ...notice, channel: prefix + notice.channel },
        changes.map((c) => ({ ...c, index: prefix + c.index })),
      );
  if (store.addIndexed !== undefined)
    view.addIndexed = (key, value, ttlMs, changes, limit) =>
      store.addIndexed!(
        prefix + key,
        value,
        ttlMs,
        changes.map((c) => ({ ...c, index: prefix + c.index })),
        limit && { ...limit, index: prefix + limit.index },
      );
  if (store.time !== undefined) view.time = () => store.time!();
  if (store.listen !== undefined) view.listen = (channel, listener) => store.listen!(prefix + channel, listener);
  return view;
}

/**
 * Fresh, empty namespaces of one store, made on first use: `next()` is a view under a prefix no
 * other run has, `close()` closes the store. The fault and edge suites make hundreds of runs per
 * file; a store each (a connection, on a cluster one per node) cost more CPU than the runs did.
 */
export function namespaces(make: () => Promise<Store>): { next(): Promise<Store>; close(): Promise<void> } {
  let shared: Promise<Store> | undefined;
  let runs = 0;
  return {
    next: async () => prefixedStore(await (shared ??= make()), `r${runs++}:`),
    close: async () => {
      if (shared) await (await shared).close();
    },
  };
}
