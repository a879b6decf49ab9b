// What a bench's data takes in the store: the bytes under a Redis prefix (MEMORY USAGE of each
// key, which counts Redis's own overhead per key) or in a PostgreSQL schema (its tables with
// their indexes and TOAST). A bench reads it before and after writing, and divides the change.
import pg from "pg";
import { createClient } from "redis";

/** Bytes Redis holds for the keys under `prefix`. */
export async function redisBytes(url: string, prefix: string): Promise<number> {
  const c = createClient({ url });
  await c.connect();
  let total = 0;
  for await (const keys of c.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) {
    const sizes = await Promise.all(keys.map((key) => c.memoryUsage(key)));
    for (const size of sizes) total += size ?? 0;
  }
  await c.quit();
  return total;
}

/** Bytes PostgreSQL holds for the tables of `schema`, indexes and TOAST included. */
export async function postgresBytes(url: string, schema: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ bytes: string | null }>(
      "SELECT sum(pg_total_relation_size(c.oid))::text AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'",
      [schema],
    );
    return Number(rows[0]?.bytes ?? 0);
  } finally {
    await client.end();
  }
}
