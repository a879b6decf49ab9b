import { mkdtempSync, rmSync } from "node:fs";
import type { ChildProcess } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createRedisStore } from "mcp-yield/redis";
import { freePort, startProcess, stopProcess } from "../support/processes.js";
import { redisClusterAvailable } from "../support/redis-cluster.js";

// Issue 55, point 3: the Redis store looks at its server's configuration when it is made and
// says what breaks exactly-once — eviction, no persistence, snapshots only — naming the setting;
// a server that forbids CONFIG (as managed services do) is not looked at, and works.

const started: Array<{ child: ChildProcess; dir: string }> = [];
afterAll(async () => {
  for (const s of started) {
    await stopProcess(s.child, "SIGKILL");
    rmSync(s.dir, { recursive: true, force: true });
  }
});

/** A redis-server of its own on a free port, with `args`. */
async function server(...args: string[]): Promise<string> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "mcp-yield-redis-config-"));
  const { child } = await startProcess("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, ...args], {
    cwd: dir,
    env: process.env,
    ready: /Ready to accept connections/,
    what: `redis-server ${args.join(" ")}`,
  });
  started.push({ child, dir });
  return `redis://127.0.0.1:${port}`;
}

async function warningsOf(url: string): Promise<string[]> {
  const warnings: string[] = [];
  const store = await createRedisStore({ url, onWarning: (m) => warnings.push(m) });
  expect(await store.add("k", "v", 1000)).toBe(true); // the store works whatever it said
  await store.close();
  return warnings;
}

describe.skipIf(!redisClusterAvailable)("the Redis store checks its server's configuration", () => {
  it("says nothing of a server that keeps every write (appendonly, fsync always) and evicts nothing", async () => {
    expect(await warningsOf(await server("--appendonly", "yes", "--appendfsync", "always", "--maxmemory-policy", "noeviction"))).toEqual([]);
  });

  it("names maxmemory-policy noeviction for a server that evicts, and appendonly for one that only snapshots", async () => {
    const warnings = await warningsOf(await server("--appendonly", "no", "--save", "3600 1", "--maxmemory-policy", "allkeys-lru"));
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/maxmemory-policy allkeys-lru: .* Set maxmemory-policy noeviction/);
    expect(warnings[1]).toMatch(/persists only by snapshots .* Set appendonly yes/);
  });

  it('says a server keeps nothing on disk (appendonly no, save "")', async () => {
    const warnings = await warningsOf(await server("--appendonly", "no", "--save", ""));
    expect(warnings).toEqual([expect.stringMatching(/keeps nothing on disk \(appendonly no, save ""\): a restart loses every task/)]);
  });

  it("skips the check where CONFIG is forbidden (a managed service), and works", async () => {
    expect(await warningsOf(await server("--appendonly", "no", "--save", "", "--rename-command", "CONFIG", ""))).toEqual([]);
  });

  it("checkConfig: false looks at nothing", async () => {
    const warnings: string[] = [];
    const store = await createRedisStore({ url: await server("--save", ""), checkConfig: false, onWarning: (m) => warnings.push(m) });
    await store.close();
    expect(warnings).toEqual([]);
  });
});
