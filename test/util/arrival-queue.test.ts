import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ArrivalQueue, QUEUE_SLACK } from "../../src/util/arrival-queue.js";
import { LiveCalls } from "../../src/replay/live-calls.js";

// The queue behind the memory store's expiry and shrinking order and the live calls' eviction
// order: the oldest current item, in arrival order, without scanning what is no longer current.

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** Whether anything still holds what `refs` point at, after full collections. */
async function stillHeld(refs: Array<WeakRef<object>>): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
  return refs.filter((r) => r.deref() !== undefined).length;
}

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

  it("stays within twice what is current plus its slack however long an old item holds the front", () => {
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
      expect(queue.length).toBeLessThanOrEqual(2 * (owner.size + 1) + QUEUE_SLACK + 1);
    }
    expect(queue.oldest()).toBe(front);
  });

  it("live calls: a generator held for long at the front does not let the eviction queues grow with the rounds that pass it", () => {
    // An idle clock that stands still: the one at the front is held for long without being idle
    // (counted in parks, 5,000 parks would make it idle and evict it — not what this is about).
    const calls = new LiveCalls<{ owner: object; big?: Uint8Array }>(
      1000,
      1 << 30,
      () => 1000,
      () => 0,
    );
    const owner = {};
    calls.put(`held-${"h".repeat(40)}`, { owner }, 1e12, "waiting-call");
    for (let i = 0; i < 5_000; i++) {
      const token = `t${i}-${"x".repeat(40)}${i}`;
      calls.put(token, { owner, big: new Uint8Array(16) }, 1e12, `call-${i}`, true);
      expect(calls.take(token, owner)).toBeDefined();
    }
    expect(calls.size).toBe(1);
    expect(calls.queued).toBeLessThanOrEqual(2 * 2 + QUEUE_SLACK + 1);
  });

  it("lets go of an item once the head passes it, not when the array is next copied", async () => {
    const owner = new Set<object>();
    const queue = new ArrivalQueue<object>((item) => owner.has(item));
    const refs: Array<WeakRef<object>> = [];
    // Fewer than the slack: the queue is never compacted, only passed.
    // Made in a function of its own: a loop variable in this (suspended) async function's frame would hold the last one.
    const arrive = () => {
      const item = { payload: new Uint8Array(1024) };
      refs.push(new WeakRef(item));
      owner.add(item);
      queue.push(item, owner.size);
    };
    for (let i = 0; i < QUEUE_SLACK - 1; i++) arrive();
    const last = { payload: new Uint8Array(1024) };
    owner.add(last);
    queue.push(last, owner.size);
    owner.clear();
    owner.add(last);
    expect(queue.oldest()).toBe(last);
    expect(await stillHeld(refs)).toBe(0);
  });

  it("live calls: a generator and token dropped at eviction or resume are not kept alive by the eviction queues", async () => {
    const calls = new LiveCalls<{ owner: object; big: Uint8Array }>(1000, 1 << 30, () => 1000);
    const owner = {};
    const refs: Array<WeakRef<object>> = [];
    // A call held at the front, so the queue is never run to its end (which empties it); then calls resumed at once.
    calls.put(`held-${"h".repeat(40)}`, { owner, big: new Uint8Array(16) }, 1e12, "waiting-call", true);
    const resumeAtOnce = (i: number) => {
      const token = `t${i}-${"x".repeat(4000)}${i}`;
      const call = { owner, big: new Uint8Array(64 * 1024) };
      refs.push(new WeakRef(call));
      calls.put(token, call, 1e12, `call-${i}`, true);
      expect(calls.take(token, owner)).toBe(call);
    };
    for (let i = 0; i < 40; i++) resumeAtOnce(i);
    expect(await stillHeld(refs)).toBe(0);
    // The tokens too: a 4 KB token per entry must not stay reachable through its key.
    const before = process.memoryUsage().heapUsed;
    for (let i = 40; i < 940; i++) {
      const token = `t${i}-${"y".repeat(4000)}${i}`;
      calls.put(token, { owner, big: new Uint8Array(16) }, 1e12, `call-${i}`, true);
      calls.take(token, owner);
    }
    await stillHeld([]);
    // 900 tokens of 4 KB would be 3.6 MB; what stays (the queue's slots, at most its slack) is far under.
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(1024 * 1024);
  });
});
