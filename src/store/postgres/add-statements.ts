import type { IndexChange, IndexLimit } from "../store.js";
import { indexArrays, ownedIndexArrays, type SwapStatementParts, wellFormed } from "./swap-statements.js";
import { rowsWritten } from "./turn-batches.js";

// store/postgres/add-statements.ts holds the PostgreSQL store's add-if-absent with index changes
// (a task's start): one alone, or many of distinct keys in one statement (turn-batches.ts gathers
// them), each gated on its own insert and bounded by its own limit.

/** One add as the store was asked for it, its values checked. */
export interface GroupedAdd {
  key: string;
  value: string;
  ttlMs: number;
  changes: readonly IndexChange[];
  limit: IndexLimit | undefined;
}

/** The rows an add writes or counts: its key, its index entries, and the index its limit counts (two adds of one share in one statement would each count without the other). */
export const rowsOfAdd = (add: GroupedAdd): string[] => [...rowsWritten(add.key, add.changes), ...(add.limit === undefined ? [] : [`\u0000${add.limit.index}`])];

/** The add statements of one store (`one`, `many` for turn-batches.ts). */
export function addStatements({
  query,
  kv,
  due,
  now,
  gatedIndexChanges,
  gatedIndexChangesOfMany,
}: SwapStatementParts & { gatedIndexChanges: (first: number) => string; gatedIndexChangesOfMany: (first: number, written: string) => string }) {
  // Absent or expired: written (the conflict branch updates only an expired row). The limit's
  // count goes in the statement too (as `size` counts; as racy as a count before the add),
  // counted up to the limit only: a start costs at most `below` index rows, however many the share holds.
  const addOne = async ({ key, value, ttlMs, changes, limit }: GroupedAdd): Promise<boolean> => {
    const within = limit === undefined ? "" : `WHERE (SELECT count(*) FROM (SELECT 1 FROM ${due} WHERE idx = $9 LIMIT $10::bigint) s) < $10::bigint`;
    const insert = `INSERT INTO ${kv} AS t (key, value, expires_at) SELECT $1, $2, ${now} + $3 ${within} ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at WHERE t.expires_at <= ${now}`;
    const bound = limit === undefined ? [] : [limit.index, limit.below];
    const { rowCount } = await query("add", `WITH w AS (${insert} RETURNING 1), ${gatedIndexChanges(4)} SELECT 1 FROM w`, [key, value, ttlMs, ...indexArrays(changes), ...bound]);
    return rowCount === 1;
  };

  /**
   * Adds of distinct keys in one statement, inserted in key order (two instances' statements over
   * the same new keys wait for each other, never deadlock), each index change gated on its own
   * insert. Values go as one JSON text (see swap-statements.ts).
   */
  const addMany = async (adds: readonly GroupedAdd[]): Promise<boolean[]> => {
    const { rows } = await query(
      "add",
      `WITH i AS (SELECT k.key, v.value, k.ttl, k.idx, k.below, k.n FROM unnest($1::text[], $3::bigint[], $4::text[], $5::bigint[]) WITH ORDINALITY AS k(key, ttl, idx, below, n)
                 JOIN json_array_elements_text($2::json) WITH ORDINALITY AS v(value, n) ON v.n = k.n),
         w AS (INSERT INTO ${kv} AS t (key, value, expires_at)
               SELECT i.key, i.value, ${now} + i.ttl FROM i
               WHERE i.idx IS NULL OR (SELECT count(*) FROM (SELECT 1 FROM ${due} WHERE idx = i.idx LIMIT i.below) s) < i.below
               ORDER BY i.key
               ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at WHERE t.expires_at <= ${now}
               RETURNING t.key),
         written AS (SELECT i.n FROM i JOIN w ON w.key = i.key),
         ${gatedIndexChangesOfMany(6, "written")}
       SELECT n FROM written`,
      [
        adds.map((a) => a.key),
        JSON.stringify(adds.map((a) => wellFormed(a.value))),
        adds.map((a) => a.ttlMs),
        adds.map((a) => a.limit?.index ?? null),
        adds.map((a) => a.limit?.below ?? null),
        ...ownedIndexArrays(adds),
      ],
    );
    const written = new Set(rows.map((row) => Number(row.n)));
    return adds.map((_, n) => written.has(n + 1));
  };

  return { one: addOne, many: addMany };
}
