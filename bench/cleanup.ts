// What a bench leaves in the machine's Redis and PostgreSQL, taken out when it ends.
import pg from "pg";
import { createClient } from "redis";

/** Delete every key under `prefix` on the Redis at `url`. */
export async function dropRedisPrefix(url: string, prefix: string): Promise<void> {
  const c = createClient({ url });
  await c.connect();
  for await (const keys of c.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) if (keys.length > 0) await c.del(keys);
  await c.quit();
}

/** Drop `schema` and everything in it on the PostgreSQL at `url`. */
export async function dropPostgresSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
}
