// replay/live-calls.ts owns this instance's suspended generators between rounds: a pure
// speed-up, bounded in count and bytes, evicted oldest first (those least likely to be resumed
// before the others). Dropping one only means its next
// round replays from the state; a held generator is found only by its exact token.

import type { CallContext } from "./call-context.js";
import type { StatePayload } from "../journal/journal.js";
import type { Suspended } from "./round/round.js";
import { ArrivalQueue } from "../util/arrival-queue.js";
import { OpenHashTable, tailHash } from "../util/open-hash-table.js";

/** A call suspended on this instance: its generator and the per-call objects it closed over. */
export interface LiveCall {
  suspended: Suspended;
  /** The generator's `ctx`, with the call's own signal (never a request's). */
  context: CallContext;
  /** The definition whose generator this is: never resumed under another one. */
  owner: object;
  /** The journal exactly as it was sealed into the token. */
  payload: StatePayload;
  /** What the token carries, kept so that presenting this very token needs no decoding. */
  minted: { nonce: string; expiresAt: number; method: string; target: string; argumentsDigest: string; principal: string | undefined };
}

/**
 * A suspended call's cost besides its state, measured on calls counted as held (a later round
 * resumed them): the bench's counting tool held at its third ask retains 2.0–2.1 KiB of heap with
 * a 410-byte state (400, 2,000 and 5,000 held), of which the state twice is 0.8 KiB; plan_trip
 * through the SDK, bench/heap.ts (docs/replay.md "Live calls"). Charged with some margin: the
 * earlier 5 KiB, measured dividing by calls that were mostly no longer held, let the byte bound
 * hold 2,850 such calls where 16 MiB holds 7,000.
 */
export const LIVE_CALL_OVERHEAD_BYTES = 1536;

/** What one entry is charged against the byte budget: the overhead plus its state, twice (token and journal). */
export const liveCallBytes = (token: string): number => LIVE_CALL_OVERHEAD_BYTES + 2 * token.length;

/** Resumes remembered for the idle bound, and how many of the longest wait an entry may sit idle. */
const RESUME_SAMPLES = 64;
const IDLE_FACTOR = 4;
/**
 * The idle bound is never shorter than this, on the idle clock (see the constructor): one park
 * counted, or one millisecond of an injected clock.
 */
const MIN_IDLE = 1;
/**
 * The idle bound before any wait was seen, counted in parks (without an idle clock). Without
 * it, an instance that never sees a call twice — as many instances as a call has requests,
 * round-robin — had no bound but the count: each held up to 1,000 generators that would never
 * be resumed, and three-round calls on four or five instances cost 1.67–1.73× the same
 * instances with `liveCalls: 0` (one process, 20,000 calls each). A bound too short for the
 * calls' real waits is corrected by the first round that comes back for a generator it evicted
 * of a sampled call, one in eight (see `ghosts`). With an idle clock (the tasks engine's) its
 * units are unknown: no such bound.
 */
const INITIAL_IDLE_PARKS = 8;
/**
 * The idle bound's cap in parks, per call the count holds. A call whose rounds come back after
 * more parks than the count holds calls is one of more calls interleaved than can all be held:
 * those held keep their turn (see `keepHeld`), and the cap must let them wait that long — at
 * `maxCalls` itself, 20,000 ten-round calls in flight on the default 10,000 resumed none of
 * their rounds (every held generator went as idle just before its round came), where 10,000 in
 * flight resumed 68 %. A client that comes back late raises the bound only until 64 more resumes
 * set it again (`resumedAfter`); the cap bounds even that.
 */
const IDLE_CAP_PER_CALL = 16;
/**
 * Slots of the table of generators that went as idle, to notice a bound that is too short — of
 * a sample of calls (see `sampled`): direct-mapped by the call id's hash, a newer ghost taking an
 * older one's slot. Typed arrays, no strings: remembering every call in a Map (up to 1,024) cost
 * three instances without affinity at R = 10 more than it should (paired fresh processes, 8 sets
 * each: 1.017 against 0.966 remembering none; the keys and the Map's storage churned the heap).
 * Before this table, 128 ghosts were kept in a Map cleared whenever it filled: with more than
 * about 1,000 calls interleaved on an instance (one in eight sampled), every remembered ghost
 * was forgotten before its call came back, the bound never rose past its first 8 parks, and the
 * live path held 9 generators of 1,100 or of 100,000 calls in flight. With 4,096 slots a cycle
 * of 5,000 interleaved calls keeps ≈ 86 % of its ≈ 625 ghosts; one coming back is enough.
 */
const GHOST_SLOTS = 4096;

/**
 * Whether call `group`'s generators are among those remembered when they go as idle: one call
 * in eight, by the last character of its id (a random UUID's last hex digit is 0 or 8). By the
 * call, not by counting evictions: a count fell in step with a workload's own rhythm (two
 * generators going per round, the slow call's always the odd one) and never sampled it.
 */
const sampled = (group: string): boolean => group.charCodeAt(group.length - 1) % 8 === 0;

/**
 * Calls whose generator is still suspended on this instance, by the exact state token that
 * round minted. The next round presenting that token (after it verifies) resumes the generator
 * instead of replaying it. Bounded by count and by bytes, oldest first out, and an entry whose
 * state has expired is dropped: eviction only ever means the next round replays. `take`
 * removes, so a generator is never resumed twice — a repeated round, a parallel retry or a round
 * landing on another instance simply replays from the journal, which is always in the state.
 * Without affinity a call's rounds come back to an instance after others served the rounds
 * between: `takeEarlier` then resumes the generator held for the call's earlier round when the
 * presented journal extends it byte for byte (Temporal's sticky execution without a sticky queue).
 */
export class LiveCalls<T extends { owner: object } = LiveCall> {
  // By token, hashed by its last characters (of its MAC or GCM tag: see `tailHash`).
  private readonly calls = new OpenHashTable<Held<T>>();
  /**
   * How long the last resumed generators waited here before their round came, on the idle
   * clock (parks counted, or an injected clock's units): the newest RESUME_SAMPLES of them (the
   * bound is set from them after every RESUME_SAMPLES resumes). An entry idle for IDLE_FACTOR
   * times the longest of these is past the time its call's rounds have been coming back:
   * without affinity, its call most likely went on, or ended, on another instance — it goes
   * (at worst, its next round replays). With no resume seen yet, the bound is
   * INITIAL_IDLE_PARKS counted in parks, and none on an idle clock (there the count, bytes and
   * expiry bound it).
   */
  private readonly waits: number[] = [];
  private nextWait = 0;
  private idleLimit: number;
  /**
   * Calls (their ids' `tailHash`) whose generator was evicted as idle, with when it was parked (a sample:
   * see GHOST_SLOTS and `remember`). A round that comes back for one of them came after a wait the bound
   * did not allow — one set while rounds came back fast (a test client, a burst), or the initial
   * one — and no resume would ever set it again if every such generator went first: that wait
   * raises the bound at once (and counts as a resume's). A call that never comes back leaves
   * the bound as it is (an earlier design doubled it after every 64 idle evictions without a
   * resume, so an instance that never sees a call twice came to hold its full count again).
   * Made on the first idle eviction; `ghosts` counts the slots set.
   */
  private ghostKeys: Int32Array | undefined;
  private ghostSince: Float64Array | undefined;
  private ghosts = 0;
  /**
   * Eviction order, oldest first in each: "cold" entries — made by a round this instance had to
   * replay (no sign that the call's rounds come back here) — go before "warm" ones, made by a
   * round that resumed a generator held here. Without affinity most entries are cold and most
   * of those are never resumed (their call went on, or ended, elsewhere): at the bound they are
   * the ones dropped, so the generators still likely to be resumed stay.
   */
  private readonly cold = new ArrivalQueue<Held<T>>(isHeld);
  private readonly warm = new ArrivalQueue<Held<T>>(isHeld);
  /** The one entry kept per call (its id → the entry): a call's newer round replaces its older one. */
  private readonly groups = new OpenHashTable<Held<T>>();
  private used = 0;
  /** Entries parked so far: the idle clock when none is given. */
  private parks = 0;
  /**
   * The token the last `peek` looked up and the entry its key found (or none): the runtime
   * peeks at a presented token, then takes it, and `take` then needs no second hash and lookup
   * (without affinity both miss on most requests, each a fresh key hashed). Cleared by `put`;
   * an entry removed since is recognised by its cleared `call`.
   */
  private peekedToken: string | undefined;
  private peekedEntry: Held<T> | undefined;
  /**
   * At the bounds, whether those held stay and the newcomer goes (counted in parks: rounds of
   * interleaved calls, which come back in about the order they parked) or the oldest go (on an
   * idle clock: the tasks engine's parked tasks, whose sleeps and waits end in no such order).
   */
  private readonly keepHeld: boolean;

  /**
   * `now` is the clock of expiry (the tokens' own, epoch milliseconds). `idleNow`, if given,
   * times how long entries wait (any monotonic clock: the tasks engine passes its own);
   * without it, how long an entry waited is counted in entries parked here meanwhile.
   *
   * Why parks, not time, for the runtime: what a held generator costs is the scavenges it
   * survives, which come with this instance's own allocation — its rounds, most of which park
   * — not with time. On a wall clock (performance.now, with a 1 ms floor) a collector pause
   * that fell inside one wait made the bound 4 × that pause: three instances at R = 10 (the
   * bench's round-robin) had a bound of 1 ms at the median but 9.7 ms at the 90th percentile and
   * up to 18.8, and then held up to 19 finished calls' generators each; 87 KB survived each
   * scavenge, against 58 KB counted in parks (5 KB with `liveCalls: 0`). Paired fresh processes,
   * 18 sets: 0.968 of the wall-clock bound's CPU per call (0.860–1.043). Counted in parks, a
   * pause is no wait at all.
   *
   * `maxIdle` caps the idle bound, whatever waits were seen: the waits are the clients' to
   * choose (a client that comes back late raises the bound at once, see `cameBack`), the cap
   * the server's. Counted in parks it defaults to IDLE_CAP_PER_CALL × `maxCalls`. On an idle
   * clock there is no default cap (its units are the caller's).
   */
  constructor(
    private readonly maxCalls: number,
    private readonly maxBytes: number,
    private readonly now: () => number = Date.now,
    private readonly idleNow?: () => number,
    private readonly maxIdle: number = idleNow === undefined ? Math.max(INITIAL_IDLE_PARKS, IDLE_CAP_PER_CALL * maxCalls) : Number.POSITIVE_INFINITY,
  ) {
    this.idleLimit = idleNow === undefined ? Math.min(INITIAL_IDLE_PARKS, maxIdle) : maxIdle;
    this.keepHeld = idleNow === undefined;
  }

  /**
   * Hold `call` under `token`. With `group` (the call's id), an entry this call held for an
   * earlier round goes: the newer generator has seen everything the older one had, so the older
   * one would never be resumed again — it would only cost memory and GC until evicted.
   * `heldBytes`: what the generator holds besides its state (the call's arguments), charged too.
   */
  put(token: string, call: T, expiresAt: number, group?: string, warm = false, heldBytes = 0): void {
    // What the generator holds besides its state (its arguments, which a client chooses) counts too.
    const bytes = liveCallBytes(token) + heldBytes;
    if (this.maxCalls <= 0 || bytes > this.maxBytes) return;
    const key = tailHash(token);
    this.peekedToken = this.peekedEntry = undefined;
    const same = this.calls.get(key, token);
    if (same !== undefined) this.removeHeld(same);
    const groupKey = group === undefined ? 0 : tailHash(group);
    if (group !== undefined) {
      const older = this.groups.get(groupKey, group);
      if (older !== undefined) this.removeHeld(older);
    }
    this.parks++;
    const idleAt = this.idleAt();
    // The two orders one after the other, written out (this runs on every park: no array of them per call).
    const now = this.now();
    this.evictStale(this.cold, now, idleAt);
    this.evictStale(this.warm, now, idleAt);
    if (this.keepHeld) {
      // At the bounds a warm newcomer displaces cold entries, oldest first; otherwise the
      // newcomer is not held. Its round comes last of all those held (calls come back in about
      // the order they parked), so the held ones keep their turn: evicting the oldest instead —
      // the one whose round comes next — held none that was ever resumed once more calls were
      // interleaved than the bounds hold (5,000 four-round calls in turn: 0 of 15,000 later
      // rounds resumed). Held generators of calls that went elsewhere or were abandoned go by
      // the idle bound.
      if (!this.fits(bytes) && warm) this.evictColdFor(bytes);
      if (!this.fits(bytes)) return;
    }
    const held: Held<T> = { key, token, call, expiresAt, bytes, group, groupKey, heldSince: idleAt };
    this.calls.set(key, token, held);
    if (group !== undefined) this.groups.set(groupKey, group, held);
    (warm ? this.warm : this.cold).push(held, this.calls.size);
    this.used += bytes;
    if (!this.keepHeld) {
      this.evictOverBounds(this.cold);
      this.evictOverBounds(this.warm);
    }
  }

  /** Past the bounds (on an idle clock: see `keepHeld`), entries of one order out, oldest first. */
  private evictOverBounds(order: ArrivalQueue<Held<T>>): void {
    while (this.calls.size > this.maxCalls || this.used > this.maxBytes) {
      const held = order.oldest();
      if (held === undefined) return;
      this.removeHeld(held);
    }
  }

  /** Whether one more entry of `bytes` is within both bounds. */
  private fits(bytes: number): boolean {
    return this.calls.size < this.maxCalls && this.used + bytes <= this.maxBytes;
  }

  /** Cold entries out, oldest first, until an entry of `bytes` fits (or none is left). */
  private evictColdFor(bytes: number): void {
    for (let held = this.cold.oldest(); held !== undefined && !this.fits(bytes); held = this.cold.oldest()) this.removeHeld(held);
  }

  /** Expired and idle entries out of one order (insertion order is both expiry order, one TTL, and age order). */
  private evictStale(order: ArrivalQueue<Held<T>>, now: number, idleAt: number): void {
    for (let held = order.oldest(); held !== undefined; held = order.oldest()) {
      if (held.expiresAt <= now) this.removeHeld(held);
      else if (idleAt - held.heldSince > this.idleLimit) {
        if (held.group !== undefined && sampled(held.group)) this.remember(held.groupKey, held.heldSince);
        this.removeHeld(held);
      } else break;
    }
  }

  /** The entry minted as exactly `token`, left in place (a check that fails must not consume it). */
  peek(token: string): T | undefined {
    if (this.calls.size === 0) return undefined;
    const entry = this.calls.get(tailHash(token), token);
    this.peekedToken = token;
    this.peekedEntry = entry;
    return entry !== undefined && entry.expiresAt > this.now() ? entry.call : undefined;
  }

  take(token: string, owner: object): T | undefined {
    if (this.calls.size === 0) return undefined;
    let entry: Held<T> | undefined;
    if (token === this.peekedToken) {
      entry = this.peekedEntry;
      this.peekedToken = this.peekedEntry = undefined;
      // Removed since the peek (by an earlier-round take, or eviction): never removed twice.
      if (entry !== undefined && !isHeld(entry)) return undefined;
    } else entry = this.calls.get(tailHash(token), token);
    if (entry === undefined) return undefined;
    const { call, expiresAt, heldSince } = entry;
    this.removeHeld(entry);
    if (expiresAt <= this.now()) return undefined;
    if (call.owner !== owner) return undefined;
    this.resumedAfter(this.idleAt() - heldSince);
    return call;
  }

  /** Now on the idle clock: the given one, or the count of parks. */
  private idleAt(): number {
    return this.idleNow === undefined ? this.parks : this.idleNow();
  }

  /** A held generator was resumed after waiting `waited`: the idle bound follows the longest recent waits. */
  private resumedAfter(waited: number): void {
    this.waits[this.nextWait] = waited;
    this.nextWait = (this.nextWait + 1) % RESUME_SAMPLES;
    // Set once per RESUME_SAMPLES resumes (a resume is a hot path: no scan of the samples each time).
    if (this.nextWait === 0) this.idleLimit = Math.min(this.maxIdle, Math.max(MIN_IDLE, IDLE_FACTOR * Math.max(...this.waits)));
  }

  /**
   * The entry held for call `group` at an earlier round, taken if `extends` says the journal now
   * presented extends it byte for byte (and it is this definition's), whether or not its own
   * state has expired since: its generator goes on from there, replaying only the newer records.
   * A held entry the presented journal passes without extending it (`passed`: the call went on
   * another way — other answers to the same state, new code) can never be resumed, nor can an
   * expired one that does not extend it: either is dropped. One the presented journal does not
   * pass (a retry of an older round) stays.
   */
  takeEarlier(group: string, owner: object, extends_: (call: T) => boolean, passed: (call: T) => boolean = () => false): T | undefined {
    const entry = this.groups.size === 0 ? undefined : this.groups.get(tailHash(group), group);
    if (entry === undefined) {
      // Only a sampled call can have gone as idle and been remembered: no lookup for the rest.
      if (this.ghosts !== 0 && sampled(group)) this.cameBack(group);
      return undefined;
    }
    const { call, heldSince } = entry;
    // Its own state's expiry does not matter here (no clock read on this path): the journal
    // presented now, verified and unexpired, extends what the generator saw, so going on from
    // it is replaying that journal, only without running the shared prefix again.
    if (call.owner === owner && extends_(call)) {
      this.removeHeld(entry);
      this.resumedAfter(this.idleAt() - heldSince);
      return call;
    }
    if (entry.expiresAt <= this.now() || (call.owner === owner && passed(call))) this.removeHeld(entry);
    return undefined;
  }

  /**
   * Call `group`'s generator went as idle, parked at `heldSince`: remembered in its slot, over
   * whichever ghost had it (a missed sign only delays raising the bound to the next one).
   */
  private remember(groupKey: number, heldSince: number): void {
    if (this.ghostKeys === undefined || this.ghostSince === undefined) {
      this.ghostKeys = new Int32Array(GHOST_SLOTS);
      this.ghostSince = new Float64Array(GHOST_SLOTS).fill(Number.NaN);
    }
    const slot = groupKey & (GHOST_SLOTS - 1);
    if (Number.isNaN(this.ghostSince[slot]!)) this.ghosts++;
    this.ghostKeys[slot] = groupKey;
    this.ghostSince[slot] = heldSince;
  }

  /** A round of call `group` came, and none of its generators is held: if one went as idle, the bound was too short for its wait. */
  private cameBack(group: string): void {
    // By the id's hash (no string kept): two ids sharing one would only raise the bound early.
    const groupKey = tailHash(group);
    const slot = groupKey & (GHOST_SLOTS - 1);
    const heldSince = this.ghostSince![slot]!;
    if (Number.isNaN(heldSince) || this.ghostKeys![slot] !== groupKey) return;
    this.ghostSince![slot] = Number.NaN;
    this.ghosts--;
    const waited = this.idleAt() - heldSince;
    this.idleLimit = Math.min(this.maxIdle, Math.max(this.idleLimit, IDLE_FACTOR * waited));
    this.resumedAfter(waited);
  }

  /** `entry`, which is held (`calls` maps its key to it), out. */
  private removeHeld(entry: Held<T>): void {
    this.calls.delete(entry.key, entry.token);
    if (entry.group !== undefined && this.groups.get(entry.groupKey, entry.group) === entry) this.groups.delete(entry.groupKey, entry.group);
    this.used -= entry.bytes;
    // The eviction queues may still hold this entry until they pass it: let its generator go now.
    // (Only a held entry's call is ever read: every read goes through `calls`.)
    // Nor its token.
    (entry as { call: T | undefined }).call = undefined;
    entry.token = "";
  }

  /** Whether anything can be held at all (`liveCalls: 0` holds nothing: callers need not build an entry). */
  get holds(): boolean {
    return this.maxCalls > 0 && this.maxBytes > 0;
  }

  /** Entries the eviction queues hold, current or not (they stay within a small multiple of `size`). */
  get queued(): number {
    return this.cold.length + this.warm.length;
  }

  get size(): number {
    return this.calls.size;
  }

  /** Bytes charged against the budget now. */
  get bytes(): number {
    return this.used;
  }
}

/** One held generator: the queues of eviction order hold these, current while `calls` maps their key to them. */
interface Held<T> {
  /** `tailHash(token)`. */
  key: number;
  token: string;
  /** Set while the entry is held (`calls` maps its key to it); dropped when it is removed. */
  call: T;
  expiresAt: number;
  bytes: number;
  group: string | undefined;
  /** `tailHash(group)` (0 without one). */
  groupKey: number;
  /** When it was put, on the idle clock (`idleAt`). */
  heldSince: number;
}

/** An entry is held exactly while its `call` is set (`remove` clears it): no map lookup per look. */
const isHeld = (held: Held<unknown>): boolean => held.call !== undefined;
