import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { createMemoryStore } from "mcp-yield";

// The memory store's bound is about the heap it really holds: a kept response it shrank to
// "answered, for these answers" must not keep the response alive (in V8 a string made from a
// slice of a longer one holds the longer one).

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

async function settledHeap(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
  return process.memoryUsage().heapUsed;
}

describe("the memory store's real size", () => {
  it("full, it keeps about its bound: a shrunk kept response holds nothing of the response", async () => {
    const store = createMemoryStore({ maxBytes: 1024 * 1024 });
    const digest = (i: number) => `${"D".repeat(40)}${i.toString(36).padStart(3, "0")}`;
    const before = await settledHeap();
    // 8 MB of answered rounds through a 1 MiB store: it shrinks the oldest to make room.
    for (let i = 0; i < 1000; i++) {
      const response = { result: { content: [{ type: "text", text: `${i}:${"r".repeat(8000)}` }] } };
      await store.set(`redeem:nonce-${i}`, JSON.stringify({ d: digest(i), s: "done", r: response }), 600_000);
    }
    expect(store.shrunk).toBeGreaterThan(800);
    expect(store.bytes).toBeLessThanOrEqual(1024 * 1024);
    expect(await store.get("redeem:nonce-0")).toBe(`{"d":"${digest(0)}","s":"done","dropped":true}`);
    const held = (await settledHeap()) - before;
    // Each shrunk record keeping its 8 KB response would be ~7 MB; the bound and the shrunk records are ~1.2 MB.
    expect(held, `the store holds ${(held / 1024 / 1024).toFixed(2)} MiB of heap for a 1 MiB bound`).toBeLessThan(2.5 * 1024 * 1024);
  });
});
