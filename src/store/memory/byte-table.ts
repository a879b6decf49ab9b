/**
 * store/byte-table.ts: the memory store's entries held outside the JavaScript heap — keys and
 * values as UTF-8 in one byte arena, everything else about an entry in typed arrays indexed by
 * its slot, and a chained hash index of slots. No object, string or map slot per entry.
 *
 * Why: a store's entries live a state's lifetime (minutes), so in V8 each one survives the young
 * generation, is copied twice, promoted, and reclaimed only by marking the old one. Measured with
 * an entry object and two strings per entry, a full store's 10,000 live entries cost 0.15–0.25 of
 * a 3-ask call's CPU whatever they held (even one-character values); the collector never looks
 * inside an ArrayBuffer.
 *
 * Keys and values are well-formed text (the Store's contract), so UTF-8 gives back exactly what
 * was written. An entry is a record in the arena — its slot and the record's length (two 32-bit
 * words), its key, its value, padded to four bytes; writes append records at the arena's end.
 * When a record does not fit, the arena is compacted in place: the records still current (their
 * slot points at them) moved down over the rest, in order, and only if that leaves too little
 * room is a larger arena made. In place, not into a fresh arena each time: allocating megabytes
 * of ArrayBuffer per compaction measured dearer than keeping the entries on the heap (a full
 * store's 3-ask call 1.70× no store, against 1.58 on the heap and 1.48 compacted in place).
 */

import { StoreError } from "../store.js";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

const MIN_ARENA = 64 * 1024;
/** The most an arena may hold: its offsets and lengths are 32-bit words. */
const MAX_ARENA = 0xffff_f000;
/** A record's header: its slot and its length in bytes, two 32-bit words. */
const HEADER = 8;
/** A record's length: its header and `bytes` of key and value, padded to four bytes. */
const recordBytes = (bytes: number) => (HEADER + bytes + 3) & ~3;
const MIN_SLOTS = 64;

/** FNV-1a over `length` bytes of `bytes` from `at`. */
function hashBytes(bytes: Uint8Array, at: number, length: number): number {
  let h = 0x811c9dc5;
  for (let i = at; i < at + length; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return h | 0;
}

export class ByteTable {
  private arena = new Uint8Array(MIN_ARENA);
  /** The arena as 32-bit words, for the records' headers. */
  private words = new Uint32Array(this.arena.buffer);
  private arenaEnd = 0;
  /** Bytes of the arena that belong to an entry (the rest is what removed or rewritten entries left). */
  private liveBytes = 0;
  /** The key being looked up, as UTF-8 (grown as needed). */
  private scratch = new Uint8Array(256);
  private scratchLength = 0;
  private scratchHash = 0;
  /** The key the scratch buffer holds. */
  private scratchKey: string | undefined;

  // Per slot. `writeId` 0 means the slot is free; otherwise it names the write that filled it
  // (a rewrite gives it a new one), so a queue holding (slot, writeId) knows when it is stale.
  private capacity = MIN_SLOTS;
  /** Where the slot's key starts in the arena (after its record's header); its value follows it. */
  at = new Uint32Array(MIN_SLOTS);
  keyBytes = new Uint32Array(MIN_SLOTS);
  valueBytes = new Uint32Array(MIN_SLOTS);
  /** UTF-16 length of key plus value: what the store's byte bound counts. */
  chars = new Float64Array(MIN_SLOTS);
  expiresAt = new Float64Array(MIN_SLOTS);
  writeId = new Float64Array(MIN_SLOTS);
  /** 1 once the slot's value (this write of it) was offered to `shrink`. */
  offered = new Uint8Array(MIN_SLOTS);
  private hash = new Int32Array(MIN_SLOTS);
  /** Next slot in the same bucket, + 1 (0 ends the chain). */
  private next = new Int32Array(MIN_SLOTS);
  /** First slot of each bucket, + 1 (0: empty). A power of two long. */
  private buckets = new Int32Array(MIN_SLOTS * 2);
  private free: number[] = [];
  private high = 0;
  private lastWriteId = 0;
  /** Slots in use. */
  size = 0;

  /** The slot holding `key`, or -1. */
  find(key: string): number {
    this.encodeKey(key);
    const length = this.scratchLength;
    for (let s = this.buckets[this.scratchHash & (this.buckets.length - 1)]! - 1; s >= 0; s = this.next[s]! - 1) {
      if (this.hash[s] !== this.scratchHash || this.keyBytes[s] !== length) continue;
      const at = this.at[s]!;
      let i = 0;
      while (i < length && this.arena[at + i] === this.scratch[i]) i++;
      if (i === length) return s;
    }
    return -1;
  }

  /** A new slot for `key` (absent: `find` said -1) with `value`. Its expiry is set by the caller. */
  insert(key: string, value: string): number {
    // Usually just looked up: its bytes and hash are in the scratch buffer still.
    if (this.scratchKey !== key) this.encodeKey(key);
    const keyLength = this.scratchLength;
    const hash = this.scratchHash;
    const record = this.reserve(HEADER + keyLength + 3 * value.length);
    const at = record + HEADER;
    for (let i = 0; i < keyLength; i++) this.arena[at + i] = this.scratch[i]!;
    const valueLength = value.length === 0 ? 0 : encoder.encodeInto(value, this.arena.subarray(at + keyLength)).written;
    const slot = this.allocate();
    this.at[slot] = at;
    this.keyBytes[slot] = keyLength;
    this.valueBytes[slot] = valueLength;
    this.chars[slot] = key.length + value.length;
    this.writeId[slot] = ++this.lastWriteId;
    this.offered[slot] = 0;
    this.hash[slot] = hash;
    this.close(record, slot, keyLength + valueLength);
    this.link(slot);
    this.size++;
    return slot;
  }

  /**
   * `slot`'s value replaced by `value` (its key kept). A new write (new writeId, not yet offered)
   * unless `sameWrite`, which keeps both — a value shrunk in place keeps its place in the queues.
   */
  rewrite(slot: number, value: string, keyChars: number, sameWrite: boolean): void {
    const keyLength = this.keyBytes[slot]!;
    // Reserved first: a compaction moves the slot's key (its record is current still, so kept),
    // and a refusal leaves the slot as it was.
    const record = this.reserve(HEADER + keyLength + 3 * value.length);
    this.liveBytes -= recordBytes(keyLength + this.valueBytes[slot]!);
    const at = record + HEADER;
    this.arena.copyWithin(at, this.at[slot]!, this.at[slot]! + keyLength);
    const valueLength = value.length === 0 ? 0 : encoder.encodeInto(value, this.arena.subarray(at + keyLength)).written;
    this.at[slot] = at;
    this.valueBytes[slot] = valueLength;
    this.chars[slot] = keyChars + value.length;
    if (!sameWrite) {
      this.writeId[slot] = ++this.lastWriteId;
      this.offered[slot] = 0;
    }
    this.close(record, slot, keyLength + valueLength);
  }

  /**
   * `slot`'s value replaced by its own first `keep` bytes and then `tail` — no text decoded or
   * encoded (the memory store's default shrink: `dropKeptResponse` read from the bytes). The
   * caller says what the new value's UTF-16 length is (`chars`, key included). Same write: the
   * entry keeps its place in the queues, as `rewrite(..., true)`.
   */
  rewriteHead(slot: number, keep: number, tail: Uint8Array, chars: number): void {
    const keyLength = this.keyBytes[slot]!;
    const record = this.reserve(HEADER + keyLength + keep + tail.length);
    this.liveBytes -= recordBytes(keyLength + this.valueBytes[slot]!);
    // Read after reserve: a compaction may have moved the slot's record.
    const from = this.at[slot]!;
    const at = record + HEADER;
    this.arena.copyWithin(at, from, from + keyLength + keep);
    this.arena.set(tail, at + keyLength + keep);
    this.at[slot] = at;
    this.valueBytes[slot] = keep + tail.length;
    this.chars[slot] = chars;
    this.close(record, slot, keyLength + keep + tail.length);
  }

  /** The arena's bytes of `slot`'s key (a view: valid until the next write). */
  keyView(slot: number): Uint8Array {
    const at = this.at[slot]!;
    return this.arena.subarray(at, at + this.keyBytes[slot]!);
  }

  /** The arena's first `bytes` bytes (or all) of `slot`'s value (a view: valid until the next write). */
  valueView(slot: number, bytes: number): Uint8Array {
    const at = this.at[slot]! + this.keyBytes[slot]!;
    return this.arena.subarray(at, at + Math.min(bytes, this.valueBytes[slot]!));
  }

  remove(slot: number): void {
    const bucket = this.hash[slot]! & (this.buckets.length - 1);
    if (this.buckets[bucket] === slot + 1) this.buckets[bucket] = this.next[slot]!;
    else {
      let s = this.buckets[bucket]! - 1;
      while (this.next[s] !== slot + 1) s = this.next[s]! - 1;
      this.next[s] = this.next[slot]!;
    }
    this.liveBytes -= recordBytes(this.keyBytes[slot]! + this.valueBytes[slot]!);
    this.writeId[slot] = 0;
    this.free.push(slot);
    this.size--;
  }

  key(slot: number): string {
    const at = this.at[slot]!;
    return decoder.decode(this.arena.subarray(at, at + this.keyBytes[slot]!));
  }

  value(slot: number): string {
    const at = this.at[slot]! + this.keyBytes[slot]!;
    return decoder.decode(this.arena.subarray(at, at + this.valueBytes[slot]!));
  }

  /** The value's first `bytes` bytes (or all of it), decoded: a character cut there decodes as U+FFFD. */
  valuePrefix(slot: number, bytes: number): string {
    const at = this.at[slot]! + this.keyBytes[slot]!;
    return decoder.decode(this.arena.subarray(at, at + Math.min(bytes, this.valueBytes[slot]!)));
  }

  /** One past the highest slot ever used: slots below it with a writeId are in use. */
  get slotLimit(): number {
    return this.high;
  }

  /** The arena's size in bytes (what the store holds outside the heap). */
  get arenaBytes(): number {
    return this.arena.length;
  }

  clear(): void {
    this.arena = new Uint8Array(MIN_ARENA);
    this.words = new Uint32Array(this.arena.buffer);
    this.arenaEnd = 0;
    this.liveBytes = 0;
    this.writeId.fill(0);
    this.buckets.fill(0);
    this.free = [];
    this.high = 0;
    this.size = 0;
    this.scratchKey = undefined;
  }

  /** `key` as UTF-8 into the scratch buffer, with its hash. */
  private encodeKey(key: string): void {
    if (this.scratch.length < 3 * key.length) this.scratch = new Uint8Array(3 * key.length);
    let i = 0;
    // ASCII byte by byte (a key is short, and a call to the encoder costs more than the loop).
    for (; i < key.length; i++) {
      const c = key.charCodeAt(i);
      if (c >= 0x80) break;
      this.scratch[i] = c;
    }
    this.scratchLength = i === key.length ? i : encoder.encodeInto(key, this.scratch).written;
    this.scratchHash = hashBytes(this.scratch, 0, this.scratchLength);
    this.scratchKey = key;
  }

  /** The record at `record` written: its header, and the arena's end after it. */
  private close(record: number, slot: number, bytes: number): void {
    const length = recordBytes(bytes);
    this.words[record >> 2] = slot;
    this.words[(record >> 2) + 1] = length;
    this.arenaEnd = record + length;
    this.liveBytes += length;
  }

  /**
   * Where a record of up to `bytes` can be appended (four-byte aligned); compacts the arena in
   * place first when it does not fit, and makes a larger one only if that leaves too little room
   * (or a much smaller one, once most of it stays unused). A slot being rewritten is not counted
   * live at the moment, but its record is current, so it moves with the rest.
   */
  private reserve(bytes: number): number {
    // Compacted when full, or once it holds less than an eighth of its size (a burst's arena
    // is given back when its entries have gone, not only when the next one fills it).
    if (this.arenaEnd + bytes <= this.arena.length && (this.arena.length === MIN_ARENA || this.liveBytes + bytes >= this.arena.length / 8)) return this.arenaEnd;
    // Runs of adjacent current records move with one copy each: records are written in order and
    // go mostly in order, so the holes between them are few next to the records (a full store's
    // 10,000 moved one by one cost more than a write).
    let end = 0;
    let runStart = 0;
    let runEnd = 0;
    for (let record = 0; record < this.arenaEnd; ) {
      const slot = this.words[record >> 2]!;
      const length = this.words[(record >> 2) + 1]!;
      if (this.writeId[slot] !== 0 && this.at[slot] === record + HEADER) {
        if (record !== runEnd) {
          end = this.move(runStart, runEnd, end);
          runStart = record;
        }
        this.at[slot] = record + HEADER - (runStart - end);
        runEnd = record + length;
      }
      record += length;
    }
    end = this.move(runStart, runEnd, end);
    this.arenaEnd = end;
    const room = this.arena.length - end;
    if (room < bytes || room < end / 4 || (this.arena.length > MIN_ARENA && end + bytes < this.arena.length / 8)) {
      // Room for half as much again as is held (and this record): compactions then come at
      // most once per third of the arena written.
      const size = Math.max(MIN_ARENA, Math.ceil(((end + bytes) * 1.5) / 4096) * 4096);
      // Offsets are 32-bit: past that, a write is refused rather than misplaced.
      if (end + bytes > MAX_ARENA) throw new StoreError("store_full", `the in-memory store's arena cannot grow past ${MAX_ARENA} bytes (${end} held, ${bytes} more asked); the write was refused`);
      const fresh = new Uint8Array(Math.min(size, MAX_ARENA));
      fresh.set(this.arena.subarray(0, end));
      this.arena = fresh;
      this.words = new Uint32Array(fresh.buffer);
    }
    return end;
  }

  /** The records in [from, to) moved down to `at`; returns where the next run goes. */
  private move(from: number, to: number, at: number): number {
    if (from !== at && to > from) this.arena.copyWithin(at, from, to);
    return at + (to - from);
  }

  private allocate(): number {
    const reused = this.free.pop();
    if (reused !== undefined) return reused;
    if (this.high === this.capacity) this.grow();
    return this.high++;
  }

  private link(slot: number): void {
    const bucket = this.hash[slot]! & (this.buckets.length - 1);
    this.next[slot] = this.buckets[bucket]!;
    this.buckets[bucket] = slot + 1;
  }

  /** Twice the slots, and the index rebuilt at twice their number of buckets. */
  private grow(): void {
    const capacity = this.capacity * 2;
    const widen = <T extends Uint32Array | Float64Array | Uint8Array | Int32Array>(old: T, make: new (n: number) => T): T => {
      const wider = new make(capacity);
      wider.set(old);
      return wider;
    };
    this.at = widen(this.at, Uint32Array);
    this.keyBytes = widen(this.keyBytes, Uint32Array);
    this.valueBytes = widen(this.valueBytes, Uint32Array);
    this.chars = widen(this.chars, Float64Array);
    this.expiresAt = widen(this.expiresAt, Float64Array);
    this.writeId = widen(this.writeId, Float64Array);
    this.offered = widen(this.offered, Uint8Array);
    this.hash = widen(this.hash, Int32Array);
    this.next = new Int32Array(capacity);
    this.buckets = new Int32Array(capacity * 2);
    this.capacity = capacity;
    for (let s = 0; s < this.high; s++) if (this.writeId[s] !== 0) this.link(s);
  }
}
