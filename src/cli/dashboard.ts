import { startDashboard } from "../dashboard/server.js";
import { parseCommand } from "./args.js";
import { openStore, STORE_OPTIONS } from "./store.js";

export const dashboardUsage = `  mcp-yield dashboard STORE [--port P] [--host H] [--allow-actions]
                                     a local web page over the servers' store: the task list with filters and
                                     live status, each task's journal as a timeline; cancel, retry and fail only
                                     with --allow-actions. Listens on 127.0.0.1:4180 unless told otherwise
                                     (--port 0: a free port); it has no login — keep it on a trusted host
    store: as for tasks (--redis URL | --redis-cluster URL,URL... | --postgres URL, or the environment)`;

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

/**
 * `mcp-yield dashboard …`: serve until `stop` resolves (by default the first SIGINT or
 * SIGTERM); returns the exit code. The first line printed is the page's address.
 */
export async function dashboardCommand(
  args: readonly string[],
  env: Record<string, string | undefined>,
  out: (line: string) => void,
  stop: Promise<unknown> = new Promise((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  }),
): Promise<number> {
  const { values, positionals } = parseCommand(args, { ...STORE_OPTIONS, port: { type: "string" }, host: { type: "string" }, "allow-actions": { type: "boolean" } });
  if (positionals.length > 0) throw new TypeError(`dashboard takes no arguments but options, got ${JSON.stringify(positionals[0])}`);
  const port = values.port === undefined ? 4180 : Number(values.port);
  if (!Number.isSafeInteger(port) || port < 0 || port > 65_535) throw new TypeError(`--port must be a port number (0 for a free one), got ${JSON.stringify(values.port)}`);
  const host = values.host?.trim() || "127.0.0.1";
  const store = await openStore(values, env);
  try {
    const allowActions = values["allow-actions"] === true;
    const dashboard = await startDashboard({ store, host, port, allowActions });
    out(`dashboard: ${dashboard.url} (${allowActions ? "actions allowed: cancel, retry, fail" : "read-only"})`);
    if (!LOOPBACK.has(host)) out(`warning: listening on ${host}, not only this machine — the dashboard has no login`);
    await stop;
    await dashboard.close();
    return 0;
  } finally {
    await store.close();
  }
}
