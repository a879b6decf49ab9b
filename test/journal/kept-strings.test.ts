import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createMemoryStore, createRuntime, elicit, tool } from "mcp-yield";
import { decodeValue, parseLines } from "../../src/internal.js";
import { testKey } from "../support/keys.js";

// Strings kept long hold nothing else alive (in V8 a slice of a longer string, or a
// concatenation holding one, keeps the longer one): the memory store's bound is about the heap
// it really holds, and what replay caches does not keep the journals it came from.

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

async function settledHeap(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
  // The memory store keeps its entries in an ArrayBuffer (store/byte-table.ts): counted too.
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
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

  it("keeps a written value as its own string: a value sliced from a larger text keeps nothing of that text", async () => {
    // Values are often slices or concatenations (a round's record is a template of its digest,
    // asks and token); kept as they are, they would hold what they were cut from.
    const store = createMemoryStore({ maxBytes: 1024 * 1024 });
    const before = await settledHeap();
    for (let i = 0; i < 200; i++) {
      const text = JSON.parse(JSON.stringify(`{"d":"${i}","s":"done","r":"${"t".repeat(50_000)}"}`)) as string;
      await store.set(`redeem:sliced-${i}`, `${text.slice(0, 200)}"}`, 600_000);
    }
    expect(await store.get("redeem:sliced-7")).toBe(`{"d":"7","s":"done","r":"${"t".repeat(200 - 25)}"}`);
    const held = (await settledHeap()) - before;
    // 200 values each keeping its 50 KB text would be ~10 MB; 200 values of ~200 characters are ~60 KB.
    expect(held, `the store holds ${(held / 1024 / 1024).toFixed(2)} MiB of heap for 40 KB of values`).toBeLessThan(2 * 1024 * 1024);
  });
});

describe("replayed answers", () => {
  it("keep nothing of the journal text they were decoded from", async () => {
    // A task's journal, or a continuation, is read back from a store record by JSON.parse: its
    // records are slices of that text, and decoding a recorded value must not keep it whole.
    const before = await settledHeap();
    for (let i = 0; i < 300; i++) {
      const record = JSON.parse(JSON.stringify({ journal: `S notes\t"${"n".repeat(20_000)}"\neAbCdEfGhIjK\ta{"name":"Person number ${i}"}\n` })) as { journal: string };
      const records = parseLines(record.journal)!;
      expect(decodeValue(records[1]![1].slice(1))).toEqual({ name: `Person number ${i}` });
    }
    const held = (await settledHeap()) - before;
    // 300 journals of 20 KB would be ~6 MB.
    expect(held, `${(held / 1024 / 1024).toFixed(2)} MiB still held after decoding 300 journals`).toBeLessThan(2 * 1024 * 1024);
  });
});

describe("asked questions", () => {
  it("keep nothing of the text a message was sliced from (the fingerprint caches keep copies)", async () => {
    // No live calls: a held generator keeps its own question (and so the document) by design.
    const runtime = createRuntime({ state: { keys: [testKey("k", 9)] }, liveCalls: 0 });
    const Ok = z.object({ ok: z.boolean() });
    const documents = new Map<number, string>();
    const review = tool({
      name: "review",
      description: "asks about a document, quoting its start",
      input: z.object({ doc: z.number() }),
      *run({ doc }) {
        // The question quotes the start of a large document, as a slice of it.
        const answer = yield* elicit(documents.get(doc)!.slice(0, 60), Ok);
        return answer.action;
      },
    });
    const caps = { clientCapabilities: { elicitation: {} } };
    const before = await settledHeap();
    for (let doc = 0; doc < 100; doc++) {
      documents.set(doc, JSON.parse(JSON.stringify(`Document ${doc}: ${"d".repeat(50_000)}`)) as string);
      const result = (await runtime.callTool(review, { name: "review", arguments: { doc } }, caps)) as { resultType?: string };
      expect(result.resultType).toBe("input_required");
      documents.delete(doc);
    }
    const held = (await settledHeap()) - before;
    // 100 documents of 50 KB would be ~5 MB.
    expect(held, `${(held / 1024 / 1024).toFixed(2)} MiB still held after 100 calls`).toBeLessThan(2 * 1024 * 1024);
    await runtime.close();
  });
});
