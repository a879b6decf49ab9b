/**
 * The one place for what instances must share: task records, redeemed states (single use),
 * spilled journals and what each principal has stored. Deliberately small — strings under
 * keys, every write with a time to live, and the atomic operations the runtime's transitions
 * need (add if absent, compare-and-swap, increment) — so that an in-memory map, a Redis server
 * and a PostgreSQL database implement it the same way (test/store/store-contract.test.ts holds each to
 * it). Keys and values are well-formed text without NUL characters: what the runtime writes is
 * JSON and base64url.
 */
export interface Store {
  /** The value under `key`, or `undefined` (absent or expired). */
  get(key: string): Promise<string | undefined>;
  /**
   * The values under `keys`, in their order (`undefined`: absent or expired), in one round trip:
   * what a sweep that wakes many tasks at once reads (a Redis Cluster reads each on its slot's
   * node, all in flight). Optional: without it they are read one by one.
   */
  getMany?(keys: readonly string[]): Promise<Array<string | undefined>>;
  /** Write `value` only if `key` is absent; `true` when written. */
  add(key: string, value: string, ttlMs: number): Promise<boolean>;
  /**
   * Replace the value only if it is exactly `expected` now; `true` when replaced (compare-and-swap).
   * `notice`: announced to the store's listeners (`listen`) when — and only when — it replaced.
   */
  swap(key: string, expected: string, value: string, ttlMs: number, notice?: Notice): Promise<boolean>;
  /**
   * `swap`, and — when, and only when, it replaced — the index `changes` (as `index` takes
   * them), in one atomic operation (PostgreSQL: one statement, one commit; memory: at once). A
   * task's transition writes its record and moves it in its indexes together this way. Optional:
   * without it the runtime swaps, then sends the changes with `index`.
   */
  swapIndexed?(key: string, expected: string, value: string, ttlMs: number, notice: Notice | undefined, changes: readonly IndexChange[]): Promise<boolean>;
  /**
   * `add`, and — when, and only when, it wrote — the index `changes` (as `index` takes them), in
   * one atomic operation (PostgreSQL: one statement, one commit). With `limit`, it also writes
   * nothing (false) while `limit.index` has `limit.below` entries or more, as `size` counts them.
   * A task's start writes its record and enters its indexes together this way, within its
   * principal's share. Optional: without it the runtime counts the share, adds, then sends the
   * changes with `index`.
   */
  addIndexed?(key: string, value: string, ttlMs: number, changes: readonly IndexChange[], limit?: IndexLimit): Promise<boolean>;
  /** Write unconditionally. */
  set(key: string, value: string, ttlMs: number): Promise<void>;
  delete(key: string): Promise<void>;
  /**
   * Add `delta` to the integer under `key` (absent: 0) and return the sum; a key this creates
   * lives `ttlMs`, an existing one keeps its expiry. Atomic: concurrent additions all count.
   */
  incr(key: string, delta: number, ttlMs: number): Promise<number>;
  /** Put `member` in the due-time `index` at `atMs` (moving it if it was there). */
  schedule(index: string, member: string, atMs: number): Promise<void>;
  unschedule(index: string, member: string): Promise<void>;
  /**
   * Several `schedule` (`at` a time) and `unschedule` (`at: null`) as one operation: what a task
   * transition changes in its indexes, sent together (PostgreSQL: one statement). Not atomic on
   * every store: a failure may leave some changes made (each is idempotent; the caller repeats
   * or tolerates them). No member twice in one batch.
   */
  index(changes: readonly IndexChange[]): Promise<void>;
  /** Up to `limit` members of `index` whose time is `nowMs` or earlier, earliest first. */
  due(index: string, nowMs: number, limit: number): Promise<string[]>;
  /** How many members `index` holds (0 for an index never written): counted by the store, not read. */
  size(index: string): Promise<number>;
  /**
   * Members of `index` with their times, earliest first (ties by member, bytewise): a page of at
   * most `limit`, from the first member after `after` in that order (the last one of the page
   * before; absent: from the start). A cursor, not an offset — a page costs the same deep in an
   * index of millions, and a member added or removed meanwhile moves no other one between pages.
   * What listing tasks reads instead of scanning keys.
   */
  members(index: string, limit: number, after?: IndexPosition): Promise<IndexPosition[]>;
  /**
   * The store's own clock, in milliseconds since the epoch, for a store several machines share
   * (Redis: `TIME`). Leases and claims are then measured on it, so that machines whose clocks
   * disagree still agree on when one runs out. A store one instance owns leaves it out.
   */
  time?(): Promise<number>;
  /**
   * The store's change feed: hear every `Notice` on `channel` a `swap` announces, from any
   * instance, as it lands (memory: in process; Redis: pub/sub under the prefix, sharded on a
   * cluster; PostgreSQL: NOTIFY sent once the write committed, batched). Best effort: a notice can be lost
   * while the listener reconnects, so `reset` is called after every reconnect (read again what
   * matters). Resolves to `undefined` where the store cannot deliver notices — PostgreSQL through
   * a pooler in transaction mode, a client that cannot open a subscriber — after warning once:
   * the caller polls instead. Listeners of one channel on one store share its subscription.
   */
  listen?(channel: string, listener: FeedListener): Promise<Listening | undefined>;
  /** Release connections and timers. */
  close(): Promise<void>;
}

/** A change a write announces: `message` (short text; PostgreSQL takes up to 7,000 bytes) on `channel`. */
export interface Notice {
  channel: string;
  message: string;
}

/** Who hears a channel of the change feed (`Store.listen`). */
export interface FeedListener {
  /** A notice, in the order the store delivered it. */
  message(message: string): void;
  /** The listener reconnected: notices may have been missed meanwhile. */
  reset(): void;
}

/** A listener on the change feed; `close` stops it. */
export interface Listening {
  close(): Promise<void>;
}

/** One change of `Store.index`: `member` into `index` at `at`, or out of it (`null`). */
export interface IndexChange {
  index: string;
  member: string;
  at: number | null;
}

/** An add's bound on an index's size (`Store.addIndexed`): it writes only while `index` has fewer than `below` entries. */
export interface IndexLimit {
  index: string;
  below: number;
}

/** A member of an index with its time: an entry of `members`, and where the next page starts. */
export interface IndexPosition {
  member: string;
  at: number;
}

/** Whether `entry` comes after `position` in an index's order: by time, then by member bytewise. */
export function isAfter(entry: IndexPosition, position: IndexPosition): boolean {
  return entry.at > position.at || (entry.at === position.at && Buffer.compare(Buffer.from(entry.member), Buffer.from(position.member)) > 0);
}

/** Why a store operation failed. Stable strings: they appear as `data.reason` on the wire. */
export type StoreErrorReason = "store_unavailable" | "store_full" | "store_misconfigured";

/**
 * The store could not do what was asked: unreachable or too slow (`store_unavailable`: try
 * again), the in-memory store is at its byte bound (`store_full`), or the store is set up so
 * that no repeat will help (`store_misconfigured`: a cluster node reached as one server, a
 * replica, missing permissions or database — the message names the setting). Nothing was
 * written. `cause` is the client's own error (its message with passwords taken out).
 */
export class StoreError extends Error {
  override readonly name = "StoreError";
  constructor(
    readonly reason: StoreErrorReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
