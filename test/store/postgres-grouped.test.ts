import fc from "fast-check";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { StoreError } from "mcp-yield";
import { createPostgresStore, type PostgresQueryable } from "mcp-yield/postgres";
import { dropSchema, POSTGRES_URL, postgresAvailable, testSchema } from "../support/postgres.js";

// The PostgreSQL store's compare-and-swaps while its pool is busy go together, one statement
// for many (store/grouped/postgres-swaps.ts): each must do exactly what it would alone.

/** A pool whose statements are counted by their first words; `hold` keeps swaps from ending until released. */
function countingPool(max: number) {
  const pool = new pg.Pool({ connectionString: POSTGRES_URL, max });
  const grouped = { statements: 0, swaps: 0 };
  const queryable: PostgresQueryable = {
    query: async (text, values) => {
      if (text.startsWith("WITH i AS")) grouped.statements++, (grouped.swaps += (values![0] as string[]).length);
      return pool.query(text, values);
    },
  };
  return { queryable, grouped, end: () => pool.end() };
}

const schemas: string[] = [];
afterAll(async () => {
  for (const schema of schemas) await dropSchema(schema);
});

describe.skipIf(!postgresAvailable)("PostgreSQL swaps grouped while the pool is busy", () => {
  it("each swap of a group writes only over its expected value, and only a swap that wrote moves its index entries (property)", async () => {
    const schema = testSchema("grouped");
    schemas.push(schema);
    const { queryable, grouped, end } = countingPool(2);
    const store = await createPostgresStore({ pool: queryable, schema, maxConnections: 2, timeoutMs: 5_000 });
    try {
      let round = 0;
      await fc.assert(
        fc.asyncProperty(
          // Per key: how many writers race on its first value (1–4), and whether the key exists.
          fc.array(fc.record({ writers: fc.integer({ min: 1, max: 4 }), exists: fc.boolean(), stale: fc.boolean() }), { minLength: 1, maxLength: 24 }),
          async (keys) => {
            const r = round++;
            const key = (k: number) => `g${r}:${k}`;
            for (const [k, { exists }] of keys.entries()) if (exists) await store.add(key(k), "v0", 60_000);
            const swaps = keys.flatMap(({ writers, stale }, k) =>
              Array.from({ length: writers }, (_, w) => ({
                k,
                w,
                expected: stale && w === 0 ? "not-it" : "v0",
                value: `v1-${w}`,
              })),
            );
            const results = await Promise.all(
              swaps.map(({ k, w, expected, value }) => store.swapIndexed!(key(k), expected, value, 60_000, undefined, [{ index: `won${r}`, member: `${key(k)}#${w}`, at: 1 }])),
            );
            const won = await store.due(`won${r}`, 10, 1000);
            for (const [k, { writers, exists, stale }] of keys.entries()) {
              const mine = swaps.map((s, i) => ({ ...s, wrote: results[i]! })).filter((s) => s.k === k);
              const winners = mine.filter((s) => s.wrote);
              const value = await store.get(key(k));
              if (!exists) {
                expect(winners).toEqual([]);
                expect(value).toBeUndefined();
              } else if (stale && writers === 1) {
                expect(winners).toEqual([]);
                expect(value).toBe("v0");
              } else {
                // Exactly one writer over the expected value wins, and the key holds its value.
                expect(winners).toHaveLength(1);
                expect(value).toBe(winners[0]!.value);
              }
              // The index moved for the winner only.
              expect(won.filter((m) => m.startsWith(`${key(k)}#`)).sort()).toEqual(winners.map((s) => `${key(k)}#${s.w}`));
            }
          },
        ),
        { numRuns: 25 },
      );
      // With two connections and up to 96 swaps at once, most of them went in groups.
      expect(grouped.statements).toBeGreaterThan(0);
      expect(grouped.swaps).toBeGreaterThan(grouped.statements);
    } finally {
      await store.close();
      await end();
    }
  });

  it("a swap waiting for a connection fails within the store's time limit when none frees", async () => {
    const schema = testSchema("grouped_wait");
    schemas.push(schema);
    const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
    let hang = false;
    // Once armed, every statement hangs (a server that stopped answering).
    const queryable: PostgresQueryable = { query: (text, values) => (hang ? new Promise(() => {}) : pool.query(text, values)) };
    const store = await createPostgresStore({ pool: queryable, schema, maxConnections: 1, timeoutMs: 300 });
    try {
      await store.add("a", "v0", 60_000);
      await store.add("b", "v0", 60_000);
      hang = true;
      const started = performance.now();
      const outcomes = await Promise.allSettled([store.swap("a", "v0", "v1", 60_000), store.swap("b", "v0", "v1", 60_000)]);
      const waited = performance.now() - started;
      for (const outcome of outcomes) {
        expect(outcome.status).toBe("rejected");
        expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(StoreError);
        expect(((outcome as PromiseRejectedResult).reason as StoreError).reason).toBe("store_unavailable");
      }
      expect(waited).toBeLessThan(2_000);
    } finally {
      hang = false;
      await store.close();
      await pool.end();
    }
  });
});
