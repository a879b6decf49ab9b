import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { until } from "./instances.js";
import { POSTGRES_URL, postgresAvailable } from "./postgres.js";
import { freePort, startProcess, stopProcess } from "./processes.js";

/**
 * PgBouncer in front of the test PostgreSQL, as users deploy it: Debian's package, its default
 * configuration but for what it must be told (the database, the port, trust auth as the server
 * has, the pool mode). Under CI=true a missing binary is a failure (`.ci/run` installs it);
 * locally the PgBouncer tests skip and say how to install it.
 */
const BINARY = process.env.MCP_YIELD_TEST_PGBOUNCER ?? "/usr/sbin/pgbouncer";
const INSTALL = "apt-get install -y pgbouncer";

export const pgbouncerAvailable: boolean = postgresAvailable && existsSync(BINARY);
if (!pgbouncerAvailable && postgresAvailable) {
  if (process.env.CI === "true") throw new Error(`CI=true and no PgBouncer at ${BINARY}: the PgBouncer tests must run. Install it: ${INSTALL}`);
  console.warn(`\n[mcp-yield tests] PgBouncer tests SKIPPED: no ${BINARY}. Install it with:\n  ${INSTALL}\n(under CI=true a missing PgBouncer is a failure)\n`);
}

export interface RunningPgBouncer {
  /** The test database through this PgBouncer. */
  url: string;
  stop(): Promise<void>;
}

/** Start a PgBouncer in `mode` on a free loopback port; resolves once it answers a query. */
export async function startPgBouncer(mode: "transaction" | "session"): Promise<RunningPgBouncer> {
  const server = new URL(POSTGRES_URL);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "mcp-yield-pgbouncer-"));
  chmodSync(dir, 0o755); // it drops root for the postgres user, who must still read its files
  const database = server.pathname.slice(1) || "postgres";
  const user = decodeURIComponent(server.username || "postgres");
  writeFileSync(
    join(dir, "pgbouncer.ini"),
    [
      "[databases]",
      `${database} = host=${server.hostname} port=${server.port || 5432} dbname=${database}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "auth_type = trust",
      `auth_file = ${join(dir, "userlist.txt")}`,
      `pool_mode = ${mode}`,
      "",
    ].join("\n"),
    { mode: 0o644 },
  );
  writeFileSync(join(dir, "userlist.txt"), `"${user}" ""\n`, { mode: 0o644 });
  const asRoot = process.getuid?.() === 0;
  const started = await startProcess(BINARY, [...(asRoot ? ["-u", "postgres"] : []), join(dir, "pgbouncer.ini")], { cwd: dir, env: process.env, ready: "spawned", what: `pgbouncer (${mode})` });
  const url = `postgres://${encodeURIComponent(user)}@127.0.0.1:${port}/${database}`;
  try {
    await until(async () => {
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
      client.on("error", () => {});
      try {
        await client.connect();
        await client.query("SELECT 1");
        return true;
      } catch {
        if (started.child.exitCode !== null) throw new Error(`pgbouncer exited: ${started.output()}`);
        return undefined;
      } finally {
        await client.end().catch(() => {});
      }
    }, 15_000);
  } catch (error) {
    await stopProcess(started.child, "SIGKILL");
    throw new Error(`pgbouncer (${mode}) did not answer: ${(error as Error).message}\n${started.output()}`);
  }
  return {
    url,
    stop: async () => {
      await stopProcess(started.child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
