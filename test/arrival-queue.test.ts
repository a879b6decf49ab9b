import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ArrivalQueue } from "../src/util/arrival-queue.js";
import { LiveCalls } from "../src/replay/live-calls.js";

// The queue behind the memory store's expiry and shrinking order and the live calls' eviction
// order: the oldest current item, in arrival order, without scanning what is no longer current.

describe("ArrivalQueue", () => {
  it("gives the oldest current item, as a plain list filtered by currency would, over any mix of arrivals and drops (property)", () => {
    const op = fc.oneof(fc.record({ push: fc.integer({ min: 0, max: 30 }) }), fc.record({ drop: fc.integer({ min: 0, max: 30 }) }), fc.constant({ oldest: true as const }));
    fc.assert(
      fc.property(fc.array(op, { maxLength: 300 }), (ops) => {
        // Items are {key}; an item is current while `owner` maps its key to that very item (a newer push of the key replaces it).
        const owner = new Map<number, { key: number }>();
        const queue = new ArrivalQueue<{ key: number }>((item) => owner.get(item.key) === item);
        const model: Array<{ key: number }> = [];
        for (const o of ops) {
          if ("push" in o) {
            const item = { key: o.push };
            owner.set(o.push, item);
            queue.push(item, owner.size);
            model.push(item);
          } else if ("drop" in o) owner.delete(o.drop);
          else expect(queue.oldest()).toBe(model.find((item) => owner.get(item.key) === item));
        }
        expect(queue.oldest()).toBe(model.find((item) => owner.get(item.key) === item));
      }),
    );
  });

  it("stays within twice what is current plus 1,024 however long an old item holds the front", () => {
    const owner = new Map<number, { key: number }>();
    const queue = new ArrivalQueue<{ key: number }>((item) => owner.get(item.key) === item);
    const front = { key: -1 };
    owner.set(-1, front);
    queue.push(front, owner.size);
    for (let i = 0; i < 20_000; i++) {
      const item = { key: i };
      owner.set(i, item);
      queue.push(item, owner.size);
      owner.delete(i); // gone at once: it never reaches the front while `front` is held
      expect(queue.length).toBeLessThanOrEqual(2 * (owner.size + 1) + 1024 + 1);
    }
    expect(queue.oldest()).toBe(front);
  });

  it("live calls: a generator held for long at the front does not let the eviction queues grow with the rounds that pass it", () => {
    const calls = new LiveCalls<{ owner: object; big?: Uint8Array }>(1000, 1 << 30, () => 1000);
    const owner = {};
    calls.put(`held-${"h".repeat(40)}`, { owner }, 1e12, "waiting-call");
    for (let i = 0; i < 5_000; i++) {
      const token = `t${i}-${"x".repeat(40)}${i}`;
      calls.put(token, { owner, big: new Uint8Array(16) }, 1e12, `call-${i}`, true);
      expect(calls.take(token, owner)).toBeDefined();
    }
    expect(calls.size).toBe(1);
    expect(calls.queued).toBeLessThanOrEqual(2 * 2 + 1024 + 1);
  });
});
