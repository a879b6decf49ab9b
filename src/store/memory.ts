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
  /**
   * Bytes only exactly-once bookkeeping may use: other writes (task records, spilled journals)
   * are refused once this little is left, so a store filled by one client still records that a
   * round ran and what it answered — the write whose refusal would let a step run twice.
   * Default `maxBytes / 16`.
   */
  reservedBytes?: number;
  /** Which keys are that bookkeeping. Default: the runtime's single-use records (`redeem:…`). */
  reserved?: (key: string) => boolean;
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
  const reservedBytes = integerOption("reservedBytes", options.reservedBytes, Math.floor(maxBytes / 16), 0);
  if (reservedBytes >= maxBytes) throw new TypeError(`reservedBytes (${reservedBytes}) must be less than maxBytes (${maxBytes})`);
  const reserved = options.reserved ?? ((key: string) => key.startsWith("redeem:"));
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
    const limit = reserved(key) ? maxBytes : maxBytes - reservedBytes;
    if (bytes + growth > limit) sweep();
    if (bytes + growth > limit) throw new StoreError("store_full", `the in-memory store is full (${bytes} of ${limit} bytes${limit < maxBytes ? `; ${reservedBytes} more are kept for exactly-once bookkeeping` : ""}); the write of ${key.length + value.length} bytes was refused`);
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
    async incr(key, delta, ttlMs) {
      const entry = live(key);
      const sum = (entry === undefined ? 0 : Number(entry.value)) + delta;
      write(key, String(sum), entry === undefined ? ttlMs : entry.expiresAt - clock());
      return sum;
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
