import { integerOption } from "../util/options.js";
import { type Store, StoreError } from "./store.js";

/** Options of `createMemoryStore`. */
export interface MemoryStoreOptions {
  /**
   * Most bytes (keys plus values, counted as string lengths) the store holds. Default 64 MiB.
   * A write that would pass it is refused with `StoreError("store_full")` — never an eviction,
   * which would silently undo a guarantee (a task lost, a state redeemable again).
   */
  maxBytes?: number;
  /** Milliseconds since the epoch; injectable for tests. */
  clock?: () => number;
}

interface Entry {
  value: string;
  expiresAt: number;
}

/**
 * The in-memory store: one instance, nothing shared, nothing kept across a restart — what
 * `npm start` needs and what tests use. Expired entries are dropped when read and swept when
 * the store nears its bound.
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): Store & { readonly bytes: number } {
  const maxBytes = integerOption("maxBytes", options.maxBytes, 64 * 1024 * 1024);
  const clock = options.clock ?? Date.now;
  const entries = new Map<string, Entry>();
  const indexes = new Map<string, Map<string, number>>();
  let bytes = 0;

  const live = (key: string): Entry | undefined => {
    const entry = entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt > clock()) return entry;
    remove(key);
    return undefined;
  };
  const remove = (key: string) => {
    const entry = entries.get(key);
    if (entry === undefined) return;
    entries.delete(key);
    bytes -= key.length + entry.value.length;
  };
  const sweep = () => {
    const now = clock();
    for (const [key, entry] of entries) if (entry.expiresAt <= now) remove(key);
  };
  const write = (key: string, value: string, ttlMs: number) => {
    const ttl = integerOption("ttlMs", Math.ceil(ttlMs), 1);
    const before = entries.get(key);
    const growth = key.length + value.length - (before ? key.length + before.value.length : 0);
    if (bytes + growth > maxBytes) sweep();
    if (bytes + growth > maxBytes) throw new StoreError("store_full", `the in-memory store is full (${bytes} of ${maxBytes} bytes); the write of ${key.length + value.length} bytes was refused`);
    remove(key);
    entries.set(key, { value, expiresAt: clock() + ttl });
    bytes += key.length + value.length;
  };

  return {
    get bytes() {
      return bytes;
    },
    async get(key) {
      return live(key)?.value;
    },
    async add(key, value, ttlMs) {
      if (live(key) !== undefined) return false;
      write(key, value, ttlMs);
      return true;
    },
    async swap(key, expected, value, ttlMs) {
      if (live(key)?.value !== expected) return false;
      write(key, value, ttlMs);
      return true;
    },
    async set(key, value, ttlMs) {
      write(key, value, ttlMs);
    },
    async delete(key) {
      remove(key);
    },
    async schedule(index, member, atMs) {
      let members = indexes.get(index);
      if (members === undefined) indexes.set(index, (members = new Map()));
      members.set(member, atMs);
    },
    async unschedule(index, member) {
      indexes.get(index)?.delete(member);
    },
    async due(index, nowMs, limit) {
      const members = indexes.get(index);
      if (members === undefined) return [];
      return [...members].filter(([, at]) => at <= nowMs).sort((a, b) => a[1] - b[1]).slice(0, limit).map(([m]) => m);
    },
    async close() {
      entries.clear();
      indexes.clear();
      bytes = 0;
    },
  };
}
