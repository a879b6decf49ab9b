import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createMemoryStore } from "mcp-yield";
import { dropKeptResponse } from "../../src/internal.js";

// The memory store keeps its entries as UTF-8 in one arena, indexed by slot (store/byte-table.ts):
// what a read gives back must be exactly what was written, whatever the text, however often the
// arena is compacted or grown, slots reused and hash chains walked. Checked against a plain Map.

/** Well-formed text (the Store's contract): ASCII, Latin-1, CJK, astral characters (surrogate pairs). */
const text = (maxLength: number) =>
  fc
    .array(fc.oneof(fc.constantFrom("a", "Z", "0", '"', "\\", "é", "ß", "日本", "😀", "𝄞", "\u007f", "\u0080", "\u07ff", "\u0800", "\uffff"), fc.string({ maxLength: 4 })), { maxLength })
    .map((parts) => parts.join(""));

type Op =
  | { kind: "set" | "add"; key: number; value: string; ttl: number }
  | { kind: "swap"; key: number; value: string; ttl: number; same: boolean }
  | { kind: "get" | "delete"; key: number }
  | { kind: "incr"; key: number; delta: number; ttl: number }
  | { kind: "advance"; ms: number };

describe("memory store layout (entries outside the heap)", () => {
  it("reads back exactly what was written, through expiry, rewrites, deletes, slot reuse and compactions (property, against a Map)", async () => {
    const keyText = fc.array(text(6), { minLength: 24, maxLength: 24 });
    const op = (keys: number): fc.Arbitrary<Op> =>
      fc.oneof(
        fc.record({ kind: fc.constantFrom("set" as const, "add" as const), key: fc.nat(keys - 1), value: fc.oneof(text(20), text(400)), ttl: fc.integer({ min: 1, max: 50 }) }),
        fc.record({ kind: fc.constant("swap" as const), key: fc.nat(keys - 1), value: text(30), ttl: fc.integer({ min: 1, max: 50 }), same: fc.boolean() }),
        fc.record({ kind: fc.constantFrom("get" as const, "delete" as const), key: fc.nat(keys - 1) }),
        fc.record({ kind: fc.constant("incr" as const), key: fc.nat(keys - 1), delta: fc.integer({ min: -5, max: 5 }), ttl: fc.integer({ min: 1, max: 50 }) }),
        fc.record({ kind: fc.constant("advance" as const), ms: fc.integer({ min: 0, max: 20 }) }),
      );
    await fc.assert(
      fc.asyncProperty(keyText, fc.array(op(24), { maxLength: 300 }), async (names, ops) => {
        let now = 0;
        // Big enough never to shed or refuse: every write lands, so the model is exact.
        const store = createMemoryStore({ maxBytes: 1 << 30, clock: () => now });
        const model = new Map<string, { value: string; expiresAt: number }>();
        const live = (key: string) => {
          const e = model.get(key);
          return e !== undefined && e.expiresAt > now ? e : undefined;
        };
        // Distinct keys, one an empty string (and some differing only past their first bytes).
        const keys = names.map((n, i) => (i === 0 ? "" : `${n}#${i}`));
        for (const o of ops) {
          if (o.kind === "advance") {
            now += o.ms;
            continue;
          }
          const key = keys[o.key]!;
          switch (o.kind) {
            case "get":
              expect(await store.get(key)).toBe(live(key)?.value);
              break;
            case "delete":
              await store.delete(key);
              model.delete(key);
              break;
            case "set":
              await store.set(key, o.value, o.ttl);
              model.set(key, { value: o.value, expiresAt: now + o.ttl });
              break;
            case "add": {
              const added = live(key) === undefined;
              expect(await store.add(key, o.value, o.ttl)).toBe(added);
              if (added) model.set(key, { value: o.value, expiresAt: now + o.ttl });
              break;
            }
            case "swap": {
              const before = live(key);
              // The value there now (when `same`), or one that differs from it by a character.
              const expected = o.same && before !== undefined ? before.value : `${before?.value ?? ""}x`;
              expect(await store.swap(key, expected, o.value, o.ttl)).toBe(before !== undefined && before.value === expected);
              if (before !== undefined && before.value === expected) model.set(key, { value: o.value, expiresAt: now + o.ttl });
              break;
            }
            case "incr": {
              const before = live(key);
              if (before !== undefined && !/^-?\d+$/.test(before.value)) break; // not a counter: out of incr's contract
              const sum = (before === undefined ? 0 : Number(before.value)) + o.delta;
              expect(await store.incr(key, o.delta, o.ttl)).toBe(sum);
              model.set(key, { value: String(sum), expiresAt: before?.expiresAt ?? now + o.ttl });
              break;
            }
          }
        }
        for (const key of keys) expect(await store.get(key)).toBe(live(key)?.value);
        // The bound counts what is held: the unexpired entries' key and value lengths.
        let held = 0;
        for (const [key, e] of model) if (e.expiresAt > now && (await store.get(key)) !== undefined) held += key.length + e.value.length;
        expect(store.bytes).toBeGreaterThanOrEqual(held);
        await store.close();
      }),
      { numRuns: 150 },
    );
  });

  it("keeps thousands of entries exact while its arena is compacted and grown many times over, and lets the arena shrink once they expire", async () => {
    let now = 0;
    const store = createMemoryStore({ maxBytes: 1 << 30, clock: () => now });
    const value = (i: number) => `${i}:${"é😀x".repeat(i % 97)}${"v".repeat((i * 7919) % 3000)}`;
    // 20,000 writes of up to ≈ 3 KB each, every third one expiring soon, every fifth rewritten:
    // the arena fills and is compacted (or grown) over and over, slots are freed and reused.
    for (let i = 0; i < 20_000; i++) {
      await store.set(`k${i}`, value(i), i % 3 === 0 ? 5 : 1_000_000);
      if (i % 5 === 0 && i > 0) await store.set(`k${i - 1}`, value(i + 1), 1_000_000);
      now += 1;
    }
    for (let i = 0; i < 20_000; i++) {
      const expected = i % 5 === 4 && i < 19_999 ? value(i + 2) : i % 3 === 0 && now - i >= 5 ? undefined : value(i);
      if ((await store.get(`k${i}`)) !== expected) expect.fail(`k${i}: read ${JSON.stringify((await store.get(`k${i}`))?.slice(0, 40))}, wrote ${JSON.stringify(expected?.slice(0, 40))}`);
    }
    const full = store.arenaBytes;
    expect(full).toBeGreaterThan(10 * 1024 * 1024);
    // Everything expires; new writes then compact into a much smaller arena.
    now += 2_000_000;
    for (let i = 0; i < 2_000; i++) await store.set(`n${i}`, "small", 1_000);
    expect(await store.get("n1999")).toBe("small");
    expect(await store.get("k1")).toBeUndefined();
    expect(store.arenaBytes, `arena ${store.arenaBytes} bytes after expiry, ${full} full`).toBeLessThan(full / 8);
  });

  it("full, keeps every answered round as written or shrunk (never anything else) through thousands of shrinks and the compactions after them", async () => {
    let now = 0;
    const store = createMemoryStore({ maxBytes: 256 * 1024, clock: () => now });
    const written = new Map<string, { value: string; at: number }>();
    const dropped = new Set<string>();
    const ttl = 1_500;
    const record = (i: number) => `{"d":"${i.toString(36).padStart(43, "D")}","s":"done","r":{"result":{"text":"${"é😀ab".repeat(i % 13)}${"r".repeat(200 + ((i * 31) % 900))}"}}}`;
    for (let i = 0; i < 6_000; i++) {
      const key = `redeem:${i}`;
      written.set(key, { value: record(i), at: now });
      await store.add(key, record(i), ttl);
      now += 1;
      // Now and then every key read back: what was written, or its shrunk form — and once shrunk, for good.
      if (i % 1_500 === 1_499 || i === 5_999) {
        for (const [k, { value: v, at }] of written) {
          const read = await store.get(k);
          if (now >= at + ttl) {
            expect(read).toBeUndefined();
            continue;
          }
          if (read === v && !dropped.has(k)) continue;
          if (read !== dropKeptResponse(k, v)) expect.fail(`${k}: read ${JSON.stringify(read?.slice(0, 60))}`);
          dropped.add(k);
        }
      }
    }
    expect(store.shrunk).toBeGreaterThan(3_000);
    expect(store.bytes).toBeLessThanOrEqual(256 * 1024);
  });

  it("shrinks from the entry's bytes exactly as dropKeptResponse does from its text, whatever the key (property)", async () => {
    // The default shrink reads the key and the value's head as UTF-8 bytes (memory.ts
    // keptResponseHead), never as text — for a key with a non-ASCII character it goes by text.
    const key = fc.oneof(fc.stringMatching(/^redeem:[A-Za-z0-9_-]{0,20}$/), fc.constantFrom("redeem:é", "redeem:😀n", "redeem", "redeemx:n", "task:1", "", "r"), text(12));
    const digest = fc.oneof(
      fc.stringMatching(/^[A-Za-z0-9_-]{1,128}$/),
      fc.stringMatching(/^[A-Za-z0-9_-]{128,130}$/),
      fc
        .tuple(fc.stringMatching(/^[A-Za-z0-9_-]{0,6}$/), fc.constantFrom(".", '"', "é", " ", "+", "/", "=", "~", "\\", "\u007f"), fc.stringMatching(/^[A-Za-z0-9_-]{0,6}$/))
        .map(([a, odd, b]) => a + odd + b),
      text(10),
    );
    const head = fc.oneof({ arbitrary: fc.constant('{"d":"'), weight: 4 }, fc.constantFrom('{"d":', '{"d": "', ""));
    const tail = fc.oneof({ arbitrary: fc.constant('","s":"done","r":'), weight: 4 }, fc.constantFrom('","s":"done","r"', '","s":"done",', '","s":"pending","r":', '"'));
    const value = fc.tuple(head, digest, tail, text(200)).map(([h, d, t, r]) => `${h}${d}${t}${r}`);
    await fc.assert(
      fc.asyncProperty(key, value, async (k, v) => {
        const store = createMemoryStore({ maxBytes: k.length + v.length + 1, reservedBytes: 0 });
        await store.set(k, v, 60_000);
        await expect(store.set("other".repeat(k === "other" ? 2 : 1), "y".repeat(k.length + v.length + 1), 60_000)).rejects.toMatchObject({ reason: "store_full" });
        const dropped = dropKeptResponse(k, v);
        const shrank = dropped !== undefined && dropped.length < v.length;
        expect(await store.get(k)).toBe(shrank ? dropped : v);
        expect(store.shrunk).toBe(shrank ? 1 : 0);
        expect(store.bytes).toBe(k.length + (shrank ? dropped.length : v.length));
        await store.close();
      }),
      { numRuns: 400 },
    );
  });

  it("shrinks an answered round exactly as dropKeptResponse would from the whole value, reading only its head (property)", async () => {
    // The store gives the default shrink only a value's first bytes (memory.ts DROP_READS); any
    // value must shrink to what dropKeptResponse makes of all of it, or stay.
    const digest = fc.oneof(fc.stringMatching(/^[A-Za-z0-9_-]{1,128}$/), fc.stringMatching(/^[A-Za-z0-9_-]{129,140}$/), text(10));
    const value = fc.oneof(
      fc.tuple(digest, text(300)).map(([d, r]) => `{"d":"${d}","s":"done","r":${JSON.stringify(r)}}`),
      fc.tuple(digest, text(300)).map(([d, r]) => `{"d":"${d}","s":"pending","o":${JSON.stringify(r)}}`),
      fc.tuple(text(160), text(300)).map(([a, b]) => `${a}${b}`),
    );
    await fc.assert(
      fc.asyncProperty(value, async (v) => {
        const key = "redeem:nonce";
        // Room for this value alone, so holding it passes the shed's target (seven eighths of the
        // bound); a write that can never fit then has the store offer it to shrink (and is refused).
        const store = createMemoryStore({ maxBytes: key.length + v.length + 1, reservedBytes: 0 });
        await store.set(key, v, 60_000);
        await expect(store.set("other", "y".repeat(key.length + v.length + 1), 60_000)).rejects.toMatchObject({ reason: "store_full" });
        const dropped = dropKeptResponse(key, v);
        expect(await store.get(key)).toBe(dropped !== undefined && dropped.length < v.length ? dropped : v);
        await store.close();
      }),
      { numRuns: 200 },
    );
  });
});
