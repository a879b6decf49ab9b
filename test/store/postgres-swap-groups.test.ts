import fc from "fast-check";
import { type Store, StoreError } from "mcp-yield";
import { createPostgresStore, type PostgresQueryable } from "mcp-yield/postgres";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dropSchema, POSTGRES_URL, postgresAvailable, testSchema } from "../support/postgres.js";

// The PostgreSQL store sends the compare-and-swaps asked for in one turn of the event loop as one
// statement (src/store/postgres/turn-batches.ts). Each swap must still be exactly what it is alone:
// replaced only when its own expected value is there, its index changes and its notice only then,
// a row never written twice by one statement, two instances' groups over the same rows never in a
// deadlock, and a failed statement failing each of its swaps rather than answering for them.

const schema = testSchema("swap_groups");
let pool: pg.Pool;
/** Statements the store sent, by what they are: "many" for a grouped swap. */
const sent: string[] = [];
/** Grouped swap statements fail while this is set. */
let failMany: Error | undefined;

function countingPool(): PostgresQueryable {
  return {
    async query(text, values) {
      const many = text.includes("json_array_elements_text");
      sent.push(many ? "many" : text.trimStart().split(/\s/)[0]!);
      if (many && failMany !== undefined) throw failMany;
      const { rows, rowCount } = await pool.query(text, values);
      return { rows, rowCount };
    },
  };
}

let store: Store;
let other: Store;
beforeAll(async () => {
  if (!postgresAvailable) return;
  pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 10 });
  store = await createPostgresStore({ pool: countingPool(), schema });
  other = await createPostgresStore({ connectionString: POSTGRES_URL, schema });
});
afterAll(async () => {
  if (!postgresAvailable) return;
  await store.close();
  await other.close();
  await pool.end();
  await dropSchema(schema);
});

const keysOf = (name: string, n: number) => Array.from({ length: n }, (_, i) => `${name}:${String(i).padStart(3, "0")}`);

describe.skipIf(!postgresAvailable)("PostgreSQL swaps asked for together", () => {
  it("go as one statement, each replaced only where its own expected value is there, its index changes and notice only then", async () => {
    const keys = keysOf("burst", 40);
    for (const key of keys) await store.set(key, "v0", 60_000);
    const heard: string[] = [];
    const listening = await other.listen!("swap-groups", { message: (m) => heard.push(m), reset: () => {} });
    sent.length = 0;
    // Even keys expect what is there; odd ones a stale value.
    const outcomes = await Promise.all(
      keys.map((key, i) =>
        store.swapIndexed!(key, i % 2 === 0 ? "v0" : "stale", `v1-${i}`, 60_000, { channel: "swap-groups", message: key }, [
          { index: "burst-due", member: key, at: 1000 + i },
          { index: "burst-gone", member: key, at: null },
        ]),
      ),
    );
    expect(sent.filter((s) => s === "many")).toHaveLength(1);
    expect(sent.filter((s) => s !== "many" && s !== "SELECT")).toEqual([]);
    expect(outcomes).toEqual(keys.map((_, i) => i % 2 === 0));
    expect(await Promise.all(keys.map((key) => store.get(key)))).toEqual(keys.map((_, i) => (i % 2 === 0 ? `v1-${i}` : "v0")));
    const due = await store.members("burst-due", 100);
    expect(due.map((d) => d.member)).toEqual(keys.filter((_, i) => i % 2 === 0));
    expect(due.map((d) => d.at)).toEqual(keys.map((_, i) => 1000 + i).filter((_, i) => i % 2 === 0));
    await expect.poll(() => heard.length).toBe(20);
    expect([...heard].sort()).toEqual(keys.filter((_, i) => i % 2 === 0));
    await listening?.close();
  });

  it("reads asked for together go as one statement, each answered for its own key", async () => {
    const keys = keysOf("read", 30);
    for (const [i, key] of keys.entries()) if (i % 3 !== 0) await store.set(key, `r${i}`, i % 3 === 1 ? 60_000 : 1);
    await new Promise((r) => setTimeout(r, 5)); // the 1 ms ones expire
    sent.length = 0;
    const read = await Promise.all([...keys, keys[1]!].map((key) => store.get(key)));
    expect(sent).toEqual(["SELECT"]);
    expect(read).toEqual([...keys.map((_, i) => (i % 3 === 1 ? `r${i}` : undefined)), "r1"]);
    sent.length = 0;
    expect(await store.get(keys[1]!)).toBe("r1");
    expect(sent).toEqual(["SELECT"]);
  });

  it("adds asked for together go as one statement: each written only where its key is absent or expired, its index changes only then", async () => {
    const keys = keysOf("add", 30);
    for (const [i, key] of keys.entries()) if (i % 3 !== 0) await store.set(key, "there", i % 3 === 1 ? 60_000 : 1);
    await new Promise((r) => setTimeout(r, 5)); // the 1 ms ones expire
    sent.length = 0;
    const outcomes = await Promise.all(keys.map((key, i) => store.addIndexed!(key, `new-${i}`, 60_000, [{ index: "add-due", member: key, at: i }])));
    expect(sent).toEqual(["many"]);
    expect(outcomes).toEqual(keys.map((_, i) => i % 3 !== 1));
    expect(await Promise.all(keys.map((key) => store.get(key)))).toEqual(keys.map((_, i) => (i % 3 === 1 ? "there" : `new-${i}`)));
    expect((await store.members("add-due", 100)).map((m) => m.member)).toEqual(keys.filter((_, i) => i % 3 !== 1));
  });

  it("adds bounded by one index's size are never counted in one statement; adds bounded by different ones go together", async () => {
    // A bound is counted before the add, as concurrent adds always were: two adds of one share in
    // one statement would each count without the other, so they go in statements of their own.
    sent.length = 0;
    const keys = keysOf("bounded", 5);
    await Promise.all(keys.map((key) => store.addIndexed!(key, "v", 60_000, [{ index: "bounded-share", member: key, at: 1 }], { index: "bounded-share", below: 3 })));
    expect(sent.filter((s) => s === "many")).toEqual([]);
    expect(sent.filter((s) => s === "WITH")).toHaveLength(5);
    // One after another, the bound holds exactly.
    const later = keysOf("bounded-later", 3);
    const outcomes = [];
    for (const key of later) outcomes.push(await store.addIndexed!(key, "v", 60_000, [{ index: "later-share", member: key, at: 1 }], { index: "later-share", below: 2 }));
    expect(outcomes).toEqual([true, true, false]);
    // Adds bounded by other indexes still go together.
    sent.length = 0;
    const others = keysOf("other-bound", 4);
    expect(await Promise.all(others.map((key, i) => store.addIndexed!(key, "v", 60_000, [{ index: `share-${i}`, member: key, at: 1 }], { index: `share-${i}`, below: 1 })))).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(sent).toEqual(["many"]);
  });

  it("removes an index entry only for a swap that replaced", async () => {
    const keys = keysOf("gone", 6);
    for (const key of keys) {
      await store.set(key, "v0", 60_000);
      await store.schedule("gone-due", key, 5);
    }
    const outcomes = await Promise.all(keys.map((key, i) => store.swapIndexed!(key, i < 3 ? "v0" : "stale", "v1", 60_000, undefined, [{ index: "gone-due", member: key, at: null }])));
    expect(outcomes).toEqual([true, true, true, false, false, false]);
    expect((await store.members("gone-due", 10)).map((m) => m.member)).toEqual(keys.slice(3));
  });

  it("send a key asked for twice in one turn in two statements: one of the two swaps wins", async () => {
    await store.set("twice", "v0", 60_000);
    sent.length = 0;
    const outcomes = await Promise.all([store.swap("twice", "v0", "a", 60_000), store.swap("other-key", "x", "y", 60_000), store.swap("twice", "v0", "b", 60_000)]);
    expect(outcomes.filter((o, i) => i !== 1 && o)).toHaveLength(1);
    expect(sent.filter((s) => s === "many" || s === "UPDATE")).toHaveLength(2);
    expect(["a", "b"]).toContain(await store.get("twice"));
  });

  it("keep a value with a lone surrogate as a swap alone keeps it, and a NUL expected value fails only its own swap", async () => {
    await store.set("alone", "v0", 60_000);
    await store.set("grouped-1", "v0", 60_000);
    await store.set("grouped-2", "v0", 60_000);
    expect(await store.swap("alone", "v0", "x\ud800y", 60_000)).toBe(true);
    const outcomes = await Promise.all([store.swap("grouped-1", "v0", "x\ud800y", 60_000), store.swap("grouped-2", "v\u00000", "z", 60_000)]);
    expect(outcomes).toEqual([true, false]);
    expect(await store.get("grouped-1")).toBe(await store.get("alone"));
    expect(await store.get("grouped-2")).toBe("v0");
  });

  it("fail each swap of a statement that failed, with the store's error", async () => {
    await store.set("fails-1", "v0", 60_000);
    await store.set("fails-2", "v0", 60_000);
    failMany = new Error("connection terminated");
    try {
      const outcomes = await Promise.allSettled([store.swap("fails-1", "v0", "v1", 60_000), store.swap("fails-2", "v0", "v1", 60_000)]);
      for (const outcome of outcomes) {
        expect(outcome.status).toBe("rejected");
        expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(StoreError);
      }
    } finally {
      failMany = undefined;
    }
    expect(await store.get("fails-1")).toBe("v0");
  });

  it("from two instances over the same rows in opposite orders, never deadlock and never lose an increment", async () => {
    const keys = keysOf("counter", 8);
    for (const key of keys) await store.set(key, "0", 60_000);
    // Each worker adds one to every key by compare-and-swap, read again on a lost swap; the two
    // stores' workers walk the keys in opposite orders, so their groups hold the same rows.
    const worker = async (s: Store, order: string[]) => {
      let pending = [...order];
      while (pending.length > 0) {
        const read = await Promise.all(pending.map((key) => s.get(key)));
        const won = await Promise.all(pending.map((key, i) => s.swap(key, read[i]!, String(Number(read[i]) + 1), 60_000)));
        pending = pending.filter((_, i) => !won[i]);
      }
    };
    const reversed = [...keys].reverse();
    await Promise.all(Array.from({ length: 12 }, (_, w) => worker(w % 2 === 0 ? store : other, w % 2 === 0 ? keys : reversed)));
    expect(await Promise.all(keys.map((key) => store.get(key)))).toEqual(keys.map(() => "12"));
  });

  it("answer as the same swaps one at a time would (property, against the server)", async () => {
    let round = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.integer({ min: 0, max: 30 }), { minLength: 1, maxLength: 20 }),
        fc.array(fc.boolean(), { minLength: 20, maxLength: 20 }),
        fc.array(fc.boolean(), { minLength: 20, maxLength: 20 }),
        async (picked, fresh, live) => {
          round++;
          const keys = picked.map((k) => `prop-${round}:${k}`);
          // A model of each key: absent, expired or holding "old".
          for (const [i, key] of keys.entries()) if (live[i]) await store.set(key, "old", 60_000);
          const outcomes = await Promise.all(keys.map((key, i) => store.swap(key, fresh[i] ? "old" : "new?", `new-${i}`, 60_000)));
          expect(outcomes).toEqual(keys.map((_, i) => live[i]! && fresh[i]!));
          expect(await Promise.all(keys.map((key) => store.get(key)))).toEqual(keys.map((_, i) => (!live[i] ? undefined : fresh[i] ? `new-${i}` : "old")));
        },
      ),
      { numRuns: 25 },
    );
  });
});
