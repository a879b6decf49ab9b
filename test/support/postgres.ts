import pg from "pg";

/**
 * PostgreSQL for tests: the machine's server (MCP_YIELD_TEST_POSTGRES_URL, default
 * postgres://postgres@127.0.0.1:5432/test), each run in a schema of its own. Under CI=true a
 * missing server is a failure, never a skip; locally the Postgres suites skip and say why.
 */
export const POSTGRES_URL = process.env.MCP_YIELD_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const START = "pg_ctlcluster 15 main start";

async function reachable(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
  client.on("error", () => {});
  try {
    await client.connect();
    await client.query("SELECT 1");
    await client.end();
    return true;
  } catch {
    await client.end().catch(() => {});
    return false;
  }
}

export const postgresAvailable: boolean = await reachable(POSTGRES_URL);
if (!postgresAvailable) {
  if (process.env.CI === "true") throw new Error(`CI=true and no PostgreSQL at ${POSTGRES_URL}: the Postgres tests must run. Start it: ${START}`);
  console.warn(`\n[mcp-yield tests] PostgreSQL tests SKIPPED: no server at ${POSTGRES_URL}. Start one with:\n  ${START}\n(under CI=true a missing PostgreSQL is a failure)\n`);
}

/** A schema name no other run or test file uses (an identifier: letters, digits, underscores). */
export const testSchema = (name: string) => `mcpy_${name.replace(/[^A-Za-z0-9]/g, "_")}_${process.pid}_${Date.now().toString(36)}`.toLowerCase();

/** Drop a test's schema and everything in it (tests clean up after themselves). */
export async function dropSchema(schema: string, url = POSTGRES_URL): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
}
