import { ArrivalQueue } from "../util/arrival-queue.js";
import { integerOption } from "../util/options.js";
import { ownString } from "../util/own-string.js";
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
  /**
   * What a value may shrink to when the store is full — smaller, and keeping every guarantee —
   * or `undefined` if it cannot. Full, the store shrinks the oldest values it can until an
   * eighth of its bound is free again, before it refuses anything. Default: a round's kept
   * response (`redeem:…` answered) keeps that the round ran and for which answers, and drops
   * the response itself — a repeat of that request is then told the response is no longer
   * kept (`response_not_kept`) instead of the round running again.
   */
  shrink?: (key: string, value: string) => string | undefined;
}

/**
 * The default `shrink`: the runtime's record of an answered round (runtime/redeem.ts, status
 * `done` with the response in `r`) without its response. Anything else stays as it is.
 */
export function dropKeptResponse(key: string, value: string): string | undefined {
  // Read as text, not parsed: a full store shrinks every answered round once, and parsing each
  // response (to keep 43 characters of it) measured as a large part of a full store's writes.
  // The runtime writes {d, s, r} in that order, d a base64url digest (nothing escaped in it).
  if (!key.startsWith("redeem:") || !value.startsWith(DONE_HEAD)) return undefined;
  const end = value.indexOf('"', DONE_HEAD.length);
  if (end === -1 || !value.startsWith(DONE_TAIL, end)) return undefined;
  const d = value.slice(DONE_HEAD.length, end);
  if (!DIGEST.test(d)) return undefined;
  // Built from a slice of the response: as it is, each shrunk record (77 characters) kept its
  // whole response alive (~900 bytes of heap; a full store ~8× its bound).
  return ownString(`{"d":"${d}","s":"done","dropped":true}`);
}

const DONE_HEAD = '{"d":"';
const DONE_TAIL = '","s":"done","r":';
const DIGEST = /^[A-Za-z0-9_-]{1,128}$/;

/** At the bound, a full sweep for expired entries runs once per this fraction of the store's entries written, and no more often than SWEEP_MIN_WRITES. */
const SWEEP_EVERY = 8;
const SWEEP_MIN_WRITES = 16;

interface Entry {
  key: string;
  value: string;
  expiresAt: number;
  /** Offered to `shrink` since this value was written (each value is offered once). */
  offered: boolean;
  /** In the store still (not removed, expired or rewritten): the queues below check this, not the map. */
  current: boolean;
}

/**
 * The in-memory store: one instance, nothing shared, nothing kept across a restart — what
 * `npm start` needs and what tests use. Expired entries are dropped when read, the oldest ones
 * on every write (so the store holds what is live, not what it once held), and all of them at
 * the bound — a scan of the store, so at most once per eighth of it written, and always before
 * a write is refused. (Between those scans a full store may shrink a kept response while an
 * entry written out of expiry order has expired unswept; it never refuses a write for want of
 * the room an expired entry holds.)
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): Store & { readonly bytes: number; readonly shrunk: number } {
  const maxBytes = integerOption("maxBytes", options.maxBytes, 64 * 1024 * 1024);
  const clock = options.clock ?? Date.now;
  const reservedBytes = integerOption("reservedBytes", options.reservedBytes, Math.floor(maxBytes / 16), 0);
  if (reservedBytes >= maxBytes) throw new TypeError(`reservedBytes (${reservedBytes}) must be less than maxBytes (${maxBytes})`);
  const reserved = options.reserved ?? ((key: string) => key.startsWith("redeem:"));
  const shrink = options.shrink ?? dropKeptResponse;
  const entries = new Map<string, Entry>();
  /**
   * Entries whose values have not been offered to `shrink` since they were written, oldest
   * write first: a full store shrinks from here, so a value it could not shrink (or already
   * shrank) is not looked at again on every later shed — at the bound that scan was per write.
   */
  const unoffered = new ArrivalQueue<Entry>((entry) => !entry.offered && entry.current);
  const indexes = new Map<string, Map<string, number>>();
  let bytes = 0;
  let shrunk = 0;

  const live = (key: string): Entry | undefined => {
    const entry = entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt > clock()) return entry;
    removeEntry(entry);
    return undefined;
  };
  const remove = (key: string) => {
    const entry = entries.get(key);
    if (entry !== undefined) removeEntry(entry);
  };
  /**
   * `entry`, the current one under its key, out — without looking its key up again: the
   * entries that expire are old, their keys and the map's slots for them long out of the
   * cache, and a lookup to find what the caller holds already was a second miss per write.
   */
  const removeEntry = (entry: Entry) => {
    entries.delete(entry.key);
    bytes -= entry.key.length + entry.value.length;
    // A queue may hold the entry until it passes it: the value goes now.
    entry.current = false;
    entry.value = "";
  };
  /**
   * Entries in write order, for expiry (an entry removed or rewritten since is no longer
   * current there). The oldest that have expired leave with every write: most values share a
   * lifetime (a state's), so write order is nearly expiry order, and the store stays at what is
   * live — not at its bound — without scanning it.
   */
  const written = new ArrivalQueue<Entry>((entry) => entry.current);
  const expireOldest = (now: number) => {
    // A queue's oldest item is current (see ArrivalQueue): the entry its key maps to.
    for (let oldest = written.oldest(); oldest !== undefined && oldest.expiresAt <= now; oldest = written.oldest()) removeEntry(oldest);
  };
  /**
   * Every expired entry out, wherever it sits in write order (lifetimes differ: a redemption
   * record lives as long as its state, a spilled journal or task record longer). A scan of the
   * whole store, so at the bound it runs once per SWEEP_EVERY-th of the store's entries written
   * — not on every write: a store full of live rounds spent 4 % of its CPU sweeping for
   * entries `expireOldest` had already taken — and always before a write is refused.
   */
  let writesSinceSweep = 0;
  const sweep = () => {
    writesSinceSweep = 0;
    const now = clock();
    for (const entry of entries.values()) if (entry.expiresAt <= now) removeEntry(entry);
  };
  const sweepDue = () => writesSinceSweep >= Math.max(SWEEP_MIN_WRITES, entries.size / SWEEP_EVERY);
  /**
   * Shrink the oldest values not yet offered to `shrink` (write order: a rewritten entry counts
   * as new) until an eighth of the bound is free: done in batches, so a full store does not
   * shed on every write. Each value is offered once per write of it.
   */
  const shed = () => {
    const target = maxBytes - Math.floor(maxBytes / 8);
    for (let entry = unoffered.oldest(); entry !== undefined && bytes > target; entry = unoffered.oldest()) {
      entry.offered = true;
      const smaller = shrink(entry.key, entry.value);
      if (smaller === undefined || smaller.length >= entry.value.length) continue;
      bytes -= entry.value.length - smaller.length;
      // In place: the entry keeps its position and its expiry.
      entry.value = smaller;
      shrunk++;
    }
  };
  /**
   * Make room for a write of `size` bytes under `key` (replacing `before`, if current) within
   * `limit`: expired entries out first (when a sweep is due: see `sweep`), then shrink from where
   * the last shed stopped; refuse only after a sweep and a shed both found no room. The room
   * needed is asked again after each step, which may itself take `before` (a sweep: it had
   * expired) or shrink it (a shed).
   */
  const makeRoom = (key: string, size: number, before: Entry | undefined, limit: number) => {
    const growth = () => size - (before?.current ? key.length + before.value.length : 0);
    if (bytes + growth() > limit && sweepDue()) sweep();
    if (bytes + growth() > limit) shed();
    if (bytes + growth() > limit && writesSinceSweep > 0) sweep();
    if (bytes + growth() > limit) throw new StoreError("store_full", `the in-memory store is full (${bytes} of ${limit} bytes${limit < maxBytes ? `; ${reservedBytes} more are kept for exactly-once bookkeeping` : ""}); the write of ${size} bytes was refused`);
  };
  /**
   * Write `value` under `key`; `before` is what the caller found there (`entries.get(key)`, looked
   * up once: a write is on every round's path, and each lookup of a fresh key string in a full
   * store's map measured as a visible part of it).
   */
  const write = (key: string, value: string, ttlMs: number, before: Entry | undefined) => {
    const ttl = integerOption("ttlMs", Math.ceil(ttlMs), 1);
    const now = clock();
    expireOldest(now);
    const size = key.length + value.length;
    const limit = reserved(key) ? maxBytes : maxBytes - reservedBytes;
    writesSinceSweep++;
    if (bytes + size - (before?.current ? key.length + before.value.length : 0) > limit) makeRoom(key, size, before, limit);
    if (before?.current) {
      bytes -= key.length + before.value.length;
      before.current = false;
      before.value = "";
    }
    // The value kept as a string of its own (ownString): what a caller writes is often a
    // concatenation (the runtime's record of an answered round is a template of its digest, asks
    // and token) or a slice of a larger text, and kept as it is, it keeps its parts — or that
    // text — alive, and the first read of it (`shrink`, a repeat's `get`) copies it flat then,
    // long after it left the cache. Copied once here, while it is fresh: a full store's 3-ask
    // call measured 1.70 → 1.57× no store (CPU, paired), its `dropKeptResponse` 5.6 µs per
    // call → out of the profile.
    const entry: Entry = { key, value: ownString(value), expiresAt: now + ttl, offered: false, current: true };
    entries.set(key, entry);
    written.push(entry, entries.size);
    unoffered.push(entry, entries.size);
    bytes += size;
  };

  return {
    get bytes() {
      return bytes;
    },
    /** How many values were shrunk to make room so far. */
    get shrunk() {
      return shrunk;
    },
    async get(key) {
      return live(key)?.value;
    },
    async add(key, value, ttlMs) {
      if (live(key) !== undefined) return false;
      // Nothing there now: `live` took an expired entry out.
      write(key, value, ttlMs, undefined);
      return true;
    },
    async swap(key, expected, value, ttlMs) {
      const before = live(key);
      if (before?.value !== expected) return false;
      write(key, value, ttlMs, before);
      return true;
    },
    async set(key, value, ttlMs) {
      write(key, value, ttlMs, entries.get(key));
    },
    async delete(key) {
      remove(key);
    },
    async incr(key, delta, ttlMs) {
      if (!Number.isSafeInteger(delta)) throw new TypeError(`incr: delta must be a safe integer, got ${delta}`);
      const entry = live(key);
      const sum = (entry === undefined ? 0 : Number(entry.value)) + delta;
      write(key, String(sum), entry === undefined ? ttlMs : entry.expiresAt - clock(), entry);
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
    async members(index, offset, limit) {
      const members = indexes.get(index);
      if (members === undefined) return [];
      return [...members]
        .sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
        .slice(offset, offset + limit)
        .map(([member, at]) => ({ member, at }));
    },
    async close() {
      entries.clear();
      unoffered.clear();
      written.clear();
      indexes.clear();
      bytes = 0;
    },
  };
}
