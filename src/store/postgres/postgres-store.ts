import pg from "pg";
import { integerOption } from "../../util/options.js";
import { bounded, redact } from "../bounded.js";
import { listenPostgres, postgresChannel } from "../feed/postgres-feed.js";
import { createPostgresNotifier } from "../feed/postgres-notifier.js";
import { sharedFeed } from "../feed/shared-feed.js";
import { addStatements, rowsOfAdd } from "./add-statements.js";
import { rowsOfSwap, turnBatches } from "./turn-batches.js";
import { indexArrays, swapStatements } from "./swap-statements.js";
import type { IndexChange, Notice, Store } from "../store.js";
import { StoreError } from "../store.js";

/** The part of a node-postgres pool (or client) the store uses. */
export interface PostgresQueryable {
  query(text: string, values?: unknown[]): Promise<{ rows: Array<Record<string, unknown>>; rowCount: number | null }>;
}

/** Options of `createPostgresStore`. */
export interface PostgresStoreOptions {
  /** A node-postgres `Pool` you own (the store never ends it), or… */
  pool?: PostgresQueryable;
  /** …a connection string (`postgres://user@host:5432/db`) the store makes a pool for and owns. */
  connectionString?: string;
  /** The schema the store's tables live in (created if absent). Default `public`. */
  schema?: string;
  /** Prefix of the store's two table names (`<prefix>kv`, `<prefix>due`). Default `mcp_yield_`. */
  tablePrefix?: string;
  /**
   * Time limit of every operation, waiting for a connection included. Past it the operation fails
   * with `StoreError("store_unavailable")`: a request then gets a clear error, never a hang. On a
   * pool the store makes, the server also cancels a statement past it. Default 1000 ms.
   */
  timeoutMs?: number;
  /**
   * Create the schema and tables on first use (default `true`). With `false` they must exist:
   * create them with the statements `postgresStoreSchema()` returns (a migration of your own).
   */
  createTables?: boolean;
  /** Size of the pool the store makes from `connectionString`. Default 10. */
  maxConnections?: number;
  /** How often expired rows are deleted (they are invisible from the moment they expire). Default 60 s. */
  purgeEveryMs?: number;
  /**
   * Told once when the pool the store makes cannot have the server's own statement timeout: a
   * connection pooler in between (PgBouncer, in any pool mode) refuses the startup parameters
   * that set it, so the store connects without them — `timeoutMs` still bounds every operation
   * on this side. Default: `console.warn`.
   */
  onWarning?: (message: string) => void;
}

/** PgBouncer (and other poolers) refuse startup parameters they do not track: 08P01 "unsupported startup parameter". */
const refusesStartupParameters = (error: unknown): boolean => {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  return cause?.code === "08P01" && /unsupported startup parameter/i.test(String(cause.message));
};

const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,40}$/;
// The server's clock in epoch milliseconds: every instance measures expiry on the same clock.
const NOW = "(floor(extract(epoch from clock_timestamp()) * 1000))::bigint";

function names(options: Pick<PostgresStoreOptions, "schema" | "tablePrefix">) {
  const schema = options.schema ?? "public";
  const prefix = options.tablePrefix ?? "mcp_yield_";
  if (!NAME.test(schema)) throw new TypeError(`createPostgresStore: schema must be a plain identifier ([A-Za-z_][A-Za-z0-9_]*, ≤ 41 characters), got ${JSON.stringify(schema)}`);
  if (!NAME.test(prefix + "x")) throw new TypeError(`createPostgresStore: tablePrefix must be plain identifier characters, got ${JSON.stringify(prefix)}`);
  return { schema, kv: `"${schema}"."${prefix}kv"`, due: `"${schema}"."${prefix}due"`, prefix };
}

/**
 * The statements that create the store's schema and tables (idempotent): for a migration tool,
 * when the store runs with `createTables: false`.
 */
export function postgresStoreSchema(options: Pick<PostgresStoreOptions, "schema" | "tablePrefix"> = {}): string[] {
  const { schema, kv, due, prefix } = names(options);
  return [
    `CREATE SCHEMA IF NOT EXISTS "${schema}"`,
    // Values and their expiry (server clock, epoch ms). An expired row is absent to every read and
    // replaced by a write; the store deletes such rows now and then.
    `CREATE TABLE IF NOT EXISTS ${kv} (key text COLLATE "C" PRIMARY KEY, value text NOT NULL, expires_at bigint NOT NULL)`,
    `CREATE INDEX IF NOT EXISTS "${prefix}kv_expires" ON ${kv} (expires_at)`,
    // Due-time indexes (the sweeper's leases and wake times, task lists): a member per index.
    `CREATE TABLE IF NOT EXISTS ${due} (idx text COLLATE "C" NOT NULL, member text COLLATE "C" NOT NULL, at double precision NOT NULL, PRIMARY KEY (idx, member))`,
    `CREATE INDEX IF NOT EXISTS "${prefix}due_at" ON ${due} (idx, at, member)`,
  ];
}

/** What a PostgreSQL error says is wrong with the setup (no repeat helps), naming the fix; `undefined` for anything else. */
function misconfiguredPostgres(error: unknown): string | undefined {
  const code = (error as { code?: unknown })?.code;
  if (code === "28000" || code === "28P01") return "the user, its password or pg_hba.conf refuses this connection";
  if (code === "3D000") return "no such database: create it, or fix the connection string";
  if (code === "42501") return "the user lacks a privilege on the store's schema or tables (CREATE on the schema to make them, then SELECT, INSERT, UPDATE, DELETE)";
  if (code === "3F000") return "no such schema: create it, or fix the schema option";
  return undefined;
}

/**
 * A store on PostgreSQL, shared by every instance pointed at it: two tables, each operation one
 * statement (compare-and-swap is an `UPDATE … WHERE value = expected`, atomic under the row lock;
 * add-if-absent and increment are `INSERT … ON CONFLICT`), expiry on the server's clock. An
 * unreachable, closed or slow server fails the operation within `timeoutMs` with
 * `StoreError("store_unavailable")`.
 */
export async function createPostgresStore(options: PostgresStoreOptions): Promise<Store> {
  const timeoutMs = integerOption("timeoutMs", options.timeoutMs, 1000);
  const purgeEveryMs = integerOption("purgeEveryMs", options.purgeEveryMs, 60_000);
  const { kv, due, schema, prefix } = names(options);
  /** A notify channel of this store's (schema and table prefix): stores in other schemas of the database hear none of it. */
  const channelOf = (channel: string) => postgresChannel(`${schema}_${prefix}`, channel);
  if ((options.pool === undefined) === (options.connectionString === undefined)) throw new TypeError("createPostgresStore: give exactly one of pool or connectionString");
  const maxConnections = integerOption("maxConnections", options.maxConnections, 10);
  const makePool = (serverTimeouts: boolean) => {
    const made = new pg.Pool({
      connectionString: options.connectionString!,
      max: maxConnections,
      connectionTimeoutMillis: timeoutMs,
      // The server gives up on a statement past the limit too, so a write the caller was told
      // failed does not land much later — set at connection start, the one way that leaves no
      // session state behind (a pooler that refuses it gets a pool without: see `onWarning`).
      ...(serverTimeouts ? { statement_timeout: timeoutMs, idle_in_transaction_session_timeout: timeoutMs * 10 } : {}),
    });
    // A pooled connection the server closes emits "error" on the pool; unheard, it would crash the process.
    made.on("error", () => {});
    return made;
  };
  let owned: pg.Pool | undefined;
  let pool: PostgresQueryable;
  if (options.pool !== undefined) {
    pool = options.pool;
  } else {
    owned = makePool(true);
    pool = owned as unknown as PostgresQueryable;
  }
  const where = options.connectionString !== undefined ? ` at ${redact(options.connectionString)}` : "";
  const query = (what: string, text: string, values: unknown[]) => bounded(pool.query(text, values), timeoutMs, `PostgreSQL${where}`, what, misconfiguredPostgres);

  try {
    if (owned !== undefined) {
      // The first connection tells whether a pooler sits in between that refuses the server's
      // timeouts as startup parameters (PgBouncer's default configuration, any pool mode).
      await query("connecting", "SELECT 1", []).catch(async (error: unknown) => {
        if (!refusesStartupParameters(error)) throw error;
        await owned?.end().catch(() => {});
        owned = makePool(false);
        pool = owned as unknown as PostgresQueryable;
        (options.onWarning ?? console.warn)(
          `mcp-yield: PostgreSQL${where} refuses startup parameters (a connection pooler such as PgBouncer): connected without the server's statement_timeout; timeoutMs (${timeoutMs} ms) still bounds every operation here. For the server-side limit too, set PgBouncer's query_timeout, or ALTER ROLE … SET statement_timeout.`,
        );
      });
    }
    if (options.createTables !== false) {
      // One instance creates the tables while others wait (CREATE … IF NOT EXISTS alone can race).
      const statements = postgresStoreSchema(options);
      await query(
        "creating the store's tables",
        `DO $$ BEGIN PERFORM pg_advisory_xact_lock(hashtext('mcp-yield-store-schema')); ${statements.map((s) => `EXECUTE ${quote(s)};`).join(" ")} END $$`,
        [],
      );
    } else {
      await query("checking the store's tables", `SELECT 1 FROM ${kv}, ${due} LIMIT 1`, []).catch((error: unknown) => {
        // 42P01: no such table — a configuration mistake, not an unavailable server.
        if ((error as { cause?: { code?: string } }).cause?.code === "42P01")
          throw new Error(
            `PostgreSQL has no mcp-yield store in schema "${options.schema ?? "public"}" (tables ${kv}, ${due}): no server has used it yet, or the schema or table prefix is not the servers' one`,
          );
        throw error;
      });
    }
  } catch (error) {
    await owned?.end().catch(() => {});
    throw error;
  }

  const ms = (ttlMs: number) => integerOption("ttlMs", Math.ceil(ttlMs), 1);
  // PostgreSQL text cannot hold NUL; refused clearly rather than failing as "unavailable".
  const text = (what: string, value: string) => {
    if (value.includes("\u0000")) throw new TypeError(`the PostgreSQL store cannot keep a ${what} with a NUL character`);
    return value;
  };
  let purging: Promise<unknown> | undefined;
  const purge = setInterval(() => {
    purging ??= query("deleting expired rows", `DELETE FROM ${kv} WHERE key IN (SELECT key FROM ${kv} WHERE expires_at <= ${NOW} LIMIT 5000 FOR UPDATE SKIP LOCKED)`, [])
      .catch(() => {})
      .finally(() => (purging = undefined));
  }, purgeEveryMs);
  purge.unref?.();

  // Notices go out once their write committed, many in one statement (feed/postgres-notifier.ts).
  const notifier = createPostgresNotifier((channels, payloads) =>
    query("notify", "SELECT pg_notify(n.channel, n.payload) FROM unnest($1::text[], $2::text[]) AS n(channel, payload)", [channels, payloads]),
  );
  /** `notice`, announced if the write it is for `replaced`; `replaced` either way. */
  const announced = (replaced: boolean, notice: Notice | undefined): boolean => {
    if (replaced && notice !== undefined) notifier.publish(channelOf(notice.channel), text("notice", notice.message));
    return replaced;
  };

  const statements = swapStatements({ query, kv, due, now: NOW });
  const swaps = turnBatches(statements.one, statements.many, rowsOfSwap);
  const starts = addStatements({ query, kv, due, now: NOW, gatedIndexChanges: statements.gatedIndexChanges, gatedIndexChangesOfMany: statements.gatedIndexChangesOfMany });
  const adds = turnBatches(starts.one, starts.many, rowsOfAdd);
  const swapIndexed = async (key: string, expected: string, value: string, ttlMs: number, notice: Notice | undefined, changes: readonly IndexChange[]) => {
    const checked = { key, expected, value: text("value", value), ttlMs: ms(ttlMs), changes };
    // No stored value holds a NUL (text refuses it), so such an expected value is never there.
    return announced(!expected.includes("\u0000") && (await swaps.ask(checked)), notice);
  };

  const getMany = async (keys: readonly string[]): Promise<Array<string | undefined>> => {
    if (keys.length === 0) return [];
    const { rows } = await query("getMany", `SELECT key, value FROM ${kv} WHERE key = ANY($1::text[]) AND expires_at > ${NOW}`, [keys]);
    const found = new Map(rows.map((row) => [String(row.key), String(row.value)]));
    return keys.map((key) => found.get(key));
  };
  // Reads asked for in one turn go as one statement too (the first frames of the callers a burst
  // of ends wakes, a sweep's records): a read of one key alone is the statement it always was.
  const reads = turnBatches(async (key: string) => {
    const { rows } = await query("get", `SELECT value FROM ${kv} WHERE key = $1 AND expires_at > ${NOW}`, [key]);
    return rows.length > 0 ? String(rows[0]!.value) : undefined;
  }, getMany);

  return {
    get: (key) => reads.ask(key),
    getMany,
    async add(key, value, ttlMs) {
      // Absent or expired: written. The conflict branch updates only an expired row.
      const { rowCount } = await query(
        "add",
        `INSERT INTO ${kv} AS t (key, value, expires_at) VALUES ($1, $2, ${NOW} + $3) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at WHERE t.expires_at <= ${NOW}`,
        [text("key", key), text("value", value), ms(ttlMs)],
      );
      return rowCount === 1;
    },
    swap: (key, expected, value, ttlMs, notice) => swapIndexed(key, expected, value, ttlMs, notice, []),
    addIndexed: async (key, value, ttlMs, changes, limit) => adds.ask({ key: text("key", key), value: text("value", value), ttlMs: ms(ttlMs), changes, limit }),
    swapIndexed,
    // One LISTEN connection per channel for every instance on this store object (feed/shared-feed.ts).
    listen: sharedFeed(async (channel, listener) => {
      const config = options.connectionString !== undefined ? { connectionString: options.connectionString } : (options.pool as { options?: pg.ClientConfig }).options;
      const warn = options.onWarning ?? ((message: string) => console.warn(message));
      if (config === undefined) {
        warn("mcp-yield: the PostgreSQL pool given to the store is not a node-postgres Pool (no options to open a LISTEN connection with): tasks are found by polling only (sweepMs)");
        return undefined;
      }
      const connect = async () => {
        const client = new pg.Client({ ...config, connectionTimeoutMillis: timeoutMs });
        client.on("error", () => {});
        await bounded(client.connect(), timeoutMs, `PostgreSQL${where}`, "connecting to listen", misconfiguredPostgres).catch(async (error: unknown) => {
          await client.end().catch(() => {});
          throw error;
        });
        return client;
      };
      const notify = (name: string, payload: string) => query("notify", "SELECT pg_notify($1, $2)", [name, payload]);
      return listenPostgres({ connect, notify, timeoutMs, warn }, channelOf(channel), listener);
    }),
    async set(key, value, ttlMs) {
      await query("set", `INSERT INTO ${kv} (key, value, expires_at) VALUES ($1, $2, ${NOW} + $3) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at`, [
        text("key", key),
        text("value", value),
        ms(ttlMs),
      ]);
    },
    async delete(key) {
      await query("delete", `DELETE FROM ${kv} WHERE key = $1`, [key]);
    },
    async incr(key, delta, ttlMs) {
      if (!Number.isSafeInteger(delta)) throw new TypeError(`incr: delta must be a safe integer, got ${delta}`);
      // An expired counter starts again from 0 with a new time to live; a live one keeps its expiry.
      const { rows } = await query(
        "incr",
        `INSERT INTO ${kv} AS t (key, value, expires_at) VALUES ($1, $2::bigint::text, ${NOW} + $3)
         ON CONFLICT (key) DO UPDATE SET
           value = CASE WHEN t.expires_at <= ${NOW} THEN EXCLUDED.value ELSE (t.value::bigint + $2::bigint)::text END,
           expires_at = CASE WHEN t.expires_at <= ${NOW} THEN EXCLUDED.expires_at ELSE t.expires_at END
         RETURNING value`,
        [key, delta, ms(ttlMs)],
      );
      return Number(rows[0]!.value);
    },
    async schedule(index, member, atMs) {
      await query("schedule", `INSERT INTO ${due} (idx, member, at) VALUES ($1, $2, $3) ON CONFLICT (idx, member) DO UPDATE SET at = EXCLUDED.at`, [index, member, atMs]);
    },
    async unschedule(index, member) {
      await query("unschedule", `DELETE FROM ${due} WHERE idx = $1 AND member = $2`, [index, member]);
    },
    async index(changes) {
      if (changes.length === 0) return;
      // One statement: the removals in a data-modifying CTE, the additions as one upsert.
      await query(
        "index",
        `WITH gone AS (DELETE FROM ${due} d USING unnest($4::text[], $5::text[]) AS r(idx, member) WHERE d.idx = r.idx AND d.member = r.member)
         INSERT INTO ${due} (idx, member, at) SELECT * FROM unnest($1::text[], $2::text[], $3::float8[]) ON CONFLICT (idx, member) DO UPDATE SET at = EXCLUDED.at`,
        indexArrays(changes),
      );
    },
    async due(index, nowMs, limit) {
      // Several sweepers may read the same members: the task record's compare-and-swap decides
      // which one takes a task over, so no row lock is held here.
      const { rows } = await query("due", `SELECT member FROM ${due} WHERE idx = $1 AND at <= $2 ORDER BY at, member LIMIT $3`, [index, nowMs, limit]);
      return rows.map((r) => String(r.member));
    },
    async size(index) {
      const { rows } = await query("size", `SELECT count(*)::int AS n FROM ${due} WHERE idx = $1`, [index]);
      return Number(rows[0]?.n ?? 0);
    },
    async members(index, limit, after) {
      // A row comparison the (idx, at, member) index answers directly: no rows skipped to reach a page.
      const { rows } =
        after === undefined
          ? await query("members", `SELECT member, at FROM ${due} WHERE idx = $1 ORDER BY at, member LIMIT $2`, [index, limit])
          : await query("members", `SELECT member, at FROM ${due} WHERE idx = $1 AND (at, member) > ($2, $3) ORDER BY at, member LIMIT $4`, [index, after.at, after.member, limit]);
      return rows.map((r) => ({ member: String(r.member), at: Number(r.at) }));
    },
    async time() {
      const { rows } = await query("time", `SELECT ${NOW} AS now`, []);
      const now = Number(rows[0]?.now);
      if (!Number.isFinite(now)) throw new StoreError("store_unavailable", "PostgreSQL answered the clock query with something else than a number");
      return now;
    },
    async close() {
      swaps.flush();
      reads.flush();
      adds.flush();
      clearInterval(purge);
      await purging;
      await notifier.drained();
      await owned?.end();
    },
  };
}

/** `text` as a dollar-quoted SQL string literal (the statements are ours; no `$q$` inside them). */
function quote(text: string): string {
  return `$q$${text}$q$`;
}
