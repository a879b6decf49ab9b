import { execFile } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { until } from "./instances.js";
import { freePort } from "./processes.js";

/**
 * A PostgreSQL server of a test's own — Debian's binaries, a fresh data directory, trust auth on
 * a free loopback port — for tests that restart the server (the machine's shared one serves the
 * other tests). Run as the postgres user when the tests run as root (PostgreSQL refuses root).
 * Under CI=true a missing binary is a failure.
 */
const BIN = process.env.MCP_YIELD_TEST_PG_BIN ?? "/usr/lib/postgresql/15/bin";
const run = promisify(execFile);

export const privatePostgresAvailable: boolean = existsSync(join(BIN, "pg_ctl")) && existsSync(join(BIN, "initdb"));
if (!privatePostgresAvailable) {
  if (process.env.CI === "true") throw new Error(`CI=true and no PostgreSQL binaries in ${BIN}: the PostgreSQL restart test must run. Install postgresql-15.`);
  console.warn(`\n[mcp-yield tests] PostgreSQL restart tests SKIPPED: no ${BIN}/pg_ctl\n`);
}

export interface PrivatePostgres {
  url: string;
  /** Stop the server (fast shutdown: connections cut) and start it again; resolves once it accepts connections. */
  restart(): Promise<{ downMs: number }>;
  stop(): Promise<void>;
}

/** `args` run as the postgres user (when this process is root) or as itself. */
async function asPostgres(command: string, args: string[]): Promise<string> {
  const root = process.getuid?.() === 0;
  const { stdout } = await run(root ? "runuser" : command, root ? ["-u", "postgres", "--", command, ...args] : args, { timeout: 60_000 });
  return stdout;
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const dir = mkdtempSync(join(tmpdir(), "mcp-yield-pg-"));
  chmodSync(dir, 0o777); // the postgres user makes its data directory in it
  const data = join(dir, "data");
  const port = await freePort();
  const pgCtl = join(BIN, "pg_ctl");
  await asPostgres(join(BIN, "initdb"), ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync"]);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const start = () => asPostgres(pgCtl, ["-D", data, "-o", options, "-w", "-l", join(dir, "log"), "start"]);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const ready = () =>
    until(async () => {
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
      try {
        await client.connect();
        await client.query("SELECT 1");
        return true;
      } catch {
        return undefined;
      } finally {
        await client.end().catch(() => {});
      }
    }, 30_000);
  await start();
  await ready();
  return {
    url,
    async restart() {
      const began = performance.now();
      await asPostgres(pgCtl, ["-D", data, "-m", "fast", "-w", "stop"]);
      await start();
      await ready();
      return { downMs: performance.now() - began };
    },
    async stop() {
      await asPostgres(pgCtl, ["-D", data, "-m", "immediate", "-w", "stop"]).catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
