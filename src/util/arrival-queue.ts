/** Items beyond twice the current ones a queue may hold before it is compacted. */
export const QUEUE_SLACK = 64;

/**
 * Items in the order they arrived, the oldest current one found without a scan. An item stops
 * being current when its owner drops or replaces it (`current` says); such items are skipped
 * when reached and compacted away once they outnumber the current ones (plus a small slack),
 * so the queue stays within a small multiple of what is current, however long an old item stays
 * at its front.
 *
 * An item is let go as soon as it is passed or compacted away, not kept until the array is next
 * copied: what the owner dropped must not live on here (a live call's stale entry kept its
 * 2–4 KB token alive through its key, and a thousand of those per instance, surviving every
 * scavenge, doubled the young-generation GC of three instances without affinity).
 *
 * Why not a Map or Set's own order: iterated from its start after its oldest entries were
 * deleted, V8 steps over every deleted slot until it rehashes the table — looking at the oldest
 * entry was O(entries) (measured: parking a generator cost 11 µs with 10,000 calls in flight,
 * 0.8 µs with 10; a full memory store spent most of its writes there).
 */
export class ArrivalQueue<T> {
  // Slots before `head` are emptied as the head passes them (see above).
  private items: Array<T | undefined> = [];
  private head = 0;

  constructor(private readonly current: (item: T) => boolean) {}

  /**
   * Add `item` as the newest; `currentCount` (how many items the owner holds) bounds the queue.
   * Compacted once it holds more than twice the current items plus QUEUE_SLACK, so the copying
   * of a compaction is paid for by the pushes since the one before (amortized constant).
   */
  push(item: T, currentCount: number): void {
    this.items.push(item);
    if (this.items.length - this.head > 2 * currentCount + QUEUE_SLACK) {
      this.items = this.items.slice(this.head).filter((x) => this.current(x!));
      this.head = 0;
    }
  }

  /** The oldest current item, or `undefined`: items no longer current are dropped on the way. */
  oldest(): T | undefined {
    while (this.head < this.items.length) {
      const item = this.items[this.head]!;
      if (this.current(item)) {
        if (this.head > QUEUE_SLACK && this.head * 2 > this.items.length) {
          this.items = this.items.slice(this.head);
          this.head = 0;
        }
        return item;
      }
      this.items[this.head] = undefined;
      this.head++;
    }
    this.items = [];
    this.head = 0;
    return undefined;
  }

  /** Items held, current or not (for tests of the bound). */
  get length(): number {
    return this.items.length - this.head;
  }

  clear(): void {
    this.items = [];
    this.head = 0;
  }
}
