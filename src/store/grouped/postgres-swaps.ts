import type { IndexChange } from "../store.js";

// store/grouped/postgres-swaps.ts owns the PostgreSQL store's compare-and-swaps and the index
// changes written with them: one statement each while few are out, and past that the swaps that
// wait go together, one statement and one commit for many. A swap's cost on the client is mostly
// its round trip's socket write (a wake-up's profile: 41 % in writev), and on the server its
// commit. On a 2-core machine (16 writers, a pool of 10, 600-byte values): 1,870–2,412 single-row
// swaps a second against 9,411–10,149 rows a second eight to a statement, the client's CPU per
// row 72–150 µs against 19–21; 3,000 tasks due at one moment on two instances woke at 466–584 a
// second one swap a statement, 886–1,086 grouped (bench:wakeups, five runs each, alternating).
//
// Invariants:
// 1. A swap in a group does exactly what it would alone: it writes only if its row holds the
//    expected value and has not expired, and its index changes land only if it wrote.
// 2. A group holds no key twice and no index entry twice, and locks its rows in key order
//    before it writes: two groups (of this instance or another) never wait for each other in a
//    cycle, and a swap alone holds one row.
// 3. Nothing waits for a group to fill: a swap goes alone while fewer than `maxInFlight` swap
//    statements are out, and those queued go together as soon as one of them ends — whatever
//    else the pool is doing (counting every statement of the store, reads waiting for the pool
//    held swaps back past their leases: steps ran twice in the fault suite).

/** One compare-and-swap and the index changes that go with it. */
export interface SwapRequest {
  key: string;
  expected: string;
  value: string;
  ttlMs: number;
  changes: readonly IndexChange[];
}

interface Queued {
  request: SwapRequest;
  /** Fails the swap once it has waited the store's time limit (cleared when it is sent). */
  timer: ReturnType<typeof setTimeout>;
  resolve(written: boolean): void;
  reject(error: unknown): void;
}

/** Most swaps in one statement: beyond it the statement's own size outweighs the commit saved. */
const MAX_GROUP = 64;

export interface GroupedSwapParts {
  /** The store's two tables, schema-qualified and quoted. */
  kv: string;
  due: string;
  /** SQL for the server's clock in epoch milliseconds. */
  now: string;
  /** Run a statement of the store (bounded in time). */
  query(what: string, text: string, values: unknown[]): Promise<{ rows: Array<Record<string, unknown>>; rowCount: number | null }>;
  /** Swap statements out at once (alone or grouped) before swaps queue. */
  maxInFlight: number;
  /** A swap still queued this long fails as the store's operations do past their time limit (`late()`). */
  timeoutMs: number;
  late(): Error;
}

/** The swaps of one store. */
export function createGroupedSwaps(parts: GroupedSwapParts) {
  const queue: Queued[] = [];
  let inFlight = 0;
  const statement = groupStatement(parts);
  const { kv, due, now, query } = parts;
  // A concurrent swap waits for the row lock, then re-checks the value: one of them wins.
  const update = `UPDATE ${kv} SET value = $3, expires_at = ${now} + $4 WHERE key = $1 AND value = $2 AND expires_at > ${now}`;
  const withIndexes = `WITH w AS (${update} RETURNING 1), ${gatedIndexChanges(due, 5)} SELECT 1 FROM w`;
  /** A swap alone: one row, its index changes in the same statement. */
  const alone = ({ key, expected, value, ttlMs, changes }: SwapRequest) =>
    sending(changes.length === 0 ? query("swap", update, [key, expected, value, ttlMs]) : query("swap", withIndexes, [key, expected, value, ttlMs, ...indexArrays(changes)])).then(
      (r) => r.rowCount === 1,
    );
  /** A swap statement out: counted until it ends, and then what waits goes. */
  function sending<T>(out: Promise<T>): Promise<T> {
    inFlight++;
    return out.finally(() => {
      inFlight--;
      flush();
    });
  }

  function flush(): void {
    if (queue.length === 0 || inFlight >= parts.maxInFlight) return;
    const keys = new Set<string>();
    const entries = new Set<string>();
    const group: Queued[] = [];
    for (let i = 0; i < queue.length && group.length < MAX_GROUP; ) {
      const queued = queue[i]!;
      const touched = queued.request.changes.map((c) => `${c.index}\u0000${c.member}`);
      if (keys.has(queued.request.key) || touched.some((t) => entries.has(t))) {
        i++;
        continue;
      }
      keys.add(queued.request.key);
      for (const t of touched) entries.add(t);
      clearTimeout(queued.timer);
      group.push(queued);
      queue.splice(i, 1);
    }
    if (group.length === 0) return;
    const sent =
      group.length === 1
        ? alone(group[0]!.request).then((written) => [written])
        : sending(parts.query("swap", statement, groupValues(group.map((q) => q.request)))).then(({ rows }) => {
            const wrote = new Set(rows.map((r) => Number(r.n)));
            return group.map((_, i) => wrote.has(i + 1));
          });
    sent.then(
      (written) => {
        for (const [i, q] of group.entries()) q.resolve(written[i]!);
      },
      (error: unknown) => {
        for (const q of group) q.reject(error);
      },
    );
  }

  return {
    swap(request: SwapRequest): Promise<boolean> {
      if (queue.length === 0 && inFlight < parts.maxInFlight) return alone(request);
      return new Promise<boolean>((resolve, reject) => {
        const queued: Queued = {
          request,
          resolve,
          reject,
          timer: setTimeout(() => {
            const at = queue.indexOf(queued);
            if (at >= 0) queue.splice(at, 1), reject(parts.late());
          }, parts.timeoutMs),
        };
        queue.push(queued);
      });
    },
    /** Swaps waiting (for tests and close). */
    get waiting(): number {
      return queue.length;
    },
  };
}

/**
 * The statement of a group: its rows locked in key order (a count forces every row's lock
 * before the update reads them), each written if it holds its expected value, each swap's
 * index changes gated on its own write by its ordinal (`n`), which the statement returns.
 */
function groupStatement({ kv, due, now }: Pick<GroupedSwapParts, "kv" | "due" | "now">): string {
  return `WITH i AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) WITH ORDINALITY AS i(key, expected, value, ttl, n)),
    locked AS (SELECT t.key FROM ${kv} t WHERE t.key = ANY($1::text[]) ORDER BY t.key FOR UPDATE),
    w AS (UPDATE ${kv} t SET value = i.value, expires_at = ${now} + i.ttl FROM i
          WHERE t.key = i.key AND t.value = i.expected AND t.expires_at > ${now} AND (SELECT count(*) FROM locked) >= 0 RETURNING i.n),
    gone AS (DELETE FROM ${due} d USING unnest($5::bigint[], $6::text[], $7::text[]) AS r(n, idx, member) WHERE d.idx = r.idx AND d.member = r.member AND r.n IN (SELECT n FROM w)),
    added AS (INSERT INTO ${due} (idx, member, at) SELECT a.idx, a.member, a.at FROM unnest($8::bigint[], $9::text[], $10::text[], $11::float8[]) AS a(n, idx, member, at)
              WHERE a.n IN (SELECT n FROM w) ON CONFLICT (idx, member) DO UPDATE SET at = EXCLUDED.at)
    SELECT n FROM w`;
}

/** The eleven arrays the group's statement unnests. */
function groupValues(requests: readonly SwapRequest[]): unknown[] {
  const gone: [number[], string[], string[]] = [[], [], []];
  const added: [number[], string[], string[], number[]] = [[], [], [], []];
  requests.forEach((r, i) => {
    for (const c of r.changes) {
      if (c.at === null) gone[0].push(i + 1), gone[1].push(c.index), gone[2].push(c.member);
      else added[0].push(i + 1), added[1].push(c.index), added[2].push(c.member), added[3].push(c.at);
    }
  });
  return [requests.map((r) => r.key), requests.map((r) => r.expected), requests.map((r) => r.value), requests.map((r) => r.ttlMs), ...gone, ...added];
}

/**
 * Index changes as data-modifying CTEs that act only when the write `w` before them did (each
 * runs whether or not the query reads it; EXISTS gates it on w): one statement, one commit.
 * Their five parameters (`indexArrays`) start at `$first`.
 */
export function gatedIndexChanges(due: string, first: number): string {
  const [idx, member, at, goneIdx, goneMember] = [0, 1, 2, 3, 4].map((i) => `$${first + i}`);
  return `gone AS (DELETE FROM ${due} d USING unnest(${goneIdx}::text[], ${goneMember}::text[]) AS r(idx, member) WHERE d.idx = r.idx AND d.member = r.member AND EXISTS (SELECT 1 FROM w)),
         added AS (INSERT INTO ${due} (idx, member, at) SELECT a.idx, a.member, a.at FROM unnest(${idx}::text[], ${member}::text[], ${at}::float8[]) AS a(idx, member, at) WHERE EXISTS (SELECT 1 FROM w) ON CONFLICT (idx, member) DO UPDATE SET at = EXCLUDED.at)`;
}

/** Index changes as the five arrays the statements unnest: additions (index, member, time), then removals (index, member). */
export function indexArrays(changes: readonly IndexChange[]): [string[], string[], number[], string[], string[]] {
  const adds = changes.filter((c) => c.at !== null);
  const removes = changes.filter((c) => c.at === null);
  return [adds.map((c) => c.index), adds.map((c) => c.member), adds.map((c) => c.at!), removes.map((c) => c.index), removes.map((c) => c.member)];
}
