import type { IndexChange } from "../store.js";
import type { GroupedSwap } from "./turn-batches.js";

// store/postgres/swap-statements.ts holds the PostgreSQL store's compare-and-swap statements: one
// swap alone, many swaps of distinct rows in one statement (turn-batches.ts gathers them), and the
// index changes a write carries, gated on that write.

/** What the statements need from the store: its bounded query, its two tables, its clock's SQL. */
export interface SwapStatementParts {
  query: (what: string, text: string, values: unknown[]) => Promise<{ rows: Array<Record<string, unknown>>; rowCount: number | null }>;
  kv: string;
  due: string;
  now: string;
}

/** The swap statements of one store (`one`, `many` for turn-batches.ts) and its gated index changes. */
export function swapStatements({ query, kv, due, now }: SwapStatementParts) {
  /**
   * Index changes as data-modifying CTEs that act only when the write `w` before them did (each
   * runs whether or not the query reads it; EXISTS gates it on w): one statement, one commit.
   * Their five parameters (`indexArrays`) start at `$first`.
   */
  const gatedIndexChanges = (first: number) => {
    const [idx, member, at, goneIdx, goneMember] = [0, 1, 2, 3, 4].map((i) => `$${first + i}`);
    return `gone AS (DELETE FROM ${due} d USING unnest(${goneIdx}::text[], ${goneMember}::text[]) AS r(idx, member) WHERE d.idx = r.idx AND d.member = r.member AND EXISTS (SELECT 1 FROM w)),
         added AS (INSERT INTO ${due} (idx, member, at) SELECT a.idx, a.member, a.at FROM unnest(${idx}::text[], ${member}::text[], ${at}::float8[]) AS a(idx, member, at) WHERE EXISTS (SELECT 1 FROM w) ON CONFLICT (idx, member) DO UPDATE SET at = EXCLUDED.at)`;
  };

  /**
   * The index changes of many writes in one statement, each gated on its own write: its number
   * `n` (1-based, in the order given) among those `written` returns. Their seven parameters
   * (`ownedIndexArrays`) start at `$first`.
   */
  const gatedIndexChangesOfMany = (first: number, written: string) => {
    const [goneIdx, goneMember, goneN, idx, member, at, n] = [0, 1, 2, 3, 4, 5, 6].map((i) => `$${first + i}`);
    return `gone AS (DELETE FROM ${due} d USING unnest(${goneIdx}::text[], ${goneMember}::text[], ${goneN}::bigint[]) AS r(idx, member, n) WHERE d.idx = r.idx AND d.member = r.member AND r.n IN (SELECT n FROM ${written})),
         added AS (INSERT INTO ${due} (idx, member, at) SELECT a.idx, a.member, a.at FROM unnest(${idx}::text[], ${member}::text[], ${at}::float8[], ${n}::bigint[]) AS a(idx, member, at, n)
                   WHERE a.n IN (SELECT n FROM ${written}) ORDER BY a.idx, a.member ON CONFLICT (idx, member) DO UPDATE SET at = EXCLUDED.at)`;
  };

  /** One swap alone: one row, its index changes gated on its write. */
  const swapOne = async ({ key, expected, value, ttlMs, changes }: GroupedSwap): Promise<boolean> => {
    // A concurrent swap waits for the row lock, then re-checks the value: one of them wins.
    const update = `UPDATE ${kv} SET value = $3, expires_at = ${now} + $4 WHERE key = $1 AND value = $2 AND expires_at > ${now}`;
    if (changes.length === 0) return (await query("swap", update, [key, expected, value, ttlMs])).rowCount === 1;
    const { rowCount } = await query("swap", `WITH w AS (${update} RETURNING 1), ${gatedIndexChanges(5)} SELECT 1 FROM w`, [key, expected, value, ttlMs, ...indexArrays(changes)]);
    return rowCount === 1;
  };
  /**
   * Swaps of distinct rows in one statement, each with its own expected value, each index change
   * gated on its own swap's write. The rows are locked in key order first (the sorted FOR UPDATE
   * subquery), so two instances' statements over the same rows wait for each other, never deadlock.
   */
  const swapMany = async (swaps: readonly GroupedSwap[]): Promise<boolean[]> => {
    const keys = swaps.map((s) => s.key);
    const { rows } = await query(
      "swap",
      // Values and expected values as one JSON text each (node-postgres escapes a text[] parameter
      // character by character, and these are whole task records), matched to their keys by position.
      `WITH i AS (SELECT k.key, e.expected, v.value, k.ttl, k.n FROM unnest($1::text[], $4::bigint[]) WITH ORDINALITY AS k(key, ttl, n)
                 JOIN json_array_elements_text($2::json) WITH ORDINALITY AS e(expected, n) ON e.n = k.n
                 JOIN json_array_elements_text($3::json) WITH ORDINALITY AS v(value, n) ON v.n = k.n),
         w AS (UPDATE ${kv} k SET value = i.value, expires_at = ${now} + i.ttl
               FROM i, (SELECT key FROM ${kv} WHERE key = ANY($1::text[]) ORDER BY key FOR UPDATE) l
               WHERE k.key = l.key AND i.key = l.key AND k.value = i.expected AND k.expires_at > ${now} RETURNING i.n),
         ${gatedIndexChangesOfMany(5, "w")}
       SELECT n FROM w`,
      [keys, JSON.stringify(swaps.map((s) => wellFormed(s.expected))), JSON.stringify(swaps.map((s) => wellFormed(s.value))), swaps.map((s) => s.ttlMs), ...ownedIndexArrays(swaps)],
    );
    const written = new Set(rows.map((row) => Number(row.n)));
    return swaps.map((_, n) => written.has(n + 1));
  };

  return { gatedIndexChanges, gatedIndexChangesOfMany, one: swapOne, many: swapMany };
}

/** Index changes as the five arrays the statements unnest: additions (index, member, time), then removals (index, member). */
export function indexArrays(changes: readonly IndexChange[]): [string[], string[], number[], string[], string[]] {
  const adds = changes.filter((c) => c.at !== null);
  const removes = changes.filter((c) => c.at === null);
  return [adds.map((c) => c.index), adds.map((c) => c.member), adds.map((c) => c.at!), removes.map((c) => c.index), removes.map((c) => c.member)];
}

/** The index changes of many writes as the seven arrays `gatedIndexChangesOfMany` unnests: removals (index, member, write), then additions (index, member, time, write). */
export function ownedIndexArrays(writes: ReadonlyArray<{ changes: readonly IndexChange[] }>): [string[], string[], number[], string[], string[], number[], number[]] {
  const owned = writes.flatMap((w, i) => w.changes.map((change) => ({ change, n: i + 1 })));
  const removed = owned.filter((o) => o.change.at === null);
  const added = owned.filter((o) => o.change.at !== null);
  return [
    removed.map((r) => r.change.index),
    removed.map((r) => r.change.member),
    removed.map((r) => r.n),
    added.map((a) => a.change.index),
    added.map((a) => a.change.member),
    added.map((a) => a.change.at!),
    added.map((a) => a.n),
  ];
}

/**
 * `text` with each lone surrogate as U+FFFD: what node-postgres sends for a text parameter (its
 * UTF-8), and what a JSON parameter must hold (PostgreSQL refuses a lone surrogate's escape).
 */
export function wellFormed(text: string): string {
  return text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD");
}
