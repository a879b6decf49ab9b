/**
 * A Map for a hot path whose size keeps falling back to zero — one call in flight, taken and put
 * back every round. V8 shrinks a Map's table when a delete leaves it under half its buckets, so
 * such a Map reallocated its table (a call into the runtime) on every delete that emptied it:
 * measured 1.1 µs per delete in a process whose heap was busy (the memory store at steady
 * state: 7 % of its CPU), 0.24 µs in a quiet one; with the table kept from emptying, 0.13 µs in
 * both. So padding entries under keys no caller can use (symbols) stay in it for good.
 */
export class SteadyMap<K extends string, V> {
  private readonly map = new Map<K | symbol, V>();

  constructor() {
    for (const key of PADDING) this.map.set(key, undefined as V);
  }

  get(key: K): V | undefined {
    return this.map.get(key);
  }

  set(key: K, value: V): void {
    this.map.set(key, value);
  }

  delete(key: K): void {
    this.map.delete(key);
  }

  /** The entries callers put in (the padding not counted). */
  get size(): number {
    return this.map.size - PADDING.length;
  }
}

// Sixty-four: a deleted entry's slot is reused only when V8 rehashes the table (also through the
// runtime), once the slots past the last entry are used up; with 64 padding entries the table
// keeps ~64 free slots, so a rehash comes once per ~64 sets. With 8 a set cost 369 ns on
// average in the memory store's steady-state bench process (a rehash per ~8 sets); with 64,
// 121 ns (deletes ~100 ns either way; 81 ns per set in the no-store process).
const PADDING: readonly symbol[] = Array.from({ length: 64 }, (_, i) => Symbol(`padding ${i}`));
