import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "redis";

/**
 * Redis for tests: the machine's server (MCP_YIELD_TEST_REDIS_URL, default 127.0.0.1:6379),
 * with a key prefix of this run's own. Under CI=true a missing server is a failure, never a
 * skip; locally the Redis suites skip and say why.
 */
export const REDIS_URL = process.env.MCP_YIELD_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const START = `redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no`;

async function reachable(url: string): Promise<boolean> {
  const client = createClient({ url, socket: { connectTimeout: 500, reconnectStrategy: false } });
  client.on("error", () => {});
  try {
    await client.connect();
    await client.ping();
    await client.close();
    return true;
  } catch {
    await client.destroy();
    return false;
  }
}

export const redisAvailable: boolean = await reachable(REDIS_URL);
if (!redisAvailable) {
  if (process.env.CI === "true") throw new Error(`CI=true and no Redis at ${REDIS_URL}: the Redis tests must run. Start one: ${START}`);
  console.warn(`\n[mcp-yield tests] Redis tests SKIPPED: no Redis server at ${REDIS_URL}. Start one with:\n  ${START}\n(under CI=true a missing Redis is a failure)\n`);
}

/** A key prefix no other run or test file uses. */
export const testPrefix = (name: string) => `mcpy-test:${name}:${process.pid}:${Date.now().toString(36)}:`;

/** Delete every key under `prefix` (tests clean up after themselves). */
export async function dropPrefix(prefix: string, url = REDIS_URL): Promise<void> {
  const client = createClient({ url });
  client.on("error", () => {});
  await client.connect();
  for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) if (keys.length > 0) await client.del(keys);
  await client.close();
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });
}

/**
 * A private redis-server on a free port, for tests that stop and restart it. `durable` keeps an
 * append-only file written on every command, so what was written survives a kill.
 */
export async function startPrivateRedis(options: { durable?: boolean } = {}): Promise<{ url: string; port: number; stop(): Promise<void>; restart(): Promise<void> }> {
  const port = await freePort();
  const dir = options.durable ? mkdtempSync(join(tmpdir(), "mcp-yield-redis-")) : undefined;
  const persistence = dir ? ["--appendonly", "yes", "--appendfsync", "always", "--dir", dir] : ["--appendonly", "no"];
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", ...persistence], { stdio: "ignore" });
    for (let i = 0; i < 100; i++) {
      if (await reachable(`redis://127.0.0.1:${port}`)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`redis-server did not start on port ${port}`);
  };
  const stop = async () => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child!.once("exit", r));
    child.kill("SIGKILL");
    await exited;
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop,
    restart: async () => {
      await stop();
      await start();
    },
  };
}
