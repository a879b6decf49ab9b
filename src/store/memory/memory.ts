import { integerOption } from "../../util/options.js";
import { smallest } from "../../util/smallest.js";
import { ByteTable } from "./byte-table.js";
import { SlotQueue } from "./slot-queue.js";
import { createFeedHub } from "../feed/memory-feed.js";
import { type IndexChange, type IndexPosition, isAfter, type Notice, type Store, StoreError } from "../store.js";
import { DROP_READS, DROPPED_BYTES, dropKeptResponse, isAscii, keptResponseHead, REDEEM_PREFIX } from "../kept-response.js";

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

/** At the bound, a full sweep for expired entries runs once per this fraction of the store's entries written, and no more often than SWEEP_MIN_WRITES. */
const SWEEP_EVERY = 8;
const SWEEP_MIN_WRITES = 16;

/**
 * The memory stores' `add`, synchronous: the runtime keeps a round's response with it directly
 * (runtime/redeem.ts `commitInProcess`) rather than through the promise of `Store.add` and the
 * async layers above it — with the memory store those hops were ≈ 5 % of a redeemed call's CPU
 * (paired fresh processes, 3 rounds: 0.954 of it, 4 sets). Only stores this module made are
 * here: a wrapped one (a Proxy) is not, and is written through its promises as any store is.
 */
const synchronousAdds = new WeakMap<object, (key: string, value: string, ttlMs: number) => boolean>();

/** `store`'s synchronous `add` when it is a memory store this module made (the same write, no promise), else `undefined`. */
export const synchronousAddOf = (store: Store): ((key: string, value: string, ttlMs: number) => boolean) | undefined => synchronousAdds.get(store);

/**
 * The in-memory store: one instance, nothing shared, nothing kept across a restart — what
 * `npm start` needs and what tests use. Expired entries are dropped when read, the oldest ones
 * on every write (so the store holds what is live, not what it once held), and all of them at
 * the bound — a scan of the store, so at most once per eighth of it written, and always before
 * a write is refused. (Between those scans a full store may shrink a kept response while an
 * entry written out of expiry order has expired unswept; it never refuses a write for want of
 * the room an expired entry holds.) Entries are kept outside the JavaScript heap (ByteTable).
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): Store & { readonly bytes: number; readonly shrunk: number; readonly arenaBytes: number } {
  const maxBytes = integerOption("maxBytes", options.maxBytes, 64 * 1024 * 1024);
  const clock = options.clock ?? Date.now;
  const reservedBytes = integerOption("reservedBytes", options.reservedBytes, Math.floor(maxBytes / 16), 0);
  if (reservedBytes >= maxBytes) throw new TypeError(`reservedBytes (${reservedBytes}) must be less than maxBytes (${maxBytes})`);
  const reserved = options.reserved ?? ((key: string) => key.startsWith(REDEEM_PREFIX));
  const shrink = options.shrink ?? dropKeptResponse;
  const table = new ByteTable();
  const feed = createFeedHub();
  const isCurrent = (slot: number, writeId: number) => table.writeId[slot] === writeId;
  /**
   * Entries whose values have not been offered to `shrink` since they were written, oldest
   * write first: a full store shrinks from here, so a value it could not shrink (or already
   * shrank) is not looked at again on every later shed — at the bound that scan was per write.
   */
  const unoffered = new SlotQueue((slot, writeId) => isCurrent(slot, writeId) && table.offered[slot] === 0);
  /**
   * Entries in write order, for expiry (an entry removed or rewritten since is no longer
   * current there). The oldest that have expired leave with every write: most values share a
   * lifetime (a state's), so write order is nearly expiry order, and the store stays at what is
   * live — not at its bound — without scanning it.
   */
  const written = new SlotQueue(isCurrent);
  const indexes = new Map<string, Map<string, number>>();
  let bytes = 0;
  let shrunk = 0;

  /** The slot of `key` if it holds an entry that has not expired (an expired one is taken out). */
  const live = (key: string): number => {
    const slot = table.find(key);
    if (slot < 0) return -1;
    if (table.expiresAt[slot]! > clock()) return slot;
    removeSlot(slot);
    return -1;
  };
  const removeSlot = (slot: number) => {
    bytes -= table.chars[slot]!;
    table.remove(slot);
  };
  const expireOldest = (now: number) => {
    for (let oldest = written.oldest(); oldest >= 0 && table.expiresAt[oldest]! <= now; oldest = written.oldest()) removeSlot(oldest);
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
    for (let slot = 0; slot < table.slotLimit; slot++) if (table.writeId[slot] !== 0 && table.expiresAt[slot]! <= now) removeSlot(slot);
  };
  const sweepDue = () => writesSinceSweep >= Math.max(SWEEP_MIN_WRITES, table.size / SWEEP_EVERY);
  /**
   * Shrink the oldest values not yet offered to `shrink` (write order: a rewritten entry counts
   * as new) until an eighth of the bound is free: done in batches, so a full store does not
   * shed on every write. Each value is offered once per write of it.
   */
  const shed = () => {
    const target = maxBytes - Math.floor(maxBytes / 8);
    for (let slot = unoffered.oldest(); slot >= 0 && bytes > target; slot = unoffered.oldest()) {
      table.offered[slot] = 1;
      if (shrink === dropKeptResponse && shrinkKeptResponse(slot)) continue;
      const key = table.key(slot);
      const valueChars = table.chars[slot]! - key.length;
      // The default reads no further than its head (see DROP_READS): a response is not decoded to be dropped.
      const smaller = shrink === dropKeptResponse ? dropKeptResponse(key, table.valuePrefix(slot, DROP_READS)) : shrink(key, table.value(slot));
      if (smaller === undefined || smaller.length >= valueChars) continue;
      bytes -= valueChars - smaller.length;
      // In place: the entry keeps its position and its expiry.
      table.rewrite(slot, smaller, key.length, true);
      shrunk++;
    }
  };
  /**
   * The default shrink, on the entry's bytes (see `keptResponseHead`): `true` once it is decided —
   * shrunk, or not a kept response — and `false` only for a key with a character beyond ASCII,
   * left to the text path (its UTF-16 length is not its byte count).
   */
  const shrinkKeptResponse = (slot: number): boolean => {
    const key = table.keyView(slot);
    if (!isAscii(key)) return false;
    const keep = keptResponseHead(key, table.valueView(slot, DROP_READS));
    if (keep < 0) return true;
    const valueChars = table.chars[slot]! - key.length;
    const smaller = keep + DROPPED_BYTES.length;
    if (smaller >= valueChars) return true;
    bytes -= valueChars - smaller;
    // In place: the entry keeps its position and its expiry.
    table.rewriteHead(slot, keep, DROPPED_BYTES, key.length + smaller);
    shrunk++;
    return true;
  };
  /** What a write of `size` under a key held in `before` (a slot, or -1) adds to the bytes held. */
  const growth = (size: number, before: number) => size - (before >= 0 && table.writeId[before] !== 0 ? table.chars[before]! : 0);
  /**
   * Make room for a write of `size` bytes (replacing `before`, if still held) within `limit`:
   * expired entries out first (when a sweep is due: see `sweep`), then shrink from where the
   * last shed stopped; refuse only after a sweep and a shed both found no room. The room needed
   * is asked again after each step, which may itself take `before` (a sweep: it had expired) or
   * shrink it (a shed).
   */
  const makeRoom = (size: number, before: number, limit: number) => {
    if (bytes + growth(size, before) > limit && sweepDue()) sweep();
    if (bytes + growth(size, before) > limit) shed();
    if (bytes + growth(size, before) > limit && writesSinceSweep > 0) sweep();
    if (bytes + growth(size, before) > limit)
      throw new StoreError(
        "store_full",
        `the in-memory store is full (${bytes} of ${limit} bytes${limit < maxBytes ? `; ${reservedBytes} more are kept for exactly-once bookkeeping` : ""}); the write of ${size} bytes was refused`,
      );
  };
  /**
   * Write `value` under `key`; `before` is the slot the caller found it in, or -1 (looked up
   * once: a write is on every round's path). A slot a sweep took meanwhile is written anew.
   */
  const write = (key: string, value: string, ttlMs: number, before: number) => {
    const ttl = integerOption("ttlMs", Math.ceil(ttlMs), 1);
    const now = clock();
    const writeBefore = before >= 0 ? table.writeId[before]! : 0;
    expireOldest(now);
    const size = key.length + value.length;
    const limit = reserved(key) ? maxBytes : maxBytes - reservedBytes;
    writesSinceSweep++;
    // Taken out meanwhile (expired, by expireOldest or a sweep): no longer what the caller found.
    const held = () => (before >= 0 && table.writeId[before] === writeBefore ? before : -1);
    if (bytes + growth(size, held()) > limit) makeRoom(size, held(), limit);
    let slot = held();
    if (slot >= 0) {
      bytes -= table.chars[slot]!;
      table.rewrite(slot, value, key.length, false);
    } else slot = table.insert(key, value);
    table.expiresAt[slot] = now + ttl;
    written.push(slot, table.writeId[slot]!, table.size);
    unoffered.push(slot, table.writeId[slot]!, table.size);
    bytes += size;
  };

  const add = (key: string, value: string, ttlMs: number): boolean => {
    if (live(key) >= 0) return false;
    // Nothing there now: `live` took an expired entry out.
    write(key, value, ttlMs, -1);
    return true;
  };

  const applyIndex = (changes: readonly IndexChange[]) => {
    for (const { index, member, at } of changes) {
      if (at === null) indexes.get(index)?.delete(member);
      else {
        let members = indexes.get(index);
        if (members === undefined) indexes.set(index, (members = new Map()));
        members.set(member, at);
      }
    }
  };
  /** A compare-and-swap, its index changes and its notice, all at once (nothing else runs in between). */
  const swapNow = (key: string, expected: string, value: string, ttlMs: number, notice: Notice | undefined, changes: readonly IndexChange[]): boolean => {
    const before = live(key);
    if (before < 0 || table.value(before) !== expected) return false;
    write(key, value, ttlMs, before);
    applyIndex(changes);
    if (notice !== undefined) feed.publish(notice);
    return true;
  };

  const store: Store & { readonly bytes: number; readonly shrunk: number; readonly arenaBytes: number } = {
    get bytes() {
      return bytes;
    },
    /** How many values were shrunk to make room so far. */
    get shrunk() {
      return shrunk;
    },
    /** Bytes the store's arena holds outside the heap (its entries, and room to append). */
    get arenaBytes() {
      return table.arenaBytes;
    },
    async get(key) {
      const slot = live(key);
      return slot < 0 ? undefined : table.value(slot);
    },
    async getMany(keys) {
      return keys.map((key) => {
        const slot = live(key);
        return slot < 0 ? undefined : table.value(slot);
      });
    },
    async add(key, value, ttlMs) {
      return add(key, value, ttlMs);
    },
    async swap(key, expected, value, ttlMs, notice) {
      return swapNow(key, expected, value, ttlMs, notice, []);
    },
    async swapIndexed(key, expected, value, ttlMs, notice, changes) {
      return swapNow(key, expected, value, ttlMs, notice, changes);
    },
    async addIndexed(key, value, ttlMs, changes, limit) {
      if (limit !== undefined && (indexes.get(limit.index)?.size ?? 0) >= limit.below) return false;
      if (!add(key, value, ttlMs)) return false;
      applyIndex(changes);
      return true;
    },
    async listen(channel, listener) {
      return feed.listen(channel, listener);
    },
    async set(key, value, ttlMs) {
      write(key, value, ttlMs, table.find(key));
    },
    async delete(key) {
      const slot = table.find(key);
      if (slot >= 0) removeSlot(slot);
    },
    async incr(key, delta, ttlMs) {
      if (!Number.isSafeInteger(delta)) throw new TypeError(`incr: delta must be a safe integer, got ${delta}`);
      const slot = live(key);
      const sum = (slot < 0 ? 0 : Number(table.value(slot))) + delta;
      write(key, String(sum), slot < 0 ? ttlMs : table.expiresAt[slot]! - clock(), slot);
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
    async index(changes) {
      applyIndex(changes);
    },
    async due(index, nowMs, limit) {
      const members = indexes.get(index);
      if (members === undefined) return [];
      const due: Array<[string, number]> = [];
      for (const entry of members) if (entry[1] <= nowMs) due.push(entry);
      return smallest(due, limit, (a, b) => a[1] - b[1]).map(([m]) => m);
    },
    async size(index) {
      return indexes.get(index)?.size ?? 0;
    },
    async members(index, limit, after) {
      const members = indexes.get(index);
      if (members === undefined) return [];
      const page: IndexPosition[] = [];
      for (const [member, at] of members) if (after === undefined || isAfter({ member, at }, after)) page.push({ member, at });
      // Ties in time by the member's bytes, as Redis and PostgreSQL order them.
      return smallest(page, limit, (a, b) => a.at - b.at || Buffer.compare(Buffer.from(a.member), Buffer.from(b.member)));
    },
    async close() {
      table.clear();
      unoffered.clear();
      written.clear();
      indexes.clear();
      bytes = 0;
    },
  };
  synchronousAdds.set(store, add);
  return store;
}
