import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { freePort, startProcess, stopProcess } from "../support/processes.js";
import { deployedStores, exampleServerStores } from "../support/stores.js";

// Issue 55, point 8: the example server says which store its tasks live in — memory, Redis,
// PostgreSQL, a Redis Cluster (MCP_YIELD_REDIS_CLUSTER), PostgreSQL through PgBouncer — so an
// operator sees at a glance that an instance is not on the store the others share.

const root = fileURLToPath(new URL("../..", import.meta.url));
const said: Record<string, string> = { memory: "memory", redis: "Redis", postgres: "PostgreSQL", "redis cluster": "Redis Cluster", "postgres via PgBouncer": "PostgreSQL" };
const kinds: Array<readonly [string, Record<string, string>]> = [["memory", {}], ...exampleServerStores("example-store"), ...(await deployedStores("example-store"))];

describe.each(kinds)("npm start on %s", (name, env) => {
  it("prints the store its tasks live in", async () => {
    const port = await freePort();
    const started = await startProcess(process.execPath, ["--conditions=mcp-yield-source", "--import", "tsx", "examples/server.ts"], {
      cwd: root,
      env: { ...process.env, ...env, PORT: String(port), MCP_YIELD_KEYS: "" },
      ready: /listening on (\S+) \(tasks in ([^)]+)\)/,
      what: `the example server on ${name}`,
    });
    try {
      expect(started.match[1]).toBe(`http://127.0.0.1:${port}/mcp`);
      expect(started.match[2]).toBe(said[name]);
    } finally {
      await stopProcess(started.child);
    }
  });
});
