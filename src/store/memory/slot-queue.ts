import { QUEUE_SLACK } from "../../util/arrival-queue.js";

/**
 * ArrivalQueue (util/arrival-queue.ts) for a ByteTable's slots: each item a slot and the write
 * that filled it, in two typed arrays — nothing on the heap per item. An item stops being current
 * when its slot is freed or rewritten (its writeId changes) or when `current` says so; such items
 * are skipped when reached and compacted away once they outnumber the current ones.
 */
export class SlotQueue {
  private slots = new Int32Array(QUEUE_SLACK);
  private writes = new Float64Array(QUEUE_SLACK);
  private head = 0;
  private tail = 0;

  constructor(private readonly current: (slot: number, writeId: number) => boolean) {}

  /** Add the newest item; `currentCount` (slots in use) bounds the queue as ArrivalQueue's does. */
  push(slot: number, writeId: number, currentCount: number): void {
    if (this.tail === this.slots.length) this.compact(currentCount);
    this.slots[this.tail] = slot;
    this.writes[this.tail] = writeId;
    this.tail++;
  }

  /** The oldest current item's slot, or -1: items no longer current are dropped on the way. */
  oldest(): number {
    while (this.head < this.tail) {
      const slot = this.slots[this.head]!;
      if (this.current(slot, this.writes[this.head]!)) return slot;
      this.head++;
    }
    this.head = this.tail = 0;
    return -1;
  }

  /** Items held, current or not (for tests of the bound). */
  get length(): number {
    return this.tail - this.head;
  }

  clear(): void {
    this.head = this.tail = 0;
  }

  /**
   * Full: the current items moved to the front — into arrays sized for twice the current count
   * plus the slack, so a compaction's copying is paid for by the pushes since the one before.
   */
  private compact(currentCount: number): void {
    const size = Math.max(QUEUE_SLACK, 2 * currentCount + QUEUE_SLACK, this.tail - this.head + 1);
    const slots = size === this.slots.length ? this.slots : new Int32Array(size);
    const writes = size === this.writes.length ? this.writes : new Float64Array(size);
    let n = 0;
    for (let i = this.head; i < this.tail; i++) {
      if (!this.current(this.slots[i]!, this.writes[i]!)) continue;
      slots[n] = this.slots[i]!;
      writes[n] = this.writes[i]!;
      n++;
    }
    this.slots = slots;
    this.writes = writes;
    this.head = 0;
    this.tail = n;
    // Every item current and the arrays full: room for the push.
    if (n === slots.length) this.grow();
  }

  private grow(): void {
    const slots = new Int32Array(this.slots.length * 2);
    const writes = new Float64Array(this.writes.length * 2);
    slots.set(this.slots);
    writes.set(this.writes);
    this.slots = slots;
    this.writes = writes;
  }
}
